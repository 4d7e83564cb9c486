"""The public loaders: registry lookup, file location, cached parsing, and a summary for verification."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import dgl

from gcc_sgcl.data.cache import Parsed, load_cached
from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.kinds import KINDS, kind_of_data
from gcc_sgcl.data.paths import resolve_data_dir
from gcc_sgcl.data.registry import get_spec

DataDir = str | os.PathLike | None


def graphs_of(data: Any) -> list[dgl.DGLGraph]:
    """Every graph of a loader result (node, graph, similarity dataset or pretrain list)."""
    return list(kind_of_data(data).graphs(data))


def _encode(data: Any) -> Parsed:
    """A loader result as the ``(graphs, arrays)`` the cache stores."""
    kind = kind_of_data(data)
    return list(kind.graphs(data)), kind.arrays(data)


def _load(name: str, kind: str, data_dir: DataDir) -> Any:
    spec = get_spec(name)
    if spec.kind != kind:
        raise ValueError(f"dataset {name!r} is a {spec.kind} dataset, not a {kind} dataset")
    if not spec.files:
        return spec.parse(name, [])
    paths = spec.locate(resolve_data_dir(data_dir))
    graphs, arrays = load_cached(name, paths, lambda: _encode(spec.parse(name, paths)))
    return KINDS[kind].build(name, graphs, arrays)


def load_node_dataset(name: str, data_dir: DataDir = None) -> NodeLabelData:
    """A node-classification dataset (``usa_airport``, ``h-index``, ``synthetic-roles``, ...)."""
    return _load(name, "node", data_dir)


def load_graph_dataset(name: str, data_dir: DataDir = None) -> GraphLabelData:
    """A graph-classification dataset (``imdb-binary``, ``collab``, ``rdt-b``, ``synthetic-graphs``, ...)."""
    return _load(name, "graph", data_dir)


def load_similarity_dataset(name: str, data_dir: DataDir = None) -> SimilarityPairData:
    """A top-k similarity-search pair (``kdd_icdm``, ``sigir_cikm``, ``sigmod_icde``, ``synthetic-similarity``)."""
    return _load(name, "similarity", data_dir)


def load_pretrain_corpus(names: Sequence[str], data_dir: DataDir = None) -> list[dgl.DGLGraph]:
    """The pre-training graphs of ``names`` in order (``synthetic`` contributes several graphs)."""
    if isinstance(names, str):
        raise TypeError(f"names must be a sequence of dataset names, got the string {names!r}")
    return [g for name in names for g in _load(name, "pretrain", data_dir)]


def load_any(name: str, data_dir: DataDir = None) -> Any:
    """Dataset ``name`` loaded with the loader of its kind."""
    return _load(name, get_spec(name).kind, data_dir)


def summarize(data: Any) -> dict[str, int]:
    """Counts that identify a loaded dataset (the keys :attr:`DatasetSpec.expected` may check)."""
    return kind_of_data(data).summary(data)
