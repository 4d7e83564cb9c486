"""The public loaders: registry lookup, file location, cached parsing, and the checks every load passes:
at least one edge, and the registry's expected counts (:func:`check_expected_counts`)."""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dgl
import numpy as np

from gcc_sgcl.data.cache import Parsed, load_cached
from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.graphs import num_undirected_edges
from gcc_sgcl.data.paths import resolve_data_dir
from gcc_sgcl.data.registry import DatasetSpec, get_spec
from gcc_sgcl.data.text import DataFormatError

DataDir = str | os.PathLike | None

ALLOW_MODIFIED_ENV = "GCC_SGCL_ALLOW_MODIFIED_DATA"
"""Set to ``1`` to load a registered dataset whose counts differ from the registry's (a deliberately
modified copy); the no-edges check still applies."""


class CountMismatchError(DataFormatError):
    """A registered dataset's parsed counts differ from the registry's expected counts."""


def graphs_of(data: Any) -> list[dgl.DGLGraph]:
    """Every graph of a loader result (node, graph, similarity dataset or pretrain list)."""
    if isinstance(data, NodeLabelData):
        return [data.graph]
    if isinstance(data, GraphLabelData):
        return data.graphs
    if isinstance(data, SimilarityPairData):
        return [data.graph_1, data.graph_2]
    return list(data)


def _encode(data: Any) -> Parsed:
    """A loader result as the ``(graphs, arrays)`` the cache stores."""
    if isinstance(data, (NodeLabelData, GraphLabelData)):
        return graphs_of(data), {"labels": data.labels}
    if isinstance(data, SimilarityPairData):
        return graphs_of(data), {"pairs": data.pairs}
    return graphs_of(data), {}


def _decode(kind: str, name: str, parsed: Parsed) -> Any:
    graphs, arrays = parsed
    if kind == "node":
        return NodeLabelData(name, graphs[0], arrays["labels"])
    if kind == "graph":
        return GraphLabelData(name, graphs, arrays["labels"])
    if kind == "similarity":
        return SimilarityPairData(name, graphs[0], graphs[1], arrays["pairs"])
    return graphs


def _load(name: str, kind: str, data_dir: DataDir) -> Any:
    spec = get_spec(name)
    if spec.kind != kind:
        raise ValueError(f"dataset {name!r} is a {spec.kind} dataset, not a {kind} dataset")
    if not spec.files:
        return spec.parse(name, [])
    paths = spec.locate(resolve_data_dir(data_dir))
    data = _decode(kind, name, load_cached(name, paths, lambda: _encode(spec.parse(name, paths))))
    check_has_edges(spec, data, paths)
    if os.environ.get(ALLOW_MODIFIED_ENV, "") in ("", "0"):
        check_expected_counts(spec, data, paths)
    return data


def _files(paths: Sequence[Path]) -> str:
    return ", ".join(str(p) for p in paths)


def check_has_edges(spec: DatasetSpec, data: Any, paths: Sequence[Path]) -> None:
    """Raise :class:`DataFormatError` naming ``paths`` when the parsed data has no edge where one is needed:
    a node dataset (its labelled nodes would all be isolated), a pre-training or similarity graph, or a
    whole graph collection (single graphs of a collection may be edgeless); or a similarity dataset has no
    ground-truth pairs."""
    if isinstance(data, NodeLabelData) and data.graph.num_edges() == 0:
        raise DataFormatError(f"{_files(paths)}: dataset {spec.name!r} has no edges: all "
                              f"{data.graph.num_nodes()} labelled nodes are isolated (is the edge list empty?)")
    if isinstance(data, GraphLabelData) and not any(g.num_edges() for g in data.graphs):
        raise DataFormatError(f"{_files(paths)}: dataset {spec.name!r} has no edges in any of its "
                              f"{len(data.graphs)} graphs")
    if isinstance(data, SimilarityPairData) and len(data.pairs) == 0:
        raise DataFormatError(f"{_files(paths)}: dataset {spec.name!r} has no ground-truth pairs (no author "
                              f"name is in both dicts with edges in both graphs)")
    if spec.kind in ("pretrain", "similarity"):
        for i, g in enumerate(graphs_of(data)):
            if g.num_edges() == 0:
                raise DataFormatError(f"{_files(paths)}: graph {i + 1} of dataset {spec.name!r} has no edges")


def check_expected_counts(spec: DatasetSpec, data: Any, paths: Sequence[Path]) -> None:
    """Raise :class:`CountMismatchError` naming ``paths`` and both counts when :func:`summarize` differs
    from ``spec.expected`` (a truncated, edited or wrong file)."""
    counts = summarize(data)
    wrong = [f"{key}: expected {want}, got {counts.get(key)}" for key, want in spec.expected.items()
             if counts.get(key) != want]
    if wrong:
        raise CountMismatchError(
            f"{_files(paths)}: dataset {spec.name!r} does not match the registry ({'; '.join(wrong)}). Fetch it "
            f"again with `bash scripts/download.sh {spec.name}`, or set {ALLOW_MODIFIED_ENV}=1 to use a "
            f"deliberately modified copy"
        )


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
    if isinstance(data, NodeLabelData):
        return {
            "num_nodes": data.graph.num_nodes(),
            "num_edges": num_undirected_edges(data.graph),
            "num_classes": int(np.unique(data.labels).size),
        }
    if isinstance(data, GraphLabelData):
        return {
            "num_graphs": len(data.graphs),
            "num_classes": int(np.unique(data.labels).size),
            "num_nodes": sum(g.num_nodes() for g in data.graphs),
            "num_edges": sum(num_undirected_edges(g) for g in data.graphs),
        }
    if isinstance(data, SimilarityPairData):
        return {
            "num_pairs": len(data.pairs),
            "num_nodes_1": data.graph_1.num_nodes(),
            "num_nodes_2": data.graph_2.num_nodes(),
            "num_edges_1": num_undirected_edges(data.graph_1),
            "num_edges_2": num_undirected_edges(data.graph_2),
        }
    return {
        "num_graphs": len(data),
        "num_nodes": sum(g.num_nodes() for g in data),
        "num_edges": sum(num_undirected_edges(g) for g in data),
    }
