"""SGCL augmentations: spectral crop, frequency reorder, mask, alignment, similar/diverse filter; and the
baselines' view generation re-implemented on GCC views (GraphCL, GRACE, MVGRL, GCA).

Layout: :mod:`.functional` (pure operations), :mod:`.base` (protocols, ``Compose``/``RandomApply``/
``RandomChoice``, registry), one module per family, :mod:`.pipeline` (the paper's sequence or a baseline's
from an :class:`AugmentConfig`). Views are described in :mod:`gcc_sgcl.sampling.view`.
"""
from gcc_sgcl.augment.align import Align, align_view
from gcc_sgcl.augment.base import (
    Compose,
    Identity,
    PairTransform,
    RandomApply,
    RandomChoice,
    Registry,
    ViewTransform,
)
from gcc_sgcl.augment.config import STAGES, AugmentConfig
from gcc_sgcl.augment.crop import (
    CROP_BASES,
    CROPS,
    PAPER_CROP_TABLE,
    RandomCrop,
    SpectralCrop,
    paper_crop,
    paper_random_crop,
)
from gcc_sgcl.augment.filter import ViewFilter
from gcc_sgcl.augment.functional import procrustes, reorder_permutation, view_similarity
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
    BaselinePipeline,
    SGCLPipeline,
    build_sgcl_pipeline,
)
from gcc_sgcl.augment.spectral_order import Mask, RandomPermute, Reorder

__all__ = [
    "AdaptiveEdgeDrop",
    "AdaptiveFeatureMask",
    "Align",
    "AttributeMask",
    "AugmentConfig",
    "BASELINES",
    "BaselinePipeline",
    "CROPS",
    "CROP_BASES",
    "Compose",
    "Diffusion",
    "EdgeDrop",
    "EdgePerturb",
    "FeatureMask",
    "GLOBAL_EMBEDDINGS",
    "Identity",
    "Mask",
    "NodeDrop",
    "PAPER_CROP_TABLE",
    "PERMUTE_KINDS",
    "PairTransform",
    "RandomApply",
    "RandomChoice",
    "RandomCrop",
    "RandomPermute",
    "Registry",
    "Reorder",
    "SGCLPipeline",
    "SPARSIFIERS",
    "STAGES",
    "SpectralCrop",
    "Subgraph",
    "Threshold",
    "TopK",
    "ViewFilter",
    "ViewTransform",
    "align_view",
    "build_sgcl_pipeline",
    "cached_global_embedding",
    "gca_view",
    "global_embedding",
    "grace_view",
    "graph_fingerprint",
    "graphcl_view",
    "paper_crop",
    "paper_random_crop",
    "procrustes",
    "reorder_permutation",
    "view_similarity",
]
