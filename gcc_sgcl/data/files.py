"""Datasets given by path: a graph or a graph collection read by its file format, node labels and
similarity pairs keyed by the file's own node ids.

=================  ==================================================================  ===========
format             recognised by                                                        kind
=================  ==================================================================  ===========
edge list          ``.edgelist``, ``.csv``, ``.tsv``, ``.el``, or ``.txt`` (see GIN)    node
Matrix Market      ``.mtx`` (coordinate; ids are the 1-based row numbers)               node
GraphML, GML       ``.graphml``, ``.gml`` (networkx; ids: node ids, GML labels if unique)  node
DGL binary         ``.bin``, ``.dgl`` (``dgl.save_graphs``): one graph                  node
                   several graphs (labels: its one label tensor, if any)                graph
GIN/DGCNN text     ``.txt`` whose first line is one number (the number of graphs)       graph
TU                 a directory or ``.zip`` holding ``NAME_A.txt``, ...                  graph
=================  ==================================================================  ===========

Text formats may be gzipped (``name.edgelist.gz``). An edge list has one edge ``u v`` per line (fields
separated by whitespace and/or commas, further columns ignored, ``#``/``%`` comment lines), ids integers or
arbitrary strings; nodes are numbered in order of first appearance and ``ids[i]`` keeps node ``i``'s id.
Ids are integers only when every one is written as Python writes an integer (``01`` and ``1`` are two string
ids). An edge list's first line is a header (skipped) when its two ids are not numbers and all the others are
integers. Node labels and pairs files have two such fields per line and name nodes by those ids (integer ids by
value: ``03`` names node ``3``; string ids as written); their first line is a header when none of its ids is a
node id or a number, else an unknown id there stops the run like on any other line. Labels are ``0..C-1`` in
sorted order of the distinct label values, ``-1`` for nodes (or graphs) a labels file does not name or labels
missing (``nan``, ``NA``, ``null``, ...: :data:`MISSING_LABELS`).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import dgl
import networkx as nx
import numpy as np

from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData
from gcc_sgcl.data.graphs import graph_from_networkx, reindex_first_appearance, remap_labels, simple_undirected_graph
from gcc_sgcl.data.readers import (
    MAX_NODES,
    SPARE_NODES,
    is_number,
    node_count_limit,
    read_gin_graphs,
    read_id_edge_list,
    read_matrix_market,
    read_tu_graphs,
    read_two_columns,
    tu_name,
)
from gcc_sgcl.data.text import DataFormatError, LineReader, open_bytes, open_text, quoted, split_fields

UNLABELLED = -1
MISSING_LABELS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                            "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
"""Labels that say "missing" (pandas' ``read_csv`` spellings of NA): the item stays unlabelled (-1), never a class."""
_DECIMAL = re.compile(r"[+-]?[0-9]+")  # an integer id in a labels or pairs file, leading zeros allowed

_BY_SUFFIX = {
    ".edgelist": "edge list", ".csv": "edge list", ".tsv": "edge list", ".el": "edge list",
    ".mtx": "Matrix Market", ".graphml": "GraphML", ".gml": "GML", ".bin": "DGL binary", ".dgl": "DGL binary",
    ".zip": "TU",
}


def _suffix(path: Path) -> str:
    """The format suffix of ``path``, looking through a final ``.gz``."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def dataset_stem(path: str | Path) -> str:
    """The name a dataset file goes by (embedding files, result rows): its file name without the format
    suffix and a final ``.gz``.

    >>> dataset_stem("data/usa-airports.edgelist"), dataset_stem("x/edges.txt.gz"), dataset_stem("tu/MUTAG/")
    ('usa-airports', 'edges', 'MUTAG')
    """
    path = Path(path)
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    suffix = _suffix(path)
    stem = name[: -len(suffix)] if suffix and not path.is_dir() else name
    check_stem(stem, path)
    return stem


def check_stem(stem: str, path: Path) -> None:
    """Refuse a dataset ``stem`` that names no file of its own (``""``, ``.``, ``..``: ``.`` given as the dataset,
    or a file named ``.edgelist``), which would write ``<run>/.npy``; the error names ``path``.

    >>> check_stem("", Path("x/.edgelist"))
    Traceback (most recent call last):
    ...
    ValueError: x/.edgelist: gives no dataset name to write its files under (its name without the format suffix is ''); rename it
    """
    if stem.strip(".") == "":
        folder = Path(path).resolve() if Path(path).is_dir() else None
        raise ValueError(f"{path}: gives no dataset name to write its files under (its name without the format suffix "
                         f"is {stem!r}); " + (f"give it by a path ending in its name, e.g. {folder}" if folder else
                                              "rename it"))


def file_format(path: Path) -> str:
    """Which format :func:`read_dataset_file` reads ``path`` as (see the module table)."""
    if path.is_dir():
        return "TU"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or directory")
    suffix = _suffix(path)
    if suffix == ".txt":
        with open_text(path) as f:
            first = next(iter(LineReader(f, str(path), comments=("#", "%"), split=split_fields)), [])
        return "GIN" if len(first) == 1 else "edge list"
    if suffix not in _BY_SUFFIX:
        known = ", ".join(sorted({".txt", *_BY_SUFFIX}))
        raise DataFormatError(f"{path}: unknown graph file type {suffix or '(none)'!r}; expected one of {known} "
                              f"(optionally .gz), or a TU directory")
    return _BY_SUFFIX[suffix]


def check_ids(path: Path, ids: np.ndarray) -> None:
    """Refuse node ids holding a line break (a GraphML or GML id may): ``<stem>.ids.txt`` keeps one id per line, so
    every row after such an id would be read as another node's."""
    if ids.dtype.kind != "U" or not ids.size:
        return
    broken = np.flatnonzero(np.char.find(ids, "\n") >= 0)
    broken = np.union1d(broken, np.flatnonzero(np.char.find(ids, "\r") >= 0))
    if broken.size:
        raise DataFormatError(f"{path}: node id {quoted(str(ids[broken[0]]))} holds a line break ({broken.size} ids "
                              f"do): ids.txt keeps one id per line; rename the node(s)")


def _node_data(path: Path, graph: dgl.DGLGraph, ids: np.ndarray) -> NodeLabelData:
    check_ids(path, ids)
    return NodeLabelData(dataset_stem(path), graph, np.full(graph.num_nodes(), UNLABELLED, dtype=np.int64), ids)


def _read_edge_list(path: Path) -> NodeLabelData:
    edges, ids = reindex_first_appearance(read_id_edge_list(path))
    return _node_data(path, simple_undirected_graph(edges[:, 0], edges[:, 1], ids.size), ids)


def _read_mtx(path: Path) -> NodeLabelData:
    n, edges = read_matrix_market(path)
    return _node_data(path, simple_undirected_graph(edges[:, 0], edges[:, 1], n), np.arange(1, n + 1))


def _read_networkx(read: Callable[[Path], nx.Graph], what: str) -> Callable[[Path], NodeLabelData]:
    def read_file(path: Path) -> NodeLabelData:
        try:
            graph = read(path)
        except Exception as error:  # networkx and xml raise many types; all mean a malformed file
            raise DataFormatError(f"{path}: not a valid {what} file: {error}") from error
        return _node_data(path, *graph_from_networkx(graph))
    return read_file


def _read_graphml(path: Path) -> nx.Graph:
    with open_bytes(path) as f:
        return nx.read_graphml(f)


def _read_gml(path: Path) -> nx.Graph:
    """A GML graph whose nodes are their ``label`` when every node has a distinct one (networkx's reading,
    which round-trips ``nx.write_gml``), else their ``id``."""
    with open_text(path) as f:
        g = nx.parse_gml(f, label=None)
    names = [g.nodes[v].get("label") for v in g]
    if None in names or len(set(names)) < len(names):
        return g
    return nx.relabel_nodes(g, dict(zip(g, names)))


def _read_dgl(path: Path) -> NodeLabelData | GraphLabelData:
    try:
        graphs, tensors = dgl.load_graphs(str(path))
    except Exception as error:  # DGLError carries a C++ stack trace; keep its first line
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DataFormatError(f"{path}: not a DGL binary (dgl.save_graphs): {first_line}") from error
    for i, g in enumerate(graphs):  # before any per-node array: a 5 KB file may declare 3e9 nodes
        if g.num_nodes() > node_count_limit(g.num_edges()):
            which = f"graph {i + 1} of {len(graphs)}" if len(graphs) > 1 else "its graph"
            raise DataFormatError(f"{path}: {which} declares {g.num_nodes()} nodes for {g.num_edges()} edges, more "
                                  f"than {node_count_limit(g.num_edges())} (2 x edges + {SPARE_NODES}, at most "
                                  f"{MAX_NODES}): a damaged or hand-edited file?")
    simple = [simple_undirected_graph(*(t.numpy() for t in g.edges()), g.num_nodes()) for g in graphs]
    if len(simple) == 1:
        return _node_data(path, simple[0], np.arange(simple[0].num_nodes()))
    per_graph = [t.numpy() for t in tensors.values() if t.ndim == 1 and len(t) == len(simple)]
    if len(per_graph) > 1:
        raise DataFormatError(f"{path}: several per-graph tensors ({', '.join(tensors)}); keep one label tensor")
    labels = _tensor_labels(path, per_graph[0]) if per_graph else np.full(len(simple), UNLABELLED, dtype=np.int64)
    return GraphLabelData(dataset_stem(path), simple, labels)


def _tensor_labels(path: Path, values: np.ndarray) -> np.ndarray:
    """Classes ``0..C-1`` of a DGL binary's label tensor, ``-1`` (unlabelled) where a float tensor holds NaN; a
    label that is not an integer (1.5, inf, a complex or bool tensor) is refused naming the file."""
    if values.dtype.kind not in "iuf":
        raise DataFormatError(f"{path}: the label tensor holds {values.dtype} values; expected integer classes")
    missing = np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, dtype=bool)
    known = values[~missing]
    if values.dtype.kind == "f" and not (np.isfinite(known).all() and (known == np.round(known)).all()):
        odd = known[~(np.isfinite(known) & (known == np.round(known)))][0]
        raise DataFormatError(f"{path}: the label tensor holds {odd}, not an integer class (NaN marks a graph "
                              f"unlabelled)")
    labels = np.full(values.shape, UNLABELLED, dtype=np.int64)
    labels[~missing] = remap_labels(known) if known.size else known
    return labels


