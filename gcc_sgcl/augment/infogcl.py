"""InfoGCL's choice of views (Xu et al., NeurIPS 2021), re-implemented on GCC views.

InfoGCL builds a graph contrastive model by the information bottleneck: its optimal views (Corollary 1) share as
little information as possible, ``min I(v_i; v_j)``, subject to each keeping the task's information, ``I(v_i; y) =
I(v_j; y) = I(G; y)``; the view augmentations it chooses among are GraphCL's. InfoGCL's authors released no code, and
pre-training here has no labels, so both sides of the rule are measured on the views themselves:

* a candidate view of each side of a pair: the RWR view as it is, or under one of GraphCL's augmentations (node
  dropping, subgraph, edge perturbation, attribute masking; :mod:`gcc_sgcl.augment.graphcl`) at one ``ratio``;
* the information the two views share, ``I(v_q; v_k)``: the Jaccard overlap of their contents, the corpus nodes and
  edges each holds (the views carry no other information: their features are their own Laplacian eigenvectors);
* the task's information: what this setting's tasks read of a view is its centre's structure, so a candidate keeps
  it when the centre keeps exactly its neighbours of the RWR view (every candidate keeps the centre);
* per pair, the candidate pair of least overlap among those keeping the task's information (the RWR views
  themselves always do); on a tie the candidate listed first wins, so attribute masking, which removes feature
  information but no structure, wins over the unchanged view.

InfoGCL's other two choices need no rule here: the encoder is GCC's GIN and the contrast is global-global, the only
mode GCC's graph-level encoder offers.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gcc_sgcl.augment.base import Identity, Transform, apply_by_group, block_repr, check_probability
from gcc_sgcl.augment.graphcl import AttributeMask, EdgePerturb, NodeDrop, Subgraph
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.keys import KeyedRandom


def view_contents(views: ViewBatch, size: int) -> list[np.ndarray]:
    """Each view's contents as distinct integer codes: its corpus nodes ``-(nid + 1)`` and undirected edges
    ``min(nid) * size + max(nid)`` (``size`` above every ``nid``; views are simple graphs storing each edge in both
    directions, as every view here).

    >>> from gcc_sgcl.sampling.batch import ViewBatch
    >>> v = ViewBatch(np.array([3]), np.array([4]), np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1]), np.array([7, 5, 9]),
    ...               np.array([0]), np.zeros((3, 1)), np.zeros((3, 1)), np.zeros((1, 1)))
    >>> sorted(view_contents(v, 10)[0].tolist())
    [-10, -8, -6, 57, 59]
    """
    base = np.repeat(views.node_ptr[:-1], views.num_edges)
    a, c = (views.nid[x + base].astype(np.int64) for x in (views.src, views.dst))
    once = a < c
    nodes = np.split(-(views.nid.astype(np.int64) + 1), views.node_ptr[1:-1])
    edges = np.split(a[once] * size + c[once], np.cumsum(np.bincount(views.edge_view[once], minlength=len(views)))[:-1])
    return [np.concatenate(pair) for pair in zip(nodes, edges)]


def _per_view(values: np.ndarray, owner: np.ndarray, count: int) -> list[np.ndarray]:
    """The distinct ``values`` of each of ``count`` views (``owner[i]``: the view of ``values[i]``), sorted."""
    order = np.lexsort((values, owner))
    values, owner = values[order], owner[order]
    first = np.r_[True, (values[1:] != values[:-1]) | (owner[1:] != owner[:-1])] if len(values) else np.zeros(0, bool)
    values, owner = values[first], owner[first]
    return np.split(values, np.cumsum(np.bincount(owner, minlength=count))[:-1])


def centre_neighbours(views: ViewBatch) -> list[np.ndarray]:
    """Each view's centre's neighbours, as sorted corpus node ids."""
    base = np.repeat(views.node_ptr[:-1], views.num_edges)
    at_centre = views.src == np.repeat(views.seed_pos, views.num_edges)
    neighbours = views.nid[(views.dst + base)[at_centre]].astype(np.int64)
    return _per_view(neighbours, views.edge_view[at_centre], len(views))


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """``|a & b| / |a | b|`` of two sorted arrays of distinct codes (1 for two empty sets).

    >>> jaccard(np.array([1, 2, 3]), np.array([2, 3, 4]))
    0.5
    """
    common = len(np.intersect1d(a, b, assume_unique=True))
    union = len(a) + len(b) - common
    return common / union if union else 1.0


def choose_pairs(overlap: np.ndarray, keeps_q: np.ndarray, keeps_k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the candidates ``(a, b)`` of least ``overlap[row, a, b]`` with ``keeps_q[row, a]`` and
    ``keeps_k[row, b]``; ties go to the smallest ``a``, then ``b``.

    >>> overlap = np.array([[[0.9, 0.5], [0.4, 0.2]]])
    >>> choose_pairs(overlap, np.array([[True, False]]), np.array([[True, True]]))
    (array([0]), array([1]))
    """
    allowed = keeps_q[:, :, None] & keeps_k[:, None, :]
    if not allowed.reshape(len(allowed), -1).any(axis=1).all():
        raise ValueError("every row needs a candidate pair that keeps the task's information")
    score = np.where(allowed, overlap, np.inf).reshape(len(overlap), -1)
    flat = score.argmin(axis=1)  # the first minimum: smallest a, then b
    return flat // overlap.shape[2], flat % overlap.shape[2]


