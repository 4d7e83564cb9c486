"""Pair pipelines built from an augmentation family's settings (:data:`~gcc_sgcl.config.AUGMENT_FAMILIES`): GCC's
plain pairs, SGCL's sequence (:class:`~gcc_sgcl.config.AugmentConfig`) or a baseline's view generation (its own
settings class) -- one protocol for all.

A :class:`PairPipeline` turns a batch of start nodes into ``(query, key)`` view batches. It asks the sampler
(:class:`~gcc_sgcl.sampling.dataset.ViewSampler`) for walks and views and owns everything else: the optional
similar/diverse filter on the candidate walks, the global-embedding rows the views carry (alignment), and the
pair steps. SGCL (appendix, "Sequence of augmentations"): filter -> crop each view -> align the pair -> per view
mask | reorder | nothing. Baselines: one view transform for the query views and one for the keys (GRACE and GCA
use different rates, MVGRL diffuses only the key view, CuCo drops nodes of the key view only), or one step choosing
both views of a pair together (InfoGCL).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from gcc_sgcl.augment.align import Align
from gcc_sgcl.augment.base import Both, Identity, PairTransform, RandomChoice, Split, Transform, block_repr
from gcc_sgcl.augment.crop import paper_crop
from gcc_sgcl.augment.filter import FilterOutcome, ViewFilter
from gcc_sgcl.augment.gca import gca_view
from gcc_sgcl.augment.grace import grace_view
from gcc_sgcl.augment.graphcl import NodeDrop, graphcl_view
from gcc_sgcl.augment.infogcl import InfoMinViews, infogcl_views
from gcc_sgcl.augment.mvgrl import Diffusion, Sparsifier, Threshold, TopK
from gcc_sgcl.augment.spectral_order import Mask, RandomPermute, Reorder
from gcc_sgcl.config import (
    AugmentConfig,
    AugmentSettings,
    BYOVConfig,
    CuCoConfig,
    GCAConfig,
    GraceConfig,
    GraphCLConfig,
    InfoGCLConfig,
    MVGRLConfig,
)
from gcc_sgcl.registry import Registry
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.dataset import ViewSampler
from gcc_sgcl.sampling.keys import KeyedRandom


class PairPipeline:
    """``pipeline(sampler, starts, rng) -> (q, k)``: filtered walks -> views -> pair steps, in order.

    >>> PairPipeline(None, [Split(Identity(), Identity())])
    PairPipeline(
        None  # filter
        Split(
            Identity()  # query
            Identity()  # key
        )  # step 0
    )
    """

    def __init__(self, filter: ViewFilter | None = None, steps: Sequence[PairTransform] = ()):
        self.filter = filter
        self.steps = list(steps)

    @property
    def needs_global_rows(self) -> bool:
        """Whether the views must carry their global-embedding rows (alignment)."""
        return any(getattr(step, "needs_global_rows", False) for step in self.steps)

    @property
    def needs_global(self) -> bool:
        """Whether the global embedding ``E_t`` of the corpus is needed (filter or alignment)."""
        return self.filter is not None or self.needs_global_rows

    def __call__(self, sampler: ViewSampler, starts: np.ndarray, rng: KeyedRandom) -> tuple[ViewBatch, ViewBatch]:
        (_, q, k, _), = deque(self.stages(sampler, starts, rng), maxlen=1)  # the last stage; earlier ones freed
        return q, k

    def stages(self, sampler: ViewSampler, starts: np.ndarray,
               rng: KeyedRandom) -> Iterator[tuple[str, ViewBatch, ViewBatch, FilterOutcome | None]]:
        """The pair after each stage, in order: ``("views", q, k, filter outcome or None)``, then
        ``("step <i>", q, k, None)`` per step; the last is what the pipeline returns."""
        if self.needs_global and sampler.global_embedding is None:
            raise ValueError("this augmentation pipeline needs the corpus' global embedding E_t (filter/align)")

        def walk(rows: np.ndarray, walk_rng: KeyedRandom):
            return sampler.walk(starts[rows], walk_rng)

        outcome = None
        if self.filter is not None:
            sets_q, sets_k, outcome = self.filter.select(walk, len(starts), sampler.global_embedding,
                                                         rng.child("walks"))
        else:
            everyone = np.arange(len(starts))
            sets_q, sets_k = (walk(everyone, rng.child("walks").child("try0").child(side)) for side in ("q", "k"))
        q = sampler.build(sets_q, rng.child("q"), self.needs_global_rows)
        k = sampler.build(sets_k, rng.child("k"), self.needs_global_rows)
        yield "views", q, k, outcome
        for i, step in enumerate(self.steps):
            q, k = step(q, k, rng.child(f"step{i}"))
            yield f"step {i}", q, k, None

    def __repr__(self) -> str:
        return block_repr("PairPipeline", [self.filter, *self.steps],
                          ["filter"] + [f"step {i}" for i in range(len(self.steps))])


PERMUTE_KINDS: Registry[Callable[[AugmentConfig], Transform]] = Registry("permute_kind")
"""``"spectral"`` -> :class:`Reorder`, ``"random"`` -> :class:`RandomPermute` (the control)."""
PERMUTE_KINDS.register("spectral")(lambda cfg: Reorder(cfg.r_max))
PERMUTE_KINDS.register("random")(lambda cfg: RandomPermute())

SPARSIFIERS: Registry[Callable[[MVGRLConfig], Sparsifier]] = Registry("--mvgrl-sparsify")
"""How MVGRL's diffusion becomes a graph: ``"topk"`` -> :class:`TopK`, ``"threshold"`` -> :class:`Threshold`."""
SPARSIFIERS.register("topk")(lambda cfg: TopK(cfg.topk or None))
SPARSIFIERS.register("threshold")(lambda cfg: Threshold(cfg.eps))

