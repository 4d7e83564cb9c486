"""Views for the augmentation tests and bit-level comparisons of view batches, shared by those tests."""
import dgl
import networkx as nx
import numpy as np

from gcc_sgcl.sampling.batch import NodeSets, ViewBatch, concat
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.induced import GraphIndex, build_views

K = 8  # eigen columns of the test views
NID_OFFSET = 100  # parent ids differ from view-local ids, so a transform that loses them is caught


def view_of(graph: nx.Graph, k: int = K, centre: int = 0) -> ViewBatch:
    """One view of the whole ``graph`` (nodes relabelled in sorted order), as the sampler builds one."""
    g = dgl.from_networkx(nx.convert_node_labels_to_integers(graph, ordering="sorted"))
    n = g.num_nodes()
    views = build_views(GraphIndex.of(g), NodeSets(np.array([n]), np.arange(n)), k, seed_pos=np.array([centre]))
    return views.replace(nid=views.nid + NID_OFFSET)


def degenerate_views() -> ViewBatch:
    """Tiny, edgeless, disconnected and symmetric views, some centred off node 0."""
    disconnected = nx.disjoint_union_all([nx.complete_graph(3), nx.path_graph(4), nx.empty_graph(2)])
    cases = [
        (nx.empty_graph(1), 0),
        (nx.path_graph(2), 0),
        (nx.path_graph(3), 0),
        (nx.complete_graph(3), 0),
        (nx.empty_graph(4), 1),
        (nx.empty_graph(4), 2),
        (disconnected, 0),
        (disconnected, 8),  # isolated centre
        (nx.complete_graph(6), 0),  # no non-edge to add
        (nx.complete_graph(7), 0),
        (nx.star_graph(6), 0),
        (nx.star_graph(6), 3),  # centre is a leaf
        (nx.cycle_graph(8), 0),  # every centrality equal (GCA's 0/0)
        (nx.cycle_graph(8), 5),
    ]
    return concat([view_of(graph, centre=centre) for graph, centre in cases])


def keys(views: ViewBatch, seed: int = 0) -> KeyedRandom:
    """One key row per view, of items ``0 .. len(views) - 1`` under ``seed``."""
    return KeyedRandom.for_items(seed, np.arange(len(views)))


def centres(views: ViewBatch) -> np.ndarray:
    """Parent id of every view's centre."""
    return views.nid[views.node_ptr[:-1] + views.seed_pos]


def snapshot(views: ViewBatch) -> dict[str, np.ndarray]:
    """Copies of every array of ``views``."""
    return {name: np.array(a, copy=True) for name, a in views.to_arrays().items()}


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype, shape and bytes (NaN padding included)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def views_equal(a: ViewBatch, b: ViewBatch) -> bool:
    """Every array of the two batches bit for bit equal."""
    sa, sb = a.to_arrays(), b.to_arrays()
    return sa.keys() == sb.keys() and all(same_bits(sa[n], sb[n]) for n in sa)


def unchanged(views: ViewBatch, snap: dict[str, np.ndarray]) -> bool:
    """Whether ``views`` still holds exactly the arrays of :func:`snapshot` ``snap``."""
    now = views.to_arrays()
    return now.keys() == snap.keys() and all(same_bits(now[n], snap[n]) for n in snap)
