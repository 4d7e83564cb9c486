"""Local-global embedding alignment (SGCL's "align"), a pair transform.

Each view's positional embedding ``X`` is rotated onto the rows ``N`` of the parent graph's global embedding
``E_t`` for the view's nodes: ``X <- X Q*`` with ``Q* = argmin_{Q orthogonal} ||X Q - N||`` (orthogonal
Procrustes). Both views are rotated, each with its own ``Q``, so rows of nodes shared by the two views are
expressed in the same (global) coordinates. Only ``PE`` changes: ``EIGVEC``/``EIGVAL`` keep labelling the
columns by position, which is what the later mask / reorder steps act on (the appendix's order).
"""
from __future__ import annotations

import dgl
import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import check_probability
from gcc_sgcl.sampling.view import GLOBAL, PE


def align_view(view: dgl.DGLGraph) -> dgl.DGLGraph:
    """New view whose ``PE`` is rotated by the Procrustes ``Q`` onto ``view.ndata[GLOBAL]``."""
    if GLOBAL not in view.ndata:
        raise ValueError(f"Align needs the global embedding rows in view.ndata[{GLOBAL!r}]")
    x, n = view.ndata[PE], view.ndata[GLOBAL]
    if x.shape[1] != n.shape[1]:
        raise ValueError(
            f"Align needs the global embedding size to equal the positional embedding size, "
            f"got d={n.shape[1]} and k={x.shape[1]}"
        )
    q = F.procrustes(x.detach().cpu().numpy().astype(np.float64), n.detach().cpu().numpy().astype(np.float64))
    return F.rotate_pe(view, q)


class Align:
    """With probability ``p`` (one draw for the pair, as the appendix) align both views, else keep both.

    >>> Align(p=0.5)
    Align(p=0.5)
    """

    def __init__(self, p: float):
        self.p = check_probability("p", p)

    def __call__(
        self, q: dgl.DGLGraph, k: dgl.DGLGraph, rng: np.random.Generator
    ) -> tuple[dgl.DGLGraph, dgl.DGLGraph]:
        if rng.random() < self.p:
            return align_view(q), align_view(k)
        return q, k

    def __repr__(self) -> str:
        return f"Align(p={self.p})"