def _read_gin(path: Path) -> GraphLabelData:
    graphs, raw = read_gin_graphs(path)
    return GraphLabelData(dataset_stem(path), graphs, remap_labels(raw))


def _read_tu(path: Path) -> GraphLabelData:
    graphs, raw = read_tu_graphs(path, tu_name(path))
    return GraphLabelData(dataset_stem(path), graphs, remap_labels(raw))


_READERS = {
    "edge list": _read_edge_list,
    "Matrix Market": _read_mtx,
    "GraphML": _read_networkx(_read_graphml, "GraphML"),
    "GML": _read_networkx(_read_gml, "GML"),
    "DGL binary": _read_dgl,
    "GIN": _read_gin,
    "TU": _read_tu,
}


_TXT_RULES = {
    "GIN": "read as GIN/DGCNN text because its first line is a single field, as GIN's graph count; for an edge "
           "list whose first line is a node count, delete that line or make it a comment ('# ...')",
    "edge list": "read as an edge list because its first line is not a single field; GIN/DGCNN text starts with a "
                 "line holding only the graph count",
}
"""Why a ``.txt`` file was read as it was, and how to have it read as the other format."""


def read_dataset_file(path: str | Path) -> NodeLabelData | GraphLabelData:
    """A graph file as a node dataset (every node unlabelled, ``ids`` = the file's node ids) or a graph
    collection as a graph dataset (labels from the collection's own format). An error reading a ``.txt`` file
    says which rule chose its format and how to choose the other (:data:`_TXT_RULES`)."""
    path = Path(path)
    fmt = file_format(path)
    try:
        return _READERS[fmt](path)
    except DataFormatError as error:
        if _suffix(path) != ".txt":
            raise
        raise DataFormatError(f"{error} ({_TXT_RULES[fmt]})") from None


