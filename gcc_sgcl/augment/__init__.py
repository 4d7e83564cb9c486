"""SGCL augmentations: spectral crop, frequency reorder, mask, alignment, similar/diverse filter.

Layout: :mod:`.functional` (pure operations), :mod:`.base` (protocols, ``Compose``/``RandomApply``/
``RandomChoice``, registry), one module per family, :mod:`.pipeline` (the paper's sequence from an
:class:`AugmentConfig`). Views are described in :mod:`gcc_sgcl.sampling.view`.
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
from gcc_sgcl.augment.global_embedding import (
    GLOBAL_EMBEDDINGS,
    cached_global_embedding,
    global_embedding,
    graph_fingerprint,
)
from gcc_sgcl.augment.pipeline import PERMUTE_KINDS, SGCLPipeline, build_sgcl_pipeline
from gcc_sgcl.augment.spectral_order import Mask, RandomPermute, Reorder

__all__ = [
    "Align",
    "AugmentConfig",
    "CROPS",
    "CROP_BASES",
    "Compose",
    "GLOBAL_EMBEDDINGS",
    "Identity",
    "Mask",
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
    "STAGES",
    "SpectralCrop",
    "ViewFilter",
    "ViewTransform",
    "align_view",
    "build_sgcl_pipeline",
    "cached_global_embedding",
    "global_embedding",
    "graph_fingerprint",
    "paper_crop",
    "paper_random_crop",
    "procrustes",
    "reorder_permutation",
    "view_similarity",
]
