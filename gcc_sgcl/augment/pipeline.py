"""Augmentation pipelines built from an :class:`AugmentConfig`: SGCL's sequence or a baseline's.

SGCL (appendix, "Sequence of augmentations"): after the two random walks (and the optional filter, which the
sampler runs through ``pipeline.filter``): crop each view independently -> align the pair -> per view,
independently, mask | reorder | nothing.

Baselines (``cfg.baseline``, a key of :data:`BASELINES`): a :class:`BaselinePipeline` transforms the query and
the key view, each with its own view transform (GRACE and GCA use different rates for the two views, MVGRL
diffuses only the key view).
"""
from __future__ import annotations

from collections.abc import Callable

import dgl
import numpy as np

from gcc_sgcl.augment.align import Align
from gcc_sgcl.augment.base import Identity, RandomChoice, Registry, ViewTransform, block_repr
from gcc_sgcl.augment.config import AugmentConfig
from gcc_sgcl.augment.crop import paper_crop
from gcc_sgcl.augment.filter import ViewFilter
from gcc_sgcl.augment.gca import gca_view
from gcc_sgcl.augment.grace import grace_view
from gcc_sgcl.augment.graphcl import graphcl_view
from gcc_sgcl.augment.mvgrl import Diffusion, Sparsifier, Threshold, TopK
from gcc_sgcl.augment.spectral_order import Mask, RandomPermute, Reorder

PERMUTE_KINDS: Registry[Callable[[AugmentConfig], ViewTransform]] = Registry("permute_kind")
"""``"spectral"`` -> :class:`Reorder`, ``"random"`` -> :class:`RandomPermute` (the control)."""
PERMUTE_KINDS.register("spectral")(lambda cfg: Reorder(cfg.r_max))
PERMUTE_KINDS.register("random")(lambda cfg: RandomPermute())


class SGCLPipeline:
    """``pipeline(q, k, rng) -> (q, k)``: crop -> align -> mask | reorder | nothing (absent stages: ``None``).

    ``filter`` is not applied here: it selects the candidate node sets before the views exist
    (:meth:`ViewFilter.select`). ``needs_global`` tells the sampler to compute the global embedding ``E_t``
    (for the filter or alignment), ``needs_global_rows`` to store its rows in each view's ``GLOBAL`` feature
    (for alignment only: the filter reads ``E_t`` itself).
    """

    def __init__(
        self,
        filter: ViewFilter | None = None,
        crop: ViewTransform | None = None,
        align: Align | None = None,
        perturb: ViewTransform | None = None,
    ):
        self.filter = filter
        self.crop = crop
        self.align = align
        self.perturb = perturb

    @property
    def needs_global(self) -> bool:
        return self.filter is not None or self.align is not None

    @property
    def needs_global_rows(self) -> bool:
        return self.align is not None

    def __call__(
        self, q: dgl.DGLGraph, k: dgl.DGLGraph, rng: np.random.Generator
    ) -> tuple[dgl.DGLGraph, dgl.DGLGraph]:
        if self.crop is not None:
            q, k = self.crop(q, rng), self.crop(k, rng)
        if self.align is not None:
            q, k = self.align(q, k, rng)
        if self.perturb is not None:
            q, k = self.perturb(q, rng), self.perturb(k, rng)
        return q, k

    def __repr__(self) -> str:
        stages = {"filter": self.filter, "crop": self.crop, "align": self.align, "perturb": self.perturb}
        return block_repr("SGCLPipeline", list(stages.values()), list(stages))