BASELINES: Registry[Callable[[Any], PairTransform]] = Registry("baseline")
"""Baseline family -> builder of its pair step from the family's settings (defaults and sources: its class in
:mod:`gcc_sgcl.config`, e.g. :class:`~gcc_sgcl.config.GraphCLConfig`): a :class:`Split` of query and key view
transforms, or a step that looks at both views (InfoGCL's). A family that also changes the contrastive step (CuCo's
negatives, BYOV's learned views) registers its hook in :data:`gcc_sgcl.contrastive.hooks.STEP_HOOKS`."""


@BASELINES.register(GraphCLConfig.FAMILY)
def _graphcl(cfg: GraphCLConfig) -> Split:
    view = graphcl_view(cfg.ratio)
    return Split(view, view)


@BASELINES.register(GraceConfig.FAMILY)
def _grace(cfg: GraceConfig) -> Split:
    return Split(grace_view(cfg.drop_edge_q, cfg.drop_feature_q), grace_view(cfg.drop_edge_k, cfg.drop_feature_k))


@BASELINES.register(MVGRLConfig.FAMILY)
def _mvgrl(cfg: MVGRLConfig) -> Split:
    return Split(Identity(), Diffusion(cfg.alpha, SPARSIFIERS[cfg.sparsify](cfg), cfg.diffusion, cfg.t))


@BASELINES.register(GCAConfig.FAMILY)
def _gca(cfg: GCAConfig) -> Split:
    return Split(gca_view(cfg.drop_edge_q, cfg.drop_feature_q, cfg.p_tau),
                 gca_view(cfg.drop_edge_k, cfg.drop_feature_k, cfg.p_tau))


@BASELINES.register(CuCoConfig.FAMILY)
def _cuco(cfg: CuCoConfig) -> Split:  # its curriculum of negatives: contrastive.hooks.CurriculumNegatives
    return Split(Identity(), NodeDrop(cfg.node_drop))


@BASELINES.register(InfoGCLConfig.FAMILY)
def _infogcl(cfg: InfoGCLConfig) -> InfoMinViews:
    return infogcl_views(cfg.ratio)


@BASELINES.register(BYOVConfig.FAMILY)
def _byov(cfg: BYOVConfig) -> Split:  # GCC's RWR pairs; the generators' views: contrastive.hooks.LearnedViews
    return Split(Identity(), Identity())


def build_pair_pipeline(cfg: AugmentSettings) -> PairPipeline:
    """The pipeline described by a family's settings ``cfg``: SGCL's stages that are on, or the baseline's
    (``BASELINES[cfg.FAMILY]``).

    >>> build_pair_pipeline(AugmentConfig.only("align"))
    PairPipeline(
        None  # filter
        Align(p=0.5)  # step 0
    )
    """
    if not isinstance(cfg, AugmentConfig):
        return PairPipeline(None, [BASELINES[cfg.FAMILY](cfg)])
    steps: list[PairTransform] = []
    if cfg.use_crop:
        steps.append(Both(paper_crop(cfg.recompute_pe, kind=cfg.crop_kind, table=cfg.crop_table, basis=cfg.crop_basis)))
    if cfg.use_align:
        steps.append(Align(cfg.p_align))
    choices: list[tuple[Transform, float]] = []
    if cfg.use_mask:
        choices.append((Mask(cfg.max_masked), cfg.p_mask))
    if cfg.use_reorder:
        choices.append((PERMUTE_KINDS[cfg.permute_kind](cfg), cfg.p_reorder))
    if choices:
        rest = max(0.0, 1.0 - sum(p for _, p in choices))
        steps.append(Both(RandomChoice([t for t, _ in choices] + [Identity()], [p for _, p in choices] + [rest])))
    return PairPipeline(ViewFilter(cfg.filter_mode, cfg.c, cfg.t_max, cfg.p_filter) if cfg.use_filter else None, steps)
