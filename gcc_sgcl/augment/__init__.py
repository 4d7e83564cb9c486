"""SGCL augmentations: spectral crop, frequency reorder, mask, alignment, similar/diverse filter; and the
baselines' view generation re-implemented on GCC views (GraphCL, GRACE, MVGRL, GCA).

Layout: :mod:`.functional` (pure batched operations), :mod:`.base` (``Transform`` with ``make_params``/``transform``,
``Compose``/``RandomChoice``, pair steps ``Both``/``Split``), one module per family,
:mod:`.pipeline` (the pair pipeline of GCC, SGCL or a baseline, from an :class:`~gcc_sgcl.config.AugmentConfig`).
Transforms act on a :class:`~gcc_sgcl.sampling.batch.ViewBatch` (or a ``DGLGraph`` view); views are described in
:mod:`gcc_sgcl.sampling.view`.
"""
from gcc_sgcl.augment.align import Align
from gcc_sgcl.augment.base import (
    Both,
    Compose,
    Identity,
    PairTransform,
    RandomChoice,
    Split,
    Transform,
)
from gcc_sgcl.augment.crop import CROP_BASES, CROPS, RandomCrop, SpectralCrop, paper_crop
from gcc_sgcl.augment.filter import ViewFilter
from gcc_sgcl.augment.gca import AdaptiveEdgeDrop, AdaptiveFeatureMask, gca_view
from gcc_sgcl.augment.global_embedding import (
    GLOBAL_EMBEDDINGS,
    cached_global_embedding,
    global_embedding,
    graph_fingerprint,
)
from gcc_sgcl.augment.grace import EdgeDrop, FeatureMask, grace_view
from gcc_sgcl.augment.graphcl import AttributeMask, EdgePerturb, NodeDrop, Subgraph, graphcl_view
from gcc_sgcl.augment.mvgrl import Diffusion, Threshold, TopK
from gcc_sgcl.augment.pipeline import (
    BASELINES,
    PERMUTE_KINDS,
    SPARSIFIERS,
    PairPipeline,
    build_pair_pipeline,
)
from gcc_sgcl.augment.spectral_order import Mask, RandomPermute, Reorder

__all__ = [
    "AdaptiveEdgeDrop", "AdaptiveFeatureMask", "Align", "AttributeMask", "BASELINES", "Both", "CROPS",
    "CROP_BASES", "Compose", "Diffusion", "EdgeDrop", "EdgePerturb", "FeatureMask", "GLOBAL_EMBEDDINGS",
    "Identity", "Mask", "NodeDrop", "PERMUTE_KINDS", "PairPipeline", "PairTransform",
    "RandomChoice", "RandomCrop", "RandomPermute", "Reorder", "SPARSIFIERS", "SpectralCrop",
    "Split", "Subgraph", "Threshold", "TopK", "Transform", "ViewFilter", "build_pair_pipeline",
    "cached_global_embedding", "gca_view", "global_embedding", "grace_view", "graph_fingerprint",
    "graphcl_view", "paper_crop",
]