class BaselinePipeline:
    """``pipeline(q, k, rng) -> (query(q, rng), key(k, rng))``: a baseline's view generation on GCC's views.

    Offers the sampler the same hooks as :class:`SGCLPipeline`: no candidate filter, no global embedding.

    >>> BaselinePipeline(Identity(), Identity())
    BaselinePipeline(
        Identity()  # query
        Identity()  # key
    )
    """

    filter = None
    needs_global = False
    needs_global_rows = False

    def __init__(self, query: ViewTransform, key: ViewTransform):
        self.query = query
        self.key = key

    def __call__(
        self, q: dgl.DGLGraph, k: dgl.DGLGraph, rng: np.random.Generator
    ) -> tuple[dgl.DGLGraph, dgl.DGLGraph]:
        return self.query(q, rng), self.key(k, rng)  # query first: the rng stream is fixed

    def __repr__(self) -> str:
        return block_repr("BaselinePipeline", [self.query, self.key], ["query", "key"])


SPARSIFIERS: Registry[Callable[[AugmentConfig], Sparsifier]] = Registry("mvgrl_sparsify")
"""How MVGRL's diffusion becomes a graph: ``"topk"`` -> :class:`TopK`, ``"threshold"`` -> :class:`Threshold`."""
SPARSIFIERS.register("topk")(lambda cfg: TopK(cfg.mvgrl_topk or None))
SPARSIFIERS.register("threshold")(lambda cfg: Threshold(cfg.mvgrl_eps))

BASELINES: Registry[Callable[[AugmentConfig], BaselinePipeline]] = Registry("baseline")
"""Baseline name -> builder of its :class:`BaselinePipeline` (defaults and sources: :class:`AugmentConfig`)."""


@BASELINES.register("graphcl")
def _graphcl(cfg: AugmentConfig) -> BaselinePipeline:
    view = graphcl_view(cfg.graphcl_ratio)
    return BaselinePipeline(view, view)


@BASELINES.register("grace")
def _grace(cfg: AugmentConfig) -> BaselinePipeline:
    return BaselinePipeline(
        grace_view(cfg.grace_drop_edge_q, cfg.grace_drop_feature_q),
        grace_view(cfg.grace_drop_edge_k, cfg.grace_drop_feature_k),
    )


@BASELINES.register("mvgrl")
def _mvgrl(cfg: AugmentConfig) -> BaselinePipeline:
    return BaselinePipeline(Identity(), Diffusion(cfg.mvgrl_alpha, SPARSIFIERS[cfg.mvgrl_sparsify](cfg)))


@BASELINES.register("gca")
def _gca(cfg: AugmentConfig) -> BaselinePipeline:
    return BaselinePipeline(
        gca_view(cfg.gca_drop_edge_q, cfg.gca_drop_feature_q, cfg.gca_p_tau),
        gca_view(cfg.gca_drop_edge_k, cfg.gca_drop_feature_k, cfg.gca_p_tau),
    )


def build_sgcl_pipeline(cfg: AugmentConfig) -> SGCLPipeline | BaselinePipeline:
    """The pipeline described by ``cfg``: SGCL's stages, or ``BASELINES[cfg.baseline]`` when one is named.

    >>> build_sgcl_pipeline(AugmentConfig.only("align"))
    SGCLPipeline(
        None  # filter
        None  # crop
        Align(p=0.5)  # align
        None  # perturb
    )
    """
    if cfg.baseline:
        return BASELINES[cfg.baseline](cfg)
    choices: list[tuple[ViewTransform, float]] = []
    if cfg.use_mask:
        choices.append((Mask(cfg.max_masked), cfg.p_mask))
    if cfg.use_reorder:
        choices.append((PERMUTE_KINDS[cfg.permute_kind](cfg), cfg.p_reorder))
    perturb = None
    if choices:
        rest = max(0.0, 1.0 - sum(p for _, p in choices))
        perturb = RandomChoice([t for t, _ in choices] + [Identity()], [p for _, p in choices] + [rest])
    return SGCLPipeline(
        filter=ViewFilter(cfg.filter_mode, cfg.c, cfg.t_max, cfg.p_filter) if cfg.use_filter else None,
        crop=paper_crop(cfg.recompute_pe, kind=cfg.crop_kind, table=cfg.crop_table, basis=cfg.crop_basis)
        if cfg.use_crop
        else None,
        align=Align(cfg.p_align) if cfg.use_align else None,
        perturb=perturb,
    )
