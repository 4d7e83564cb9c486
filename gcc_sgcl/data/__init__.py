"""Datasets: readers for the benchmark formats, a synthetic offline default, caching and download.

Every graph is a ``dgl.DGLGraph`` that is bidirected, without self-loops or duplicate edges, with int64
node ids ``0..n-1`` and no features. Files are looked up under the data root (``--data-dir``,
``$GCC_SGCL_DATA`` or ``./data``) and fetched with ``bash scripts/download.sh <name>``.

>>> data = load_node_dataset("synthetic-roles")
>>> data.graph.num_nodes() == len(data.labels), dataset_kind("kdd_icdm")
(True, 'similarity')
"""
from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.graphs import check_simple_undirected, reindex_first_appearance, simple_undirected_graph
from gcc_sgcl.data.kinds import KINDS, DatasetKind, kind_of_data
from gcc_sgcl.data.load import (
    graphs_of,
    load_any,
    load_graph_dataset,
    load_node_dataset,
    load_pretrain_corpus,
    load_similarity_dataset,
    summarize,
)
from gcc_sgcl.data.paths import DatasetNotFoundError, resolve_data_dir
from gcc_sgcl.data.registry import DATASETS, DatasetSpec, RemoteFile, dataset_kind
from gcc_sgcl.data.text import DataFormatError

__all__ = [
    "DATASETS",
    "DataFormatError",
    "DatasetNotFoundError",
    "DatasetKind",
    "DatasetSpec",
    "KINDS",
    "GraphLabelData",
    "NodeLabelData",
    "RemoteFile",
    "SimilarityPairData",
    "check_simple_undirected",
    "dataset_kind",
    "graphs_of",
    "kind_of_data",
    "load_any",
    "load_graph_dataset",
    "load_node_dataset",
    "load_pretrain_corpus",
    "load_similarity_dataset",
    "reindex_first_appearance",
    "resolve_data_dir",
    "simple_undirected_graph",
    "summarize",
]
