"""Embed your own graphs from Python with a pre-trained encoder (the same views and inference rule as
``scripts/generate.sh``).

>>> import tempfile, networkx as nx
>>> from gcc_sgcl.engine.pretrain import pretrain
>>> from gcc_sgcl.presets import make_config
>>> folder = tempfile.mkdtemp()
>>> cfg = make_config("gcc", {"train": {"steps": 2, "batch_size": 8, "output_dir": folder, "run_name": "tiny"}})
>>> run = pretrain(cfg, progress=False, graphs=[as_dgl_graph(nx.barabasi_albert_graph(200, 3, seed=0))])
>>> enc = load_encoder(run)
>>> enc.embed_nodes(nx.karate_club_graph()).shape
(34, 64)
>>> enc.embed_graphs([nx.cycle_graph(5), nx.star_graph(7)]).shape
(2, 64)
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Sequence

import dgl
import networkx as nx
import numpy as np
import scipy.sparse as sp
import torch

from gcc_sgcl.classical import joined, structural_vector
from gcc_sgcl.config import Config, visit_budget_power
from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData
from gcc_sgcl.data.graphs import graph_from_networkx, graph_from_scipy, simple_undirected_graph
from gcc_sgcl.data.load import load_file
from gcc_sgcl.data.readers import MAX_NODES, SPARE_NODES, node_count_limit
from gcc_sgcl.engine import checkpoint, views
from gcc_sgcl.models import GraphEncoder
from gcc_sgcl.engine.stream import ViewSource, stream_plan, streamed_rows
from gcc_sgcl.engine.threads import ThreadPlan
from gcc_sgcl.sampling.dataset import GraphViewDataset, NodeViewDataset
from gcc_sgcl.settings import SEED

GraphLike = Any
"""A ``dgl.DGLGraph``, a ``networkx.Graph``, a scipy sparse adjacency matrix or an ``(src, dst)`` pair of arrays."""
SEED_LIMIT = int(SEED.high) + 1  # seeds key the views as uint64 (gcc_sgcl.sampling.keys), as generate's --seed


def _check_node_count(n: int, edges: int, what: str) -> None:
    """Refuse, before anything is allocated, a graph of ``n`` nodes (``what`` names the value that implies it) for
    ``edges`` edges beyond :func:`~gcc_sgcl.data.readers.node_count_limit`: ids are positions ``0..n-1``, so an id
    far beyond the edges is a label, not a position, and would build that many nodes."""
    if n > node_count_limit(edges):
        raise ValueError(f"{what} makes a graph of {n} nodes for {edges} edges, more than {node_count_limit(edges)} "
                         f"(2 x edges + {SPARE_NODES}, at most {MAX_NODES}; ids are positions 0..n-1): relabel the "
                         f"nodes 0..n-1, e.g. with np.unique(ids, return_inverse=True), or pass a networkx graph")


def _check_seed(seed: Any) -> None:
    """Refuse a ``seed`` that is not an integer in ``0..2**64-1`` (a bool, a float such as 1.5, a string, None),
    naming ``seed``: views are keyed by it, and ``int(1.5)`` would silently give the rows of seed 1."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer in 0..{SEED_LIMIT - 1}, got {type(seed).__name__} {seed!r}")
    if not 0 <= int(seed) < SEED_LIMIT:
        raise ValueError(f"seed must be an integer in 0..{SEED_LIMIT - 1}, got {seed}")


def _refuse_bools(nodes: list, n: int, graph: GraphLike) -> None:
    """Refuse booleans among node ids: a list of bools is a mask only with one entry per node (``n``), and a list
    mixing bools and ids has no meaning (``True`` would read as node 1). A networkx graph whose nodes are bools
    is named by them."""
    named = {v for v in graph.nodes if isinstance(v, (bool, np.bool_))} if isinstance(graph, nx.Graph) else set()
    flags = [i for i, v in enumerate(nodes) if isinstance(v, (bool, np.bool_)) and v not in named]
    if flags and len(flags) == len(nodes):
        raise ValueError(f"nodes: a list of {len(nodes)} booleans is a mask only with one entry per node ({n})")
    if flags:
        raise TypeError(f"nodes: mixes booleans and node ids (nodes[{flags[0]}] is {nodes[flags[0]]!r}): pass a "
                        f"boolean mask of {n} entries or the ids")


