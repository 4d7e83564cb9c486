"""Augmentations acting on the columns (frequency components) of the positional embedding.

* :class:`Reorder` -- SGCL's frequency reordering: the column order of a higher-order diffusion embedding,
  obtained without a new eigendecomposition.
* :class:`RandomPermute` -- its control: a uniformly random order of the valid columns.
* :class:`Mask` -- zero the columns of the largest eigenvalues (appendix, "Masking").

Padded columns (``EIGVAL`` is NaN) are never moved or masked. Permutations move ``PE``, ``EIGVEC`` and
``EIGVAL`` together, so the column labels stay correct for later steps.
"""
from __future__ import annotations

import dgl
import numpy as np

from gcc_sgcl.augment import functional as F


class Reorder:
    """Draw ``r ~ U{1..r_max}`` and sort the valid columns by ``sum_{j=1..r} (1 - lambda)^j``, descending.

    >>> Reorder(r_max=10)
    Reorder(r_max=10)
    """

    def __init__(self, r_max: int):
        if r_max < 1:
            raise ValueError(f"r_max must be >= 1, got {r_max}")
        self.r_max = int(r_max)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        r = int(rng.integers(1, self.r_max + 1))
        return F.permute_columns(view, F.reorder_permutation(F.view_eigvals(view), r))

    def __repr__(self) -> str:
        return f"Reorder(r_max={self.r_max})"


class RandomPermute:
    """Uniformly random permutation of the valid columns (the ablation's control for :class:`Reorder`)."""

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        eigvals = F.view_eigvals(view)
        order = rng.permutation(int((~np.isnan(eigvals)).sum()))
        return F.permute_columns(view, F.valid_permutation(eigvals, order))

    def __repr__(self) -> str:
        return "RandomPermute()"


class Mask:
    """Draw ``z ~ U{0..max_masked}`` and zero the ``PE`` columns of the ``z`` largest valid eigenvalues.

    >>> Mask(max_masked=8)
    Mask(max_masked=8)
    """

    def __init__(self, max_masked: int):
        if max_masked < 0:
            raise ValueError(f"max_masked must be >= 0, got {max_masked}")
        self.max_masked = int(max_masked)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        z = int(rng.integers(0, self.max_masked + 1))
        return F.mask_columns(view, F.masked_columns(F.view_eigvals(view), z))

    def __repr__(self) -> str:
        return f"Mask(max_masked={self.max_masked})"
