"""GraphCL's augmentations (You et al., 2020), re-implemented on GCC views.

Node dropping, subgraph, edge perturbation and attribute masking, one picked uniformly per view
(:func:`graphcl_view`, GraphCL's ``--aug random4``), each at GraphCL's ratio (``aug_ratio = 0.2``; Shen-Lab/GraphCL
``semisupervised_TU``). Differences from GraphCL's code, all forced by the GCC setting or its small views:

* the centre (node 0) is never dropped and the subgraph grows from it;
* counts are ``floor(ratio * size + u)``, ``u ~ U[0, 1)`` (expectation ``ratio * size``), not ``int(ratio * size)``;
* edges are undirected (dropped / added in both directions), added edges are distinct non-edges, no self-loops;
* structural edits recompute the eigen features of the edited view (GCC's features are the view's own
  Laplacian eigenvectors); attribute masking acts on ``PE`` rows, replaced by their mean (GraphCL's token).
"""
from __future__ import annotations

import dgl
import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import RandomChoice, check_probability
from gcc_sgcl.sampling.view import PE


def _pe_size(view: dgl.DGLGraph) -> int:
    return view.ndata[PE].shape[1]


class NodeDrop:
    """Drop ``floor(ratio * n + u)`` uniformly chosen non-centre nodes (GraphCL's ``drop_nodes``).

    >>> NodeDrop(0.2)
    NodeDrop(ratio=0.2)
    """

    def __init__(self, ratio: float):
        self.ratio = check_probability("ratio", ratio)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        n = view.num_nodes()
        count = min(F.stochastic_count(self.ratio * n, rng.random()), n - 1)
        if count <= 0:
            return view
        dropped = rng.choice(np.arange(1, n), size=count, replace=False)
        return F.induced_view(view, np.setdiff1d(np.arange(n), dropped), True, _pe_size(view))

    def __repr__(self) -> str:
        return f"NodeDrop(ratio={self.ratio})"


class Subgraph:
    """Keep ``max(1, floor(keep_ratio * n + u))`` nodes grown from the centre (GraphCL's ``subgraph``).

    GraphCL grows the node set by adding a uniformly chosen neighbour of the set (its "random walk"); its
    released code never updates the frontier (``set.union`` result discarded), which is done here. On a
    disconnected view the set stays in the centre's component and may end up smaller.

    >>> Subgraph(0.2)
    Subgraph(keep_ratio=0.2)
    """

    def __init__(self, keep_ratio: float):
        self.keep_ratio = check_probability("keep_ratio", keep_ratio)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        n = view.num_nodes()
        target = max(1, F.stochastic_count(self.keep_ratio * n, rng.random()))
        nodes = F.grow_subgraph(view, target, rng.random(target - 1))
        return view if nodes.size == n else F.induced_view(view, nodes, True, _pe_size(view))

    def __repr__(self) -> str:
        return f"Subgraph(keep_ratio={self.keep_ratio})"


class EdgePerturb:
    """Remove ``c = floor(ratio * m + u)`` of the ``m`` undirected edges and add ``c`` non-edges, both uniformly
    (GraphCL's ``permute_edges``; fewer are added when the view has fewer non-edges).

    >>> EdgePerturb(0.2)
    EdgePerturb(ratio=0.2)
    """

    def __init__(self, ratio: float):
        self.ratio = check_probability("ratio", ratio)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        u, v = F.undirected_edges(view)
        count = F.stochastic_count(self.ratio * len(u), rng.random())
        if count == 0:
            return view
        a, b = F.non_edges(u, v, view.num_nodes())
        removed = rng.choice(len(u), size=count, replace=False)
        added = rng.choice(len(a), size=min(count, len(a)), replace=False)
        kept = np.setdiff1d(np.arange(len(u)), removed)
        return F.edge_view(
            view, np.concatenate([u[kept], a[added]]), np.concatenate([v[kept], b[added]]), _pe_size(view)
        )

    def __repr__(self) -> str:
        return f"EdgePerturb(ratio={self.ratio})"


class AttributeMask:
    """Replace the ``PE`` rows of ``floor(ratio * n + u)`` uniformly chosen nodes by the mean row (GraphCL's
    ``mask_nodes`` with its mean-feature token).

    >>> AttributeMask(0.2)
    AttributeMask(ratio=0.2)
    """

    def __init__(self, ratio: float):
        self.ratio = check_probability("ratio", ratio)

    def __call__(self, view: dgl.DGLGraph, rng: np.random.Generator) -> dgl.DGLGraph:
        n = view.num_nodes()
        count = min(F.stochastic_count(self.ratio * n, rng.random()), n)
        return F.mask_rows(view, np.sort(rng.choice(n, size=count, replace=False)))

    def __repr__(self) -> str:
        return f"AttributeMask(ratio={self.ratio})"


def graphcl_view(ratio: float = 0.2) -> RandomChoice:
    """One of GraphCL's four augmentations per call, uniformly (``random4``), all at ``ratio``.

    >>> graphcl_view()
    RandomChoice(
        NodeDrop(ratio=0.2)  # p=0.25
        Subgraph(keep_ratio=0.2)  # p=0.25
        EdgePerturb(ratio=0.2)  # p=0.25
        AttributeMask(ratio=0.2)  # p=0.25
    )
    """
    return RandomChoice([NodeDrop(ratio), Subgraph(ratio), EdgePerturb(ratio), AttributeMask(ratio)])
