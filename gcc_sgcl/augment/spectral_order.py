"""Augmentations acting on the columns (frequency components) of the positional embedding, batched.

* :class:`Reorder` -- SGCL's frequency reordering: the column order of a higher-order diffusion embedding,
  obtained without a new eigendecomposition.
* :class:`RandomPermute` -- its control: a uniformly random order of the valid columns.
* :class:`Mask` -- zero the columns of the largest eigenvalues (appendix, "Masking").

Padded columns (``EIGVAL`` is NaN) are never moved or masked. Permutations move ``PE``, ``EIGVEC`` and
``EIGVAL`` together, so the column labels stay correct for later steps. None depends on eigenvector signs.
"""
from __future__ import annotations

import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import Transform
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.keys import KeyedRandom


class Reorder(Transform):
    """Draw ``r ~ U{1..r_max}`` per view and sort its valid columns by ``sum_{j=1..r} (1 - lambda)^j``, descending.

    >>> Reorder(r_max=10)
    Reorder(r_max=10)
    """

    def __init__(self, r_max: int):
        if r_max < 1:
            raise ValueError(f"r_max must be >= 1, got {r_max}")
        self.r_max = int(r_max)

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> np.ndarray:
        return rng.child("r").integers(1, self.r_max + 1)

    def transform(self, views: ViewBatch, params: np.ndarray) -> ViewBatch:
        return F.permute_columns(views, F.reorder_permutations(views.eigval, params))


class RandomPermute(Transform):
    """Uniformly random permutation of each view's valid columns (the ablation's control for :class:`Reorder`)."""

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> np.ndarray:
        return rng.child("order").uniform(views.k)

    def transform(self, views: ViewBatch, params: np.ndarray) -> ViewBatch:
        return F.permute_columns(views, F.valid_order(views.eigval, params))


class Mask(Transform):
    """Draw ``z ~ U{0..max_masked}`` per view and zero the ``PE`` columns of its ``z`` largest valid eigenvalues.

    >>> Mask(max_masked=8)
    Mask(max_masked=8)
    """

    def __init__(self, max_masked: int):
        if max_masked < 0:
            raise ValueError(f"max_masked must be >= 0, got {max_masked}")
        self.max_masked = int(max_masked)

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> np.ndarray:
        return rng.child("z").integers(0, self.max_masked + 1)

    def transform(self, views: ViewBatch, params: np.ndarray) -> ViewBatch:
        return F.mask_columns(views, F.masked_columns(views.eigval, params))
