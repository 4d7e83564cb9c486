"""Local-global embedding alignment (SGCL's "align"), a pair step.

Each view's positional embedding ``X`` is rotated onto the rows ``N`` of the parent graph's global embedding
``E_t`` for the view's nodes: ``X <- X Q*`` with ``Q* = argmin_{Q orthogonal} ||X Q - N||`` (orthogonal
Procrustes, one batched SVD of the ``(B, k, k)`` matrices ``X^T N``). Both views are rotated, each with its own
``Q``, so rows of nodes shared by the two views are expressed in the same (global) coordinates. Only ``PE``
changes: ``EIGVEC``/``EIGVAL`` keep labelling the columns by position, which is what the later mask / reorder
steps act on (the appendix's order).
"""
from __future__ import annotations

import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import check_probability
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.keys import KeyedRandom


class Align:
    """With probability ``p`` (one draw per pair, as the appendix) align both views of a pair, else keep both.

    >>> Align(p=0.5)
    Align(p=0.5)
    """

    needs_global_rows = True

    def __init__(self, p: float):
        self.p = check_probability("p", p)

    def __call__(self, q: ViewBatch, k: ViewBatch, rng: KeyedRandom) -> tuple[ViewBatch, ViewBatch]:
        rows = np.flatnonzero(rng.child("align").uniform() < self.p)
        if len(rows) == 0:
            return q, k
        return (q.update(rows, F.align_views(q.select(rows))), k.update(rows, F.align_views(k.select(rows))))

    def __repr__(self) -> str:
        return f"Align(p={self.p})"
