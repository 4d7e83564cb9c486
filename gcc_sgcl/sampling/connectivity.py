"""How well connected each view is: λ2 of its largest connected component (the report's λ2 quintiles)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from gcc_sgcl.sampling.batch import ViewBatch, offsets
from gcc_sgcl.sampling.spectral import eigen_arrays


def lambda2(views: ViewBatch) -> np.ndarray:
    """λ2 of each view: the smallest non-zero normalised-Laplacian eigenvalue of its largest connected
    component; NaN when that component has fewer than four nodes (eigen-features keep ``n - 2`` eigenvalues of
    an ``n``-node graph). A connected view's is read from its eigen-features; a disconnected view's (whose own
    second eigenvalue is 0) is computed on its largest component, so that disconnected views are ranked by
    how well their main part is connected rather than all tied at 0."""
    total = int(views.num_nodes.sum())
    base = np.repeat(views.node_ptr[:-1], views.num_edges)
    adjacency = sp.csr_matrix((np.ones(len(views.src)), (views.src + base, views.dst + base)), shape=(total, total))
    _, label = connected_components(adjacency, directed=False)  # components never span views
    size = np.bincount(label)
    view_of = np.zeros(len(size), dtype=np.int64)
    view_of[label] = views.node_view
    largest = np.zeros(len(views), dtype=np.int64)
    np.maximum.at(largest, view_of, size)
    parts = np.bincount(view_of, minlength=len(views))
    out = np.sort(views.eigval.astype(np.float64), axis=1)[:, min(1, views.k - 1)]
    split = np.flatnonzero((parts > 1) & (largest >= 4))
    if len(split):
        best = np.full(len(views), -1)
        candidates = np.flatnonzero(size == largest[view_of])
        best[view_of[candidates[::-1]]] = candidates[::-1]  # the first largest component of each view
        keep = label == best[views.node_view]
        new_id = np.cumsum(keep) - 1
        inside = keep[views.src + base] & keep[views.dst + base]
        counts = np.bincount(views.node_view[keep], minlength=len(views))
        first = offsets(counts)[:-1]
        edge_view = views.edge_view[inside]
        sub_src = new_id[(views.src + base)[inside]] - first[edge_view]
        sub_dst = new_id[(views.dst + base)[inside]] - first[edge_view]
        sub = np.isin(edge_view, split)
        _, _, lam = eigen_arrays(counts[split], np.bincount(edge_view[sub], minlength=len(views))[split],
                                 sub_src[sub], sub_dst[sub], 2)
        out[split] = lam[:, 1]
    return np.where(largest >= 4, np.maximum(out, 0.0), np.nan)