def as_dgl_graph(graph: GraphLike) -> dgl.DGLGraph:
    """The simple undirected (bidirected) ``DGLGraph`` of ``graph``; node ``i`` is the ``i``-th node of a
    networkx graph's ``nodes``, row/column ``i`` of a matrix, id ``i`` of a DGL graph or an ``(src, dst)`` pair.

    >>> as_dgl_graph(([0, 1], [1, 2])).num_edges()
    4
    """
    if isinstance(graph, dgl.DGLGraph):
        if len(graph.ntypes) > 1 or len(graph.canonical_etypes) > 1:
            raise TypeError(f"a heterograph ({len(graph.ntypes)} node types, {len(graph.canonical_etypes)} edge "
                            f"types) has no one node numbering: pass dgl.to_homogeneous(graph)")
        _check_node_count(graph.num_nodes(), graph.num_edges(), "the DGLGraph's num_nodes()")
        src, dst = graph.edges()
        return simple_undirected_graph(src.numpy(), dst.numpy(), graph.num_nodes())
    if isinstance(graph, nx.Graph):
        return graph_from_networkx(graph)[0]
    if sp.issparse(graph):
        if len(graph.shape) == 2:
            _check_node_count(max(graph.shape), graph.nnz, f"the matrix shape {graph.shape}")
        return graph_from_scipy(graph)[0]
    if isinstance(graph, tuple) and len(graph) == 2:
        src, dst = (np.asarray(a).ravel() for a in graph)
        for name, ids in (("src", src), ("dst", dst)):
            if ids.size and ids.dtype.kind not in "iu":
                raise TypeError(f"(src, dst): {name} must hold integer node ids, got {ids.dtype} values")
        top = max((int(ids.max()) for ids in (src, dst) if ids.size), default=-1)  # before a uint64 id can wrap
        _check_node_count(top + 1, max(src.size, dst.size), f"(src, dst): node id {top}")
        src, dst = src.astype(np.int64), dst.astype(np.int64)
        return simple_undirected_graph(src, dst, top + 1)
    raise TypeError(f"expected a DGLGraph, a networkx graph, a scipy sparse matrix or (src, dst), got {type(graph)}")


def _positions(graph: GraphLike, n: int, nodes: Iterable | None) -> np.ndarray:
    """The node positions ``0..n-1`` that ``nodes`` names: every node when None, the ``True`` entries of a boolean
    mask of length ``n`` (numpy, torch, or a list of ``n`` bools), else the nodes of a networkx graph's ``nodes`` or the ids
    of any other input. A non-boolean sequence of length ``n`` holding only 0s and 1s with repeats is refused as
    ambiguous (a 0/1 mask or node ids?): pass ``mask.astype(bool)`` or the ids."""
    if nodes is None:
        return np.arange(n)
    if isinstance(nodes, torch.Tensor):
        nodes = nodes.detach().cpu().numpy()
    _refuse_ambiguous_mask(nodes, n)
    if isinstance(nodes, (list, tuple)) and len(nodes) == n and all(isinstance(v, (bool, np.bool_)) for v in nodes):
        nodes = np.asarray(nodes, dtype=bool)
    if isinstance(nodes, np.ndarray):
        if nodes.dtype == bool:
            if nodes.shape != (n,):
                raise ValueError(f"nodes: a boolean mask needs one entry per node ({n}), got shape {nodes.shape}")
            return np.flatnonzero(nodes)
        if nodes.ndim != 1:
            raise TypeError(f"nodes must be a 1-D sequence of nodes, got an array of shape {nodes.shape}")
        nodes = nodes.tolist()
    elif isinstance(nodes, (str, bytes)) or not isinstance(nodes, Iterable):
        raise TypeError(f"nodes must be a sequence of nodes or a boolean mask, got {type(nodes).__name__}")
    nodes = list(nodes)
    _refuse_bools(nodes, n, graph)
    if isinstance(graph, nx.Graph):
        position = {v: i for i, v in enumerate(graph.nodes)}
        try:
            missing = [v for v in nodes if v not in position]
        except TypeError as error:  # an unhashable value
            raise TypeError(f"nodes must hold networkx nodes (hashable values): {error}") from None
        if missing:
            raise ValueError(f"nodes: {missing[0]!r} is not a node of the networkx graph ({len(missing)} of the "
                             f"{len(nodes)} given are not)")
        return np.array([position[v] for v in nodes], dtype=np.int64)
    items = np.asarray(nodes)
    if items.size and (items.ndim != 1 or items.dtype.kind not in "iu"):
        raise TypeError(f"nodes must be integer node ids in 0..{n - 1}, got {items.dtype} values of shape "
                        f"{items.shape}")
    items = items.astype(np.int64)
    if items.size and (items.min() < 0 or items.max() >= n):
        raise ValueError(f"nodes must be ids in 0..{n - 1} (the graph has {n} nodes)")
    return items


