"""GRACE's augmentations (Zhu et al., 2020), re-implemented on GCC views: edge removing + feature masking.

Each view gets its own rates (GRACE's ``drop_edge_rate_1/2``, ``drop_feature_rate_1/2``; the pair is built in
:mod:`gcc_sgcl.augment.pipeline`). Edges are removed per undirected edge (both directions together; PyG's
``dropout_adj`` drops directed edges independently, which would make the view's Laplacian non-symmetric), and
the edited views' eigen features are recomputed. Feature masking zeroes whole ``PE`` columns (GRACE's
``drop_feature``: one Bernoulli draw per feature dimension, shared by all nodes); padded columns stay as they are.
"""
from __future__ import annotations

import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import Compose, Transform, check_probability
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.keys import KeyedRandom


def undirected_edge_lists(views: ViewBatch) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each view's undirected edges ``(u, v)``, ``u < v`` (self-loops dropped)."""
    return [F.undirected_pairs(*views.edges_of(b)) for b in range(len(views))]


def drop_edges(views: ViewBatch, rng: KeyedRandom, probabilities: list[np.ndarray]) -> tuple:
    """Params of an edge drop: the views that lose edges, their kept edge lists, the sign stream."""
    rows, edges = [], []
    for b, ((u, v), p) in enumerate(zip(undirected_edge_lists(views), probabilities)):
        kept = rng.take(np.array([b])).child("edges").uniform(len(u))[0] >= p
        if not kept.all():
            rows.append(b)
            edges.append((u[kept], v[kept]))
    rows = np.array(rows, dtype=np.int64)
    return rows, edges, rng.child("pe").take(rows)


class EdgeDrop(Transform):
    """Remove each undirected edge independently with probability ``p``; recompute the eigen features.

    >>> EdgeDrop(0.2)
    EdgeDrop(p=0.2)
    """

    def __init__(self, p: float):
        self.p = check_probability("p", p)

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> tuple:
        return drop_edges(views, rng, [np.full(len(u), self.p) for u, _ in undirected_edge_lists(views)])

    def transform(self, views: ViewBatch, params: tuple) -> ViewBatch:
        return F.with_edges(views, *params)


class FeatureMask(Transform):
    """Zero each valid ``PE`` column of each view independently with probability ``p``.

    >>> FeatureMask(0.3)
    FeatureMask(p=0.3)
    """

    def __init__(self, p: float):
        self.p = check_probability("p", p)

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> np.ndarray:
        return (rng.child("columns").uniform(views.k) < self.p) & ~np.isnan(views.eigval)

    def transform(self, views: ViewBatch, params: np.ndarray) -> ViewBatch:
        return F.mask_columns(views, params)


def grace_view(drop_edge: float, drop_feature: float) -> Compose:
    """GRACE's augmentation of one view: edge removing, then masking of the new view's ``PE`` columns.

    >>> grace_view(0.2, 0.3)
    Compose(
        EdgeDrop(p=0.2)
        FeatureMask(p=0.3)
    )
    """
    return Compose([EdgeDrop(drop_edge), FeatureMask(drop_feature)])
