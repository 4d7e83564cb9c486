"""GCA's adaptive augmentations (Zhu et al., 2021), degree-centrality scheme, re-implemented on GCC views.

* :class:`AdaptiveEdgeDrop` -- undirected edge ``(u, v)`` is dropped with probability
  ``min(p_e (s_max - s_uv) / (s_max - mean s), p_tau)``, ``s_uv = log(1 + (deg u + deg v) / 2)``: edges between
  low-degree nodes go first, hub edges are kept. The edited views' eigen features are recomputed.
* :class:`AdaptiveFeatureMask` -- ``PE`` column ``j`` is zeroed with probability
  ``min(p_f (w_max - w_j) / (w_max - mean w), p_tau)``, ``w_j = log(1 + sum_u |PE_uj| deg u)``, over the
  valid columns (GCA's dense-feature weights): columns carried by central nodes are kept.

Centralities are the degrees of the view the transform receives (GCA uses the whole graph, which a GCC
view stands in for); the feature mask therefore weighs the edge-dropped view's own ``PE``. The edge centrality is
the GCA paper's rule for undirected graphs (mean of the endpoints' degrees); its released ``degree_drop_weights``
scores each directed edge by its target's degree and drops the two directions independently. Which GCA the SGCL
paper ran is ambiguous (its GCA row cites ``you2021graph``, the JOAO key); this is Zhu et al.'s.
"""
from __future__ import annotations

import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import Compose, Transform, check_probability
from gcc_sgcl.augment.grace import drop_edges, undirected_edge_lists
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.keys import KeyedRandom


class AdaptiveEdgeDrop(Transform):
    """GCA's degree-centrality edge dropping at mean rate ``p`` with cap ``p_tau``.

    >>> AdaptiveEdgeDrop(0.3, p_tau=0.7)
    AdaptiveEdgeDrop(p=0.3, p_tau=0.7)
    """

    def __init__(self, p: float, p_tau: float = 0.7):
        self.p = check_probability("p", p)
        self.p_tau = check_probability("p_tau", p_tau)

    def probabilities(self, views: ViewBatch) -> list[np.ndarray]:
        """Drop probability of each undirected edge of each view (:func:`undirected_edge_lists` order)."""
        degree = views.in_degrees().astype(np.float64)
        ptr = views.node_ptr
        return [F.edge_drop_probabilities(u, v, degree[ptr[b]:ptr[b + 1]], self.p, self.p_tau)
                for b, (u, v) in enumerate(undirected_edge_lists(views))]

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> tuple:
        return drop_edges(views, rng, self.probabilities(views))

    def transform(self, views: ViewBatch, params: tuple) -> ViewBatch:
        return F.with_edges(views, *params)


class AdaptiveFeatureMask(Transform):
    """GCA's centrality-weighted masking of the valid ``PE`` columns at mean rate ``p`` with cap ``p_tau``.

    >>> AdaptiveFeatureMask(0.1, p_tau=0.7)
    AdaptiveFeatureMask(p=0.1, p_tau=0.7)
    """

    def __init__(self, p: float, p_tau: float = 0.7):
        self.p = check_probability("p", p)
        self.p_tau = check_probability("p_tau", p_tau)

    def probabilities(self, views: ViewBatch) -> np.ndarray:
        """``(B, k)`` masking probability of each column (0 for padded columns)."""
        degree = views.in_degrees().astype(np.float64)
        ptr = views.node_ptr
        out = np.zeros((len(views), views.k))
        for b in range(len(views)):
            columns = np.flatnonzero(~np.isnan(views.eigval[b]))
            if columns.size:
                pe = views.pe[ptr[b]:ptr[b + 1], columns].astype(np.float64)
                out[b, columns] = F.feature_drop_probabilities(pe, degree[ptr[b]:ptr[b + 1]], self.p, self.p_tau)
        return out

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> np.ndarray:
        return rng.child("columns").uniform(views.k) < self.probabilities(views)

    def transform(self, views: ViewBatch, params: np.ndarray) -> ViewBatch:
        return F.mask_columns(views, params)


def gca_view(drop_edge: float, drop_feature: float, p_tau: float = 0.7) -> Compose:
    """GCA's augmentation of one view: adaptive edge dropping, then adaptive masking of the new ``PE``.

    >>> gca_view(0.3, 0.1)
    Compose(
        AdaptiveEdgeDrop(p=0.3, p_tau=0.7)
        AdaptiveFeatureMask(p=0.1, p_tau=0.7)
    )
    """
    return Compose([AdaptiveEdgeDrop(drop_edge, p_tau), AdaptiveFeatureMask(drop_feature, p_tau)])
