"""Datasets: readers for the benchmark formats, a synthetic offline default, caching and download.

Every graph is a ``dgl.DGLGraph`` that is bidirected, without self-loops or duplicate edges, with int64
node ids ``0..n-1`` and no features. A registered dataset's files are looked up under the data root
(``--data-dir``, ``$GCC_SGCL_DATA`` or ``./data``) and fetched with ``bash scripts/download.sh <name>``; every
loader also takes a path to a graph file, read by its format (:mod:`gcc_sgcl.data.files`), whose original
node ids are kept in ``ids``. Every load of a registered dataset is checked: it must have edges, and its counts
must be the registry's (set ``$GCC_SGCL_ALLOW_MODIFIED_DATA=1`` for a deliberately modified copy); damaged
files raise a :class:`DataFormatError` naming them.

>>> data = load_node_dataset("synthetic-roles")
>>> data.graph.num_nodes() == len(data.labels), dataset_kind("kdd_icdm")
(True, 'similarity')
"""
from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.files import read_dataset_file
from gcc_sgcl.data.graphs import (
    check_simple_undirected,
    graph_from_networkx,
    graph_from_scipy,
    reindex_first_appearance,
    simple_undirected_graph,
)
from gcc_sgcl.data.kinds import KINDS, DatasetKind, kind_of_data
from gcc_sgcl.data.load import (
    ALLOW_MODIFIED_ENV,
    CountMismatchError,
    check_dataset_names,
    check_present,
    dataset_kind,
    dataset_name,
    dataset_present,
    graphs_of,
    is_dataset_path,
    load_any,
    load_graph_dataset,
    load_node_dataset,
    load_pretrain_corpus,
    load_similarity_dataset,
    summarize,
)
from gcc_sgcl.data.paths import DatasetNotFoundError, resolve_data_dir
from gcc_sgcl.data.registry import DATASETS, DatasetSpec, RemoteFile
from gcc_sgcl.data.text import DataFormatError

__all__ = [
    "ALLOW_MODIFIED_ENV",
    "CountMismatchError",
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
    "check_dataset_names",
    "check_present",
    "check_simple_undirected",
    "dataset_kind",
    "dataset_present",
    "dataset_name",
    "graph_from_networkx",
    "graph_from_scipy",
    "graphs_of",
    "is_dataset_path",
    "kind_of_data",
    "load_any",
    "load_graph_dataset",
    "load_node_dataset",
    "load_pretrain_corpus",
    "load_similarity_dataset",
    "read_dataset_file",
    "reindex_first_appearance",
    "resolve_data_dir",
    "simple_undirected_graph",
    "summarize",
]
