"""GRACE's augmentations (Zhu et al., 2020), re-implemented on GCC views: edge removing + feature masking.

Each view gets its own rates (GRACE's ``drop_edge_rate_1/2``, ``drop_feature_rate_1/2``; the pair is built in
:mod:`gcc_sgcl.augment.pipeline`). Edges are removed per undirected edge (both directions together; PyG's
``dropout_adj`` drops directed edges independently, which would make the view's Laplacian non-symmetric), and
the edited view's eigen features are recomputed. Feature masking zeroes whole ``PE`` columns (GRACE's
``drop_feature``: one Bernoulli draw per feature dimension, shared by all nodes); padded columns stay as they are.
"""
from __future__ import annotations

import dgl
import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import Compose, check_probability
from gcc_sgcl.sampling.view import PE


class EdgeDrop:
    """Remove each undirected edge independently with probability ``p``; recompute the eigen features.

    >>> EdgeDrop(0.2)
    EdgeDrop(p=0.2)
    """

    def __init__(self, p: float):
        self.p = check_probability("p", p)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        u, v = F.undirected_edges(view)
        kept = rng.random(len(u)) >= self.p
        if kept.all():
            return view
        return F.edge_view(view, u[kept], v[kept], view.ndata[PE].shape[1])

    def __repr__(self) -> str:
        return f"EdgeDrop(p={self.p})"


class FeatureMask:
    """Zero each valid ``PE`` column independently with probability ``p``.

    >>> FeatureMask(0.3)
    FeatureMask(p=0.3)
    """

    def __init__(self, p: float):
        self.p = check_probability("p", p)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        eigvals = F.view_eigvals(view)
        masked = (rng.random(len(eigvals)) < self.p) & ~np.isnan(eigvals)
        return F.mask_columns(view, np.flatnonzero(masked))

    def __repr__(self) -> str:
        return f"FeatureMask(p={self.p})"


def grace_view(drop_edge: float, drop_feature: float) -> Compose:
    """GRACE's augmentation of one view: edge removing, then masking of the new view's ``PE`` columns.

    >>> grace_view(0.2, 0.3)
    Compose(
        EdgeDrop(p=0.2)
        FeatureMask(p=0.3)
    )
    """
    return Compose([EdgeDrop(drop_edge), FeatureMask(drop_feature)])
