"""GCA's adaptive augmentations (Zhu et al., 2021), degree-centrality scheme, re-implemented on GCC views.

* :class:`AdaptiveEdgeDrop` -- undirected edge ``(u, v)`` is dropped with probability
  ``min(p_e (s_max - s_uv) / (s_max - mean s), p_tau)``, ``s_uv = log(1 + (deg u + deg v) / 2)``: edges between
  low-degree nodes go first, hub edges are kept. The edited view's eigen features are recomputed.
* :class:`AdaptiveFeatureMask` -- ``PE`` column ``j`` is zeroed with probability
  ``min(p_f (w_max - w_j) / (w_max - mean w), p_tau)``, ``w_j = log(1 + sum_u |PE_uj| deg u)``, over the
  valid columns (GCA's dense-feature weights): columns carried by central nodes are kept.

Centralities are the degrees of the view the transform receives (GCA uses the whole graph, which a GCC
view stands in for); the feature mask therefore weighs the edge-dropped view's own ``PE``.
"""
from __future__ import annotations

import dgl
import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import Compose, check_probability
from gcc_sgcl.sampling.view import PE


class AdaptiveEdgeDrop:
    """GCA's degree-centrality edge dropping at mean rate ``p`` with cap ``p_tau``.

    >>> AdaptiveEdgeDrop(0.3, p_tau=0.7)
    AdaptiveEdgeDrop(p=0.3, p_tau=0.7)
    """

    def __init__(self, p: float, p_tau: float = 0.7):
        self.p = check_probability("p", p)
        self.p_tau = check_probability("p_tau", p_tau)

    def probabilities(self, view: dgl.DGLGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(u, v, prob)``: the undirected edges of ``view`` and their drop probabilities."""
        u, v = F.undirected_edges(view)
        degree = view.in_degrees().numpy().astype(np.float64)
        probs = F.edge_drop_probabilities(u, v, degree, self.p, self.p_tau) if len(u) else np.empty(0)
        return u, v, probs

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        u, v, probs = self.probabilities(view)
        kept = rng.random(len(u)) >= probs
        if kept.all():
            return view
        return F.edge_view(view, u[kept], v[kept], view.ndata[PE].shape[1])

    def __repr__(self) -> str:
        return f"AdaptiveEdgeDrop(p={self.p}, p_tau={self.p_tau})"


class AdaptiveFeatureMask:
    """GCA's centrality-weighted masking of the valid ``PE`` columns at mean rate ``p`` with cap ``p_tau``.

    >>> AdaptiveFeatureMask(0.1, p_tau=0.7)
    AdaptiveFeatureMask(p=0.1, p_tau=0.7)
    """

    def __init__(self, p: float, p_tau: float = 0.7):
        self.p = check_probability("p", p)
        self.p_tau = check_probability("p_tau", p_tau)

    def probabilities(self, view: dgl.DGLGraph) -> tuple[np.ndarray, np.ndarray]:
        """``(columns, prob)``: the valid ``PE`` columns of ``view`` and their masking probabilities."""
        columns = np.flatnonzero(~np.isnan(F.view_eigvals(view)))
        if columns.size == 0:
            return columns, np.empty(0)
        pe = view.ndata[PE].detach().cpu().numpy().astype(np.float64)[:, columns]
        degree = view.in_degrees().numpy().astype(np.float64)
        return columns, F.feature_drop_probabilities(pe, degree, self.p, self.p_tau)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        columns, probs = self.probabilities(view)
        return F.mask_columns(view, columns[rng.random(len(columns)) < probs])

    def __repr__(self) -> str:
        return f"AdaptiveFeatureMask(p={self.p}, p_tau={self.p_tau})"


def gca_view(drop_edge: float, drop_feature: float, p_tau: float = 0.7) -> Compose:
    """GCA's augmentation of one view: adaptive edge dropping, then adaptive masking of the new ``PE``.

    >>> gca_view(0.3, 0.1)
    Compose(
        AdaptiveEdgeDrop(p=0.3, p_tau=0.7)
        AdaptiveFeatureMask(p=0.1, p_tau=0.7)
    )
    """
    return Compose([AdaptiveEdgeDrop(drop_edge, p_tau), AdaptiveFeatureMask(drop_feature, p_tau)])
