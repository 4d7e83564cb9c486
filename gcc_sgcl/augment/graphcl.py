"""GraphCL's augmentations (You et al., 2020), re-implemented on GCC views.

Node dropping, subgraph, edge perturbation and attribute masking, one picked uniformly per view
(:func:`graphcl_view`, GraphCL's ``--aug1 random4 --aug2 random4``), each at GraphCL's ratio
(``aug_ratio = 0.2``; Shen-Lab/GraphCL ``semisupervised_TU``). Differences from GraphCL's code, all forced by the
GCC setting or its small views:

* the centre is never dropped and the subgraph grows from it;
* counts are ``floor(ratio * size + u)``, ``u ~ U[0, 1)`` (expectation ``ratio * size``), where GraphCL's are
  ``int(ratio * size)`` (its subgraph keeps that many nodes plus the start node: ``while len(idx_sub) <= sub_num``);
* edges are undirected (dropped / added in both directions), added edges are distinct non-edges, no self-loops;
* structural edits recompute the eigen features of the edited views (GCC's features are the view's own
  Laplacian eigenvectors, one batched decomposition); attribute masking acts on ``PE`` rows, replaced by their
  mean (GraphCL's token).
"""
from __future__ import annotations

import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import RandomChoice, Transform, check_probability
from gcc_sgcl.sampling.batch import ViewBatch, positions
from gcc_sgcl.sampling.keys import KeyedRandom


class NodeDrop(Transform):
    """Drop ``floor(ratio * n + u)`` uniformly chosen non-centre nodes of each view (GraphCL's ``drop_nodes``).

    >>> NodeDrop(0.2)
    NodeDrop(ratio=0.2)
    """

    def __init__(self, ratio: float):
        self.ratio = check_probability("ratio", ratio)

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> tuple[np.ndarray, KeyedRandom]:
        n = views.num_nodes
        dropped = np.minimum(F.stochastic_count(self.ratio * n, rng.child("count").uniform()), n - 1)
        return F.random_keep(views, n - dropped, rng.child("nodes").ragged(n)), rng.child("pe")

    def transform(self, views: ViewBatch, params: tuple[np.ndarray, KeyedRandom]) -> ViewBatch:
        keep, signs = params
        return F.crop_views(views, keep, True, signs)


class Subgraph(Transform):
    """Keep ``min(n, floor(keep_ratio * n + u) + 1)`` nodes grown from the centre (GraphCL's ``subgraph``: the start
    node and ``int(keep_ratio * n)`` more).

    GraphCL grows the node set by adding a uniformly chosen neighbour of the set (its "random walk"); its
    released code never updates the frontier (``set.union`` result discarded), which is done here. On a
    disconnected view the set stays in the centre's component and may end up smaller.

    >>> Subgraph(0.2)
    Subgraph(keep_ratio=0.2)
    """

    def __init__(self, keep_ratio: float):
        self.keep_ratio = check_probability("keep_ratio", keep_ratio)

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> tuple[np.ndarray, KeyedRandom]:
        n = views.num_nodes
        targets = np.minimum(n, F.stochastic_count(self.keep_ratio * n, rng.child("count").uniform()) + 1)
        draws = rng.child("grow").ragged(n)
        keep = np.zeros(int(n.sum()), dtype=bool)
        ptr = views.node_ptr
        for b in range(len(views)):
            nodes = F.grow_subgraph(*views.edges_of(b), int(n[b]), int(views.seed_pos[b]), int(targets[b]),
                                    draws[ptr[b]:ptr[b + 1]])
            keep[ptr[b] + nodes] = True
        return keep, rng.child("pe")

    def transform(self, views: ViewBatch, params: tuple[np.ndarray, KeyedRandom]) -> ViewBatch:
        keep, signs = params
        return F.crop_views(views, keep, True, signs)


class EdgePerturb(Transform):
    """Remove ``c = floor(ratio * m + u)`` of the ``m`` undirected edges of each view and add ``c`` non-edges, both
    uniformly (GraphCL's ``permute_edges``; fewer are added when the view has fewer non-edges).

    >>> EdgePerturb(0.2)
    EdgePerturb(ratio=0.2)
    """

    def __init__(self, ratio: float):
        self.ratio = check_probability("ratio", ratio)

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> tuple[np.ndarray, list, KeyedRandom]:
        count_u = rng.child("count").uniform()
        rows, edges = [], []
        for b in range(len(views)):
            u, v = F.undirected_pairs(*views.edges_of(b))
            count = F.stochastic_count(self.ratio * len(u), count_u[b])
            if count == 0:
                continue
            gen = rng.child("perturb").generator(b)
            a, c = F.non_edges(u, v, int(views.num_nodes[b]))
            removed = gen.choice(len(u), size=count, replace=False)
            added = gen.choice(len(a), size=min(count, len(a)), replace=False)
            kept = np.setdiff1d(np.arange(len(u)), removed)
            rows.append(b)
            edges.append((np.concatenate([u[kept], a[added]]), np.concatenate([v[kept], c[added]])))
        rows = np.array(rows, dtype=np.int64)
        return rows, edges, rng.child("pe").take(rows)

    def transform(self, views: ViewBatch, params: tuple[np.ndarray, list, KeyedRandom]) -> ViewBatch:
        return F.with_edges(views, *params)


class AttributeMask(Transform):
    """Replace the ``PE`` rows of ``floor(ratio * n + u)`` uniformly chosen nodes of each view by the view's mean
    row (GraphCL's ``mask_nodes`` with its mean-feature token).

    >>> AttributeMask(0.2)
    AttributeMask(ratio=0.2)
    """

    def __init__(self, ratio: float):
        self.ratio = check_probability("ratio", ratio)

    def make_params(self, views: ViewBatch, rng: KeyedRandom) -> np.ndarray:
        n = views.num_nodes
        count = np.minimum(F.stochastic_count(self.ratio * n, rng.child("count").uniform()), n)
        order = np.lexsort((rng.child("nodes").ragged(n), views.node_view))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = positions(n)
        return rank < np.repeat(count, n)

    def transform(self, views: ViewBatch, params: np.ndarray) -> ViewBatch:
        mean = F.segment_sums(views.pe.astype(np.float64), views.num_nodes) / views.num_nodes[:, None]
        return views.replace(pe=np.where(params[:, None], mean[views.node_view].astype(np.float32), views.pe))


def graphcl_view(ratio: float = 0.2) -> RandomChoice:
    """One of GraphCL's four augmentations per view, uniformly (``random4``), all at ``ratio``.

    >>> graphcl_view()
    RandomChoice(
        NodeDrop(ratio=0.2)  # p=0.25
        Subgraph(keep_ratio=0.2)  # p=0.25
        EdgePerturb(ratio=0.2)  # p=0.25
        AttributeMask(ratio=0.2)  # p=0.25
    )
    """
    return RandomChoice([NodeDrop(ratio), Subgraph(ratio), EdgePerturb(ratio), AttributeMask(ratio)])