def _refuse_ambiguous_mask(nodes: Any, n: int) -> None:
    """A ValueError for a non-boolean length-``n`` sequence of 0/1 values with repeats (see :func:`_positions`)."""
    if isinstance(nodes, (str, bytes)) or not isinstance(nodes, (np.ndarray, list, tuple)) or len(nodes) != n:
        return
    values = np.asarray(nodes, dtype=object).ravel() if not isinstance(nodes, np.ndarray) else nodes.ravel()
    if isinstance(nodes, np.ndarray) and nodes.dtype == bool:
        return
    if any(isinstance(v, (bool, np.bool_)) for v in values):
        return
    try:
        zero_one = all(v in (0, 1) for v in values.tolist())
    except TypeError:
        return
    if zero_one and len(set(values.tolist())) < n:
        raise ValueError(f"nodes: {n} values, all 0 or 1 -- a 0/1 mask or node ids? Pass a boolean mask "
                         f"(e.g. mask.astype(bool)) or the node ids")


def _check_settings(batch_size: int, copies: int, seed: int = 0, threads: int | None = None,
                    workers: int | None = None) -> None:
    """Refuse a ``batch_size`` or ``copies`` that is not an integer >= 1, ``threads`` or ``workers`` that are
    neither None nor an integer >= 0, or a bad ``seed`` (:func:`_check_seed`), naming the parameter."""
    for name, value, low in (("batch_size", batch_size, 1), ("copies", copies, 1), ("threads", threads, 0),
                             ("workers", workers, 0)):
        if value is None and name in ("threads", "workers"):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            kind = "" if isinstance(value, (int, np.integer)) else f" (a {type(value).__name__})"
            raise ValueError(f"{name} must be an integer >= {low}{' or None' if low == 0 else ''}, got {value!r}{kind}")
    _check_seed(seed)


class Encoder:
    """A frozen pre-trained encoder. A node's row is the mean of the embeddings of ``copies`` independent RWR
    views of it (default 32, :data:`~gcc_sgcl.engine.views.INFERENCE_COPIES`: the views study's count), a
    graph's the mean over ``copies`` sign draws of its eigenvectors (default GCC's 2); ``copies=2`` is GCC's
    ``generate.py``, the tables' protocol. Views are pure functions of ``seed`` and the node or graph index, built
    single-threaded as ``generate`` builds them, so calls repeat exactly and give ``generate``'s rows."""

    def __init__(self, model: GraphEncoder, cfg: Config) -> None:
        self.model = model
        self.cfg = cfg
        self.last_plan: ThreadPlan | None = None  # the threads and view builders of the last call

    @property
    def hidden_size(self) -> int:
        """Width of an embedding row."""
        return self.cfg.model.hidden_size

    def embed_nodes(self, graph: GraphLike, nodes: Sequence[int] | None = None, batch_size: int = 256,
                    seed: int = 0, copies: int = views.INFERENCE_COPIES,
                    visit_budget: str = "pretrain", with_structural: bool = False,
                    progress: bool = False, threads: int | None = None, workers: int | None = None) -> np.ndarray:
        """``(len(nodes), hidden)`` float32 embeddings of ``nodes`` (default: every node, row ``i`` = node ``i``):
        nodes of a networkx graph's ``nodes``, ids ``0..n-1`` of any other input, or a boolean numpy / torch mask
        of length n. ``visit_budget`` is the walks' budget rule, as ``generate --visit-budget``
        (:data:`~gcc_sgcl.config.VISIT_BUDGETS`). ``with_structural`` appends the training-free structural vector
        of each node (z-scored over all nodes of the graph), each block divided by its mean row norm over the
        returned rows: the tables' ``⊕ structural`` rows when every node is embedded. ``progress`` shows a
        progress bar over the views (32 views of a few thousand nodes take minutes on a CPU). Views are built by
        ``workers`` processes beside the model's ``threads`` torch threads, both decided from the cores when None
        (:func:`~gcc_sgcl.engine.threads.plan_threads`; the choice is kept in ``last_plan``); rows do not depend
        on ``workers``."""
        _check_settings(batch_size, copies, seed, threads, workers)
        visit_budget_power(visit_budget)
        g = as_dgl_graph(graph)
        items = _positions(graph, g.num_nodes(), nodes)
        if g.num_nodes() and not g.num_edges():
            raise ValueError(f"the graph has no edges: all {g.num_nodes()} nodes are isolated, so every RWR view is "
                             f"one node (generate.sh refuses such a dataset too)")
        rows = self._embed(NodeViewDataset(g, self.cfg.sampling, seed, 0, visit_budget), items, batch_size, copies,
                           progress, threads, workers)
        return joined(rows, structural_vector([g], per_graph=False)[items]) if with_structural else rows

    def embed_graphs(self, graphs: Sequence[GraphLike], batch_size: int = 256, seed: int = 0,
                     copies: int = views.GRAPH_COPIES, with_structural: bool = False,
                     progress: bool = False, threads: int | None = None, workers: int | None = None) -> np.ndarray:
        """``(len(graphs), hidden)`` float32 embeddings of a list of whole graphs (a graph without nodes, or a list in
        which no graph has an edge, is refused, as ``generate.sh`` refuses such a collection; an edgeless graph among
        others is embedded, as there); ``with_structural`` appends each graph's structural vector (z-scored over
        the given graphs); ``progress``, ``threads`` and ``workers`` as :meth:`embed_nodes`."""
        _check_settings(batch_size, copies, seed, threads, workers)
        if isinstance(graphs, (dgl.DGLGraph, nx.Graph)) or sp.issparse(graphs):
            raise TypeError(f"embed_graphs takes a list of graphs, got one {type(graphs).__name__}: pass [graph] "
                            f"(or use embed_nodes for its nodes)")
        dataset = []
        for i, g in enumerate(graphs):
            try:
                dataset.append(as_dgl_graph(g))
            except TypeError as error:
                raise TypeError(f"graphs[{i}]: {error}") from None
        empty = [i for i, g in enumerate(dataset) if not g.num_nodes()]
        if empty:
            raise ValueError(f"graphs[{empty[0]}] has no nodes ({len(empty)} of the {len(dataset)} graphs have none): "
                             f"nothing to embed (generate.sh refuses such a collection too)")
        if dataset and not any(g.num_edges() for g in dataset):
            raise ValueError(f"none of the {len(dataset)} graphs has an edge: every view would be edgeless "
                             f"(generate.sh refuses such a collection too; single edgeless graphs are embedded)")
        rows = self._embed(GraphViewDataset(dataset, self.cfg.sampling, seed), np.arange(len(dataset)), batch_size,
                           copies, progress, threads, workers)
        return joined(rows, structural_vector(dataset, per_graph=True)) if with_structural and len(dataset) else rows

    def _embed(self, dataset: NodeViewDataset | GraphViewDataset, items: np.ndarray, batch_size: int, copies: int,
               progress: bool = False, threads: int | None = None, workers: int | None = None) -> np.ndarray:
        """The rows of ``items``: the mean over ``copies`` of the embeddings of their views in ``dataset``, streamed
        (:func:`~gcc_sgcl.engine.stream.streamed_rows`: views built chunk by chunk by ``workers`` processes beside
        the model's ``threads``, both decided from the cores when None; the plan is kept in ``last_plan``)."""
        if items.size == 0:
            return np.zeros((0, self.hidden_size), dtype=np.float32)
        sources = [ViewSource(dataset, items, copies)]
        self.last_plan = stream_plan(self.model, sources, threads, workers)
        return streamed_rows(self.model, sources, batch_size, self.last_plan, "views", progress)


