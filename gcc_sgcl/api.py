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

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Sequence

import dgl
import networkx as nx
import numpy as np
import scipy.sparse as sp
import torch
from tqdm import tqdm

from gcc_sgcl.classical import joined, structural_vector
from gcc_sgcl.config import Config, visit_budget_power
from gcc_sgcl.data.graphs import graph_from_networkx, graph_from_scipy, simple_undirected_graph
from gcc_sgcl.engine import generate
from gcc_sgcl.models import GraphEncoder
from gcc_sgcl.sampling.dataset import GraphViewDataset, NodeViewDataset, sampling_threads

GraphLike = Any
"""A ``dgl.DGLGraph``, a ``networkx.Graph``, a scipy sparse adjacency matrix or an ``(src, dst)`` pair of arrays."""


def as_dgl_graph(graph: GraphLike) -> dgl.DGLGraph:
    """The simple undirected (bidirected) ``DGLGraph`` of ``graph``; node ``i`` is the ``i``-th node of a
    networkx graph's ``nodes``, row/column ``i`` of a matrix, id ``i`` of a DGL graph or an ``(src, dst)`` pair.

    >>> as_dgl_graph(([0, 1], [1, 2])).num_edges()
    4
    """
    if isinstance(graph, dgl.DGLGraph):
        src, dst = graph.edges()
        return simple_undirected_graph(src.numpy(), dst.numpy(), graph.num_nodes())
    if isinstance(graph, nx.Graph):
        return graph_from_networkx(graph)[0]
    if sp.issparse(graph):
        return graph_from_scipy(graph)[0]
    if isinstance(graph, tuple) and len(graph) == 2:
        src, dst = (np.asarray(a).ravel() for a in graph)
        for name, ids in (("src", src), ("dst", dst)):
            if ids.size and ids.dtype.kind not in "iu":
                raise TypeError(f"(src, dst): {name} must hold integer node ids, got {ids.dtype} values")
        src, dst = src.astype(np.int64), dst.astype(np.int64)
        return simple_undirected_graph(src, dst, int(max(src.max(initial=-1), dst.max(initial=-1)) + 1))
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


def _check_settings(batch_size: int, copies: int) -> None:
    for name, value in (("batch_size", batch_size), ("copies", copies)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


class Encoder:
    """A frozen pre-trained encoder. A node's row is the mean of the embeddings of ``copies`` independent RWR
    views of it (default 32, :data:`~gcc_sgcl.engine.generate.INFERENCE_COPIES`: the views study's count), a
    graph's the mean over ``copies`` sign draws of its eigenvectors (default GCC's 2); ``copies=2`` is GCC's
    ``generate.py``, the tables' protocol. Views are pure functions of ``seed`` and the node or graph index, built
    single-threaded as ``generate`` builds them, so calls repeat exactly and give ``generate``'s rows."""

    def __init__(self, model: GraphEncoder, cfg: Config) -> None:
        self.model = model
        self.cfg = cfg

    @property
    def hidden_size(self) -> int:
        """Width of an embedding row."""
        return self.cfg.model.hidden_size

    def embed_nodes(self, graph: GraphLike, nodes: Sequence[int] | None = None, batch_size: int = 256,
                    seed: int = 0, copies: int = generate.INFERENCE_COPIES,
                    visit_budget: str = "pretrain", with_structural: bool = False,
                    progress: bool = False) -> np.ndarray:
        """``(len(nodes), hidden)`` float32 embeddings of ``nodes`` (default: every node, row ``i`` = node ``i``):
        nodes of a networkx graph's ``nodes``, ids ``0..n-1`` of any other input, or a boolean numpy / torch mask
        of length n. ``visit_budget`` is the walks' budget rule, as ``generate --visit-budget``
        (:data:`~gcc_sgcl.config.VISIT_BUDGETS`). ``with_structural`` appends the training-free structural vector
        of each node (z-scored over all nodes of the graph), each block divided by its mean row norm over the
        returned rows: the tables' ``⊕ structural`` rows when every node is embedded. ``progress`` shows a
        progress bar over the views (32 views of a few thousand nodes take minutes on a CPU)."""
        _check_settings(batch_size, copies)
        visit_budget_power(visit_budget)
        g = as_dgl_graph(graph)
        items = _positions(graph, g.num_nodes(), nodes)
        if g.num_nodes() and not g.num_edges():
            raise ValueError(f"the graph has no edges: all {g.num_nodes()} nodes are isolated, so every RWR view is "
                             f"one node (generate.sh refuses such a dataset too)")
        rows = self._embed(lambda c: NodeViewDataset(g, self.cfg.sampling, seed, c, visit_budget), items,
                           batch_size, copies, progress)
        return joined(rows, structural_vector([g], per_graph=False)[items]) if with_structural else rows

    def embed_graphs(self, graphs: Sequence[GraphLike], batch_size: int = 256, seed: int = 0,
                     copies: int = generate.GRAPH_COPIES, with_structural: bool = False,
                     progress: bool = False) -> np.ndarray:
        """``(len(graphs), hidden)`` float32 embeddings of a list of whole graphs (a graph without edges is refused,
        as ``generate.sh`` refuses it); ``with_structural`` appends each graph's structural vector (z-scored over
        the given graphs), and ``progress`` shows a progress bar over the views, as :meth:`embed_nodes`."""
        _check_settings(batch_size, copies)
        if isinstance(graphs, (dgl.DGLGraph, nx.Graph)) or sp.issparse(graphs):
            raise TypeError(f"embed_graphs takes a list of graphs, got one {type(graphs).__name__}: pass [graph] "
                            f"(or use embed_nodes for its nodes)")
        dataset = []
        for i, g in enumerate(graphs):
            try:
                dataset.append(as_dgl_graph(g))
            except TypeError as error:
                raise TypeError(f"graphs[{i}]: {error}") from None
        for i, g in enumerate(dataset):
            if not g.num_edges():
                raise ValueError(f"graphs[{i}] has no {'edges' if g.num_nodes() else 'nodes'}: a graph's embedding "
                                 f"needs at least one edge (generate.sh refuses such a graph too)")
        rows = self._embed(lambda c: GraphViewDataset(dataset, self.cfg.sampling, seed, c), np.arange(len(dataset)),
                           batch_size, copies, progress)
        return joined(rows, structural_vector(dataset, per_graph=True)) if with_structural and len(dataset) else rows

    def _embed(self, views_of: Callable[[int], NodeViewDataset | GraphViewDataset], items: np.ndarray,
               batch_size: int, copies: int, progress: bool = False) -> np.ndarray:
        """The rows of ``items``: the mean over ``copies`` of the embeddings of ``views_of(copy)``'s views (a bar
        over the copies when ``progress``)."""
        if items.size == 0:
            return np.zeros((0, self.hidden_size), dtype=np.float32)
        def built(c: int):  # one copy's views at a time: embedding them holds only those in memory
            with sampling_threads():
                return views_of(c).__getitems__(items)

        bar = tqdm(range(copies), desc="views", unit="view", disable=not progress)
        return generate.embed_parts(self.model, [(built(c) for c in bar)], batch_size, progress=False)


def load_encoder(path: str | Path, device: str = "cpu") -> Encoder:
    """The encoder of a run folder (or checkpoint file), e.g. ``saved/<run>`` or a shipped checkpoint, on the torch
    ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``); an unknown device is refused naming the argument."""
    try:
        torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be a torch device such as 'cpu' or 'cuda:0', got {device!r}") from None
    return Encoder(*generate.load_encoder_checkpoint(path, device)[:2])