class _IdIndex:
    """Position of each original id; a token is matched as an integer when the ids are integers."""

    def __init__(self, ids: np.ndarray):
        self._integer = np.issubdtype(ids.dtype, np.integer)
        self._position = {value: i for i, value in enumerate(ids.tolist())}

    def _key(self, token: str) -> int | str | None:
        if not self._integer:
            return token
        if not _DECIMAL.fullmatch(token):
            return None
        digits = token.lstrip("+-").lstrip("0") or "0"
        if len(digits) > 19:  # beyond int64, so no id (and a very long one beyond what int() converts)
            return None
        return -int(digits) if token.startswith("-") else int(digits)

    def get(self, token: str) -> int | None:
        """The position of the item ``token`` names, or None."""
        return self._position.get(self._key(token))

    def header(self, token: str) -> bool:
        """Whether ``token`` could be a header's column name: neither an id nor a number."""
        return self.get(token) is None and not is_number(token)


def _class_ids(values: list[str]) -> np.ndarray:
    """Classes ``0..C-1`` in sorted order of the distinct values (numeric order, and ``09`` = ``9``, when they
    are integers)."""
    text = np.asarray(values, dtype=str)
    try:
        return remap_labels(text.astype(np.int64))
    except (ValueError, OverflowError):
        return np.unique(text, return_inverse=True)[1].astype(np.int64).ravel()