def read_graph_file(path: str | Path, labels: str | Path | None = None) -> NodeLabelData | GraphLabelData:
    """A graph file read exactly as ``generate.sh`` and the task scripts read it (:mod:`gcc_sgcl.data.files`: edge
    lists with quoted or string ids, ``.mtx``, GraphML, GML, DGL binary, GIN text, TU), so that the rows of
    :meth:`Encoder.embed_nodes` / :meth:`Encoder.embed_graphs` on what it returns are ``generate``'s for the file. One
    graph gives a ``NodeLabelData`` (``.graph``; ``.ids[i]``, node ``i``'s id in the file; ``.labels``), a
    collection a ``GraphLabelData`` (``.graphs``, ``.labels``); ``labels`` is a labels file (``id label`` lines;
    ``-1`` for items it does not name or whose label is missing). A malformed file raises a ``DataFormatError`` (a
    ``ValueError``) naming the file and line.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "cities.csv")
    >>> _ = open(path, "w").write('"New York","Los Angeles"\\n"Los Angeles",Boston\\n')
    >>> data = read_graph_file(path)
    >>> data.graph.num_nodes(), data.ids.tolist()
    (3, ['New York', 'Los Angeles', 'Boston'])
    """
    return load_file(str(path), None if labels is None else str(labels))


def load_encoder(path: str | Path, device: str = "cpu") -> Encoder:
    """The encoder of a run folder (or checkpoint file), e.g. ``saved/<run>`` or a shipped checkpoint, on the torch
    ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``); an unknown device is refused naming the argument."""
    try:
        torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be a torch device such as 'cpu' or 'cuda:0', got {device!r}") from None
    return Encoder(*checkpoint.load_encoder_checkpoint(path, device)[:2])
