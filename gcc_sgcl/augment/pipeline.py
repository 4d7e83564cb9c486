"""SGCL's augmentation sequence (appendix, "Sequence of augmentations"), built from an :class:`AugmentConfig`.

After the two random walks (and the optional filter, which the sampler runs through ``pipeline.filter``):
crop each view independently -> align the pair -> per view, independently, mask | reorder | nothing.
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


def build_sgcl_pipeline(cfg: AugmentConfig) -> SGCLPipeline:
    """The pipeline described by ``cfg``.

    >>> build_sgcl_pipeline(AugmentConfig.only("align"))
    SGCLPipeline(
        None  # filter
        None  # crop
        Align(p=0.5)  # align
        None  # perturb
    )
    """
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