def read_labels_file(path: str | Path, ids: np.ndarray, of: str) -> np.ndarray:
    """Class of each of ``len(ids)`` items from lines ``id label`` (``ids[i]`` is item ``i``'s id; ``of`` names
    the graph or collection in errors): ``0..C-1``, or ``-1`` for items the file does not name.

    A line naming an id twice, or an id not in ``ids``, raises a :class:`DataFormatError` at that line; the first
    line is skipped when it is a header (:meth:`_IdIndex.header`).
    """
    path, index = Path(path), _IdIndex(ids)
    positions, values, first_line = [], [], True
    labelled = np.zeros(len(ids), dtype=bool)
    for node, label, r in read_two_columns(path, "'node label' (two fields)", second_optional=True):
        position, header, first_line = index.get(node), first_line and index.header(node), False
        if position is None:
            if header:
                continue
            raise r.error(f"{quoted(node)} is not a node id of {of}")
        if labelled[position]:
            raise r.error(f"node {quoted(node)} labelled twice")
        labelled[position] = True
        if label in MISSING_LABELS:
            continue
        positions.append(position)
        values.append(label)
    if not positions:
        raise DataFormatError(f"{path}: no labels; expected lines 'node label' naming nodes of {of}")
    labels = np.full(len(ids), UNLABELLED, dtype=np.int64)
    labels[positions] = _class_ids(values)
    return labels


def read_pairs_file(path: str | Path, ids_1: np.ndarray, ids_2: np.ndarray, of_1: str, of_2: str) -> np.ndarray:
    """``(m, 2)`` int64 pairs (node of graph 1, node of graph 2) from lines ``id_1 id_2`` naming nodes by their
    original ids; an id absent from its graph raises at that line, except on a header first line (no id on it
    could name a node, :meth:`_IdIndex.header`)."""
    path, first, second = Path(path), _IdIndex(ids_1), _IdIndex(ids_2)
    pairs, first_line = [], True
    for a, b, r in read_two_columns(path, "a pair 'node_1 node_2' (two fields)"):
        u, v = first.get(a), second.get(b)
        header, first_line = first_line and first.header(a) and second.header(b), False
        if u is None or v is None:
            if header:
                continue
            raise r.error(f"{quoted(a)} is not a node id of {of_1}" if u is None else
                          f"{quoted(b)} is not a node id of {of_2}")
        pairs.append((u, v))
    if not pairs:
        raise DataFormatError(f"{path}: no pairs; expected lines 'node_1 node_2'")
    return np.asarray(pairs, dtype=np.int64)