class InfoMinViews:
    """Pair step: per pair, the candidate view of each side chosen by InfoGCL's rule (module docstring); candidate
    ``j`` of a side draws from stream ``j`` of that side, whether chosen or not, and only the chosen candidates'
    eigen features are computed (the rule reads structure only).

    >>> InfoMinViews([AttributeMask(0.2), Identity()])
    InfoMinViews(
        AttributeMask(ratio=0.2)  # candidate 0
        Identity()  # candidate 1
    )
    """

    def __init__(self, candidates: Sequence[Transform]):
        if not candidates or not isinstance(candidates[-1], Identity):
            raise ValueError("the candidates must end with Identity() (the RWR view, which always keeps the task's "
                             "information)")
        self.candidates = list(candidates)

    def choose(self, q: ViewBatch, k: ViewBatch, rng: KeyedRandom) -> tuple[np.ndarray, np.ndarray]:
        """The candidate chosen for each row of each side."""
        sides = [(views, [structure_after(t, views, rng.child(side).child(j)) for j, t in enumerate(self.candidates)])
                 for side, views in (("q", q), ("k", k))]
        size = int(max(q.nid.max(initial=0), k.nid.max(initial=0))) + 1
        (_, after_q), (_, after_k) = sides
        contents_q = [view_contents(v, size) for v in after_q]
        contents_k = [view_contents(v, size) for v in after_k]
        c = len(self.candidates)
        overlap = np.array([[[jaccard(contents_q[a][row], contents_k[b][row]) for b in range(c)] for a in range(c)]
                            for row in range(len(q))]).reshape(len(q), c, c)
        keeps_q, keeps_k = (keeps_neighbours(views, after) for views, after in sides)
        return choose_pairs(overlap, keeps_q, keeps_k)

    def __call__(self, q: ViewBatch, k: ViewBatch, rng: KeyedRandom) -> tuple[ViewBatch, ViewBatch]:
        chosen_q, chosen_k = self.choose(q, k, rng)
        return (apply_by_group(q, chosen_q, self.candidates, rng.child("q")),
                apply_by_group(k, chosen_k, self.candidates, rng.child("k")))

    def __repr__(self) -> str:
        return block_repr("InfoMinViews", self.candidates, [f"candidate {j}" for j in range(len(self.candidates))])


def structure_after(transform: Transform, views: ViewBatch, rng: KeyedRandom) -> ViewBatch:
    """``views`` with the nodes and edges ``transform`` (drawing from ``rng``) leaves them, eigen features not
    recomputed: GraphCL's node dropping and subgraph keep an induced subgraph, edge perturbation swaps edges, and
    attribute masking and no augmentation change no structure; another transform is applied whole."""
    if isinstance(transform, (NodeDrop, Subgraph)):
        keep, _ = transform.make_params(views, rng)
        return views.induce(keep)
    if isinstance(transform, EdgePerturb):
        rows, edges, _ = transform.make_params(views, rng)
        return with_structure(views, rows, edges)
    if isinstance(transform, (AttributeMask, Identity)):
        return views
    return transform.forward(views, rng)


def with_structure(views: ViewBatch, rows: np.ndarray, edges: list[tuple[np.ndarray, np.ndarray]]) -> ViewBatch:
    """Views ``rows`` with the undirected edge lists ``edges`` (stored in both directions), the rest as it is."""
    if len(rows) == 0:
        return views
    part = views.select(rows)
    both = [(np.concatenate([u, v]), np.concatenate([v, u])) for u, v in edges]
    return views.update(rows, part.replace(num_edges=np.array([len(s) for s, _ in both], dtype=np.int64),
                                           src=np.concatenate([s for s, _ in both]).astype(np.int64),
                                           dst=np.concatenate([d for _, d in both]).astype(np.int64)))


def keeps_neighbours(views: ViewBatch, candidates: Sequence[ViewBatch]) -> np.ndarray:
    """``(B, C)``: whether candidate ``j`` of row ``b`` keeps its centre's neighbours exactly as in ``views``."""
    before = centre_neighbours(views)
    after = [centre_neighbours(c) for c in candidates]
    return np.array([[np.array_equal(before[b], after[j][b]) for j in range(len(candidates))]
                     for b in range(len(views))], dtype=bool).reshape(len(views), len(candidates))


def infogcl_views(ratio: float = 0.2) -> InfoMinViews:
    """InfoGCL's candidates: GraphCL's four augmentations at ``ratio``, then the RWR view itself.

    >>> infogcl_views()
    InfoMinViews(
        AttributeMask(ratio=0.2)  # candidate 0
        NodeDrop(ratio=0.2)  # candidate 1
        Subgraph(keep_ratio=0.2)  # candidate 2
        EdgePerturb(ratio=0.2)  # candidate 3
        Identity()  # candidate 4
    )
    """
    check_probability("ratio", ratio)
    return InfoMinViews([AttributeMask(ratio), NodeDrop(ratio), Subgraph(ratio), EdgePerturb(ratio), Identity()])
