"""The dataset registry: name -> kind, files (with their public URLs and sha256) and parser.

One name, one idea at 3 layers: :mod:`gcc_sgcl.registry` (the registry type), :mod:`gcc_sgcl.data.registry` (the
datasets'), :mod:`gcc_sgcl.tasks.registry` (the tasks').
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import dgl
import numpy as np

from gcc_sgcl.data import synthetic
from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.graphs import largest_component, reindex_first_appearance, remap_labels, simple_undirected_graph
from gcc_sgcl.data.kinds import KINDS
from gcc_sgcl.data.paths import DatasetNotFoundError
from gcc_sgcl.data.readers import (
    find_zip_member,
    read_edge_list,
    read_gin_graphs,
    read_lpm_lscc,
    read_matrix_market,
    read_node_labels,
    read_panther_dict,
    read_panther_graph,
    read_tu_graphs,
)
from gcc_sgcl.data.text import DataFormatError



@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset: its path under the data root, where to fetch it, and its sha256 if known."""

    path: str
    url: str
    sha256: str | None


@dataclass(frozen=True)
class DatasetSpec:
    """How to find, fetch, parse and check one dataset.

    ``parse(name, paths)`` turns the located files into a :class:`NodeLabelData`, :class:`GraphLabelData`,
    :class:`SimilarityPairData` or (pretrain) a list of graphs. ``alternatives`` are other file sets
    (relative paths) the parser also accepts, tried after ``files``. ``expected`` holds counts that
    :func:`gcc_sgcl.data.load.summarize` must reproduce (checked after each download).
    A spec without files is built in (synthetic) and needs no data directory.
    """

    name: str
    kind: str
    files: tuple[RemoteFile, ...]
    parse: Callable[[str, list[Path]], Any]
    alternatives: tuple[tuple[str, ...], ...] = ()
    expected: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"dataset {self.name!r}: kind must be one of {tuple(KINDS)}, got {self.kind!r}")

    def locate(self, root: Path) -> list[Path]:
        """The first complete file set under ``root``, else :class:`DatasetNotFoundError`."""
        file_sets = (tuple(f.path for f in self.files), *self.alternatives)
        for rel_paths in file_sets:
            paths = [root / p for p in rel_paths]
            if all(p.is_file() for p in paths):
                return paths
        expected = [", ".join(file_sets[0])] + [f"or {', '.join(s)}" for s in file_sets[1:]]
        raise DatasetNotFoundError(self.name, root, expected)


# ---------------------------------------------------------------------------------------------------------
# parsers


def _gin_dataset(name: str, paths: list[Path], member: str | None = None) -> GraphLabelData:
    """GIN/DGCNN text, read from a plain file or from the zip member with file name ``member``."""
    (path,) = paths
    graphs, raw = read_gin_graphs(path, find_zip_member(path, member) if member else None)
    return GraphLabelData(name, graphs, remap_labels(raw))


def _tu_dataset(name: str, paths: list[Path], tu_name: str) -> GraphLabelData:
    (path,) = paths
    graphs, raw = read_tu_graphs(path, tu_name)
    return GraphLabelData(name, graphs, remap_labels(raw))


def _labelled_edge_list(name: str, paths: list[Path], binarize_at_median: bool) -> NodeLabelData:
    """GCC's ``Edgelist`` data: raw ids renumbered by first appearance in the edge list.

    Labelled nodes absent from the edge list become isolated nodes after the others. With
    ``binarize_at_median`` (h-index) the label is ``value > median(values)``, else the sorted rank.
    """
    edges_path, labels_path = paths
    new_edges, raw_of_new = reindex_first_appearance(read_edge_list(edges_path))
    ids, values = read_node_labels(labels_path)
    if binarize_at_median and values.size:
        classes = (values > np.median(values)).astype(np.int64)
    else:
        classes = remap_labels(values)
    class_of = dict(zip(ids.tolist(), classes.tolist()))
    missing = [raw for raw in raw_of_new.tolist() if raw not in class_of]
    if missing:
        raise DataFormatError(
            f"{labels_path}: {len(missing)} node(s) of {edges_path} have no label, e.g. node {missing[0]}"
        )
    raw_of_node = np.concatenate([raw_of_new, ids[~np.isin(ids, raw_of_new)]])
    graph = simple_undirected_graph(new_edges[:, 0], new_edges[:, 1], raw_of_node.size)
    return NodeLabelData(name, graph, np.asarray([class_of[raw] for raw in raw_of_node.tolist()], dtype=np.int64))


def _panther_pair(name: str, paths: list[Path]) -> SimilarityPairData:
    """Two Panther co-author graphs on their header's node count (ids as in the ``.dict``); pairs =
    author names in both dicts whose ids occur in both edge lists, sorted by the graph_1 id."""
    graph_1_path, dict_1_path, graph_2_path, dict_2_path = paths
    n1, e1 = read_panther_graph(graph_1_path)
    n2, e2 = read_panther_graph(graph_2_path)
    names_1, names_2 = read_panther_dict(dict_1_path, n1), read_panther_dict(dict_2_path, n2)
    in_1, in_2 = np.zeros(n1, dtype=bool), np.zeros(n2, dtype=bool)
    in_1[e1.ravel()], in_2[e2.ravel()] = True, True
    pairs = sorted(
        (names_1[a], names_2[a]) for a in names_1.keys() & names_2.keys() if in_1[names_1[a]] and in_2[names_2[a]]
    )
    return SimilarityPairData(
        name,
        simple_undirected_graph(e1[:, 0], e1[:, 1], n1),
        simple_undirected_graph(e2[:, 0], e2[:, 1], n2),
        np.asarray(pairs, dtype=np.int64).reshape(-1, 2),
    )


def _snap_graph(path: Path) -> dgl.DGLGraph:
    edges, raw_of_new = reindex_first_appearance(read_edge_list(path))
    return simple_undirected_graph(edges[:, 0], edges[:, 1], raw_of_new.size)


def _snap_edge_list(name: str, paths: list[Path]) -> list[dgl.DGLGraph]:
    """A SNAP edge list (``#`` comments, tab or space separated, plain or ``.gz``), ids renumbered."""
    (path,) = paths
    return [_snap_graph(path)]


def _ca_grqc(name: str, paths: list[Path]) -> list[dgl.DGLGraph]:
    """The ``.lpm.lscc`` graph GCC ships; from SNAP's ``ca-GrQc.txt.gz``, its largest component (the same)."""
    (path,) = paths
    if path.name.endswith(".lscc"):
        n, edges = read_lpm_lscc(path)
        return [simple_undirected_graph(edges[:, 0], edges[:, 1], n)]
    return [largest_component(_snap_graph(path))]


def _netrep_mtx(name: str, paths: list[Path], member: str) -> list[dgl.DGLGraph]:
    """A Network Repository zip holding the Matrix Market member ``member``."""
    (path,) = paths
    n, edges = read_matrix_market(path, find_zip_member(path, member))
    return [simple_undirected_graph(edges[:, 0], edges[:, 1], n)]


def _built_in(build: Callable[[], Any]) -> Callable[[str, list[Path]], Any]:
    return lambda name, paths: build()


# ---------------------------------------------------------------------------------------------------------
# sources (the provenance of each checksum is recorded in the staged data's MANIFEST.md)

_GITHUB = "https://raw.githubusercontent.com"
_DGCNN = f"{_GITHUB}/muhanzhang/pytorch_DGCNN/50f504131ca66382f3f078ae98e59aa3ae35b795/data"
_IHGNN = f"{_GITHUB}/yeweiysh/IHGNN/dcb2c23cdc06f3ed8cc1dd0f0dced9ddd9156bad/data"
_STRUC2VEC = f"{_GITHUB}/leoribeiro/struc2vec/77b4cc63e79a37b1496f340c7772d932038417ec/graph"
_BRIDGE_TUNE = f"{_GITHUB}/renH2/Bridge-Tune/54718cd315307d37d763a2a8d754dfda0d6329ab/data"
_GCC = f"{_GITHUB}/THUDM/GCC/7eb86779c5edb9ceb725886ee59c450552149d68/data_bin"
_SNAP = "https://snap.stanford.edu/data"

# sha256 of the Bridge-Tune files, by file name
_BRIDGE_TUNE_SHA256 = {
    "aminer_hindex_rand20intop200_5000.edgelist": "a92cd399ae67a857bec2bd60c4f3cdfb9fec2ff418003577c17134b6162b1c6e",
    "aminer_hindex_rand20intop200_5000.nodelabel": "ca93c70f8a21f0ba68d80d1511dc6aef179e7a236c138617ba37db2f42502004",
    "aminer_hindex_rand1_5000.edgelist": "161690193a8c3aabb0e021270679b4a0547bcbe59828cc583e381fd7a3c9a110",
    "aminer_hindex_rand1_5000.nodelabel": "ed3843175d4d83d10e824c5eb23c2c0b732a1e4f7f23c05bd73a3842d3419ec9",
    "aminer_hindex_top1_5000.edgelist": "2c0183a55286de06c651ad98c1aec8ee20d204e2ae54f10667c253b5f9eec2a7",
    "aminer_hindex_top1_5000.nodelabel": "355e477d618bbd2b96604e698f0b066091e1d3b1ffb02b0e996ca7d28495842a",
    "kdd.graph": "e09f7c11b388859573cb93c061f55bfe0a5f6eaaad7537034965ccf62b5e618a",
    "kdd.dict": "58c2e60cd44f679f939150cfbde90f436e9ba5c2c73c53ab020077b1ed62359b",
    "icdm.graph": "8fc82c4c09b0c0166a3c3b5a6d2f5964cfbe73b60445b5f564836e6180a57c35",
    "icdm.dict": "2951c4eac222164d83ba635093eb6516acd5fe6976f9d73f669f055dedae65cf",
    "sigir.graph": "6209188943f4135d1aaf74a54009d29b077bc29272ef51300a79fd4b28d99b26",
    "sigir.dict": "9943cb9ee93b7f4b8222248094e962250eb4f6827dca049473a5787c82d7144b",
    "cikm.graph": "ffb1f9f822142bdf0e5f512f086f36753f8efad646ff0c0e2f0c2fd60b6a3b86",
    "cikm.dict": "1844ebf25aecd5f124b6db5671405f2f665313bc52e76d8afef788fb26cc4611",
    "sigmod.graph": "4535a27342b80adabc7649b8998351a4539b8e0b2cbec782cb761a90e3caf34c",
    "sigmod.dict": "ce2167fa0c3d6445a3f8e7025a379fab7c53de688eef790a4361ac459260cf86",
    "icde.graph": "affb9282881e65555587553f4469d5089665414eff8e762e89524aabe78fc77d",
    "icde.dict": "d77546c6766b933ab06e139a2f28891081928961d96bef1a6ad71d1bdf4cae36",
}


def _bridge_tune(folder: str, local_folder: str, file: str) -> RemoteFile:
    return RemoteFile(f"{local_folder}/{file}", f"{_BRIDGE_TUNE}/{folder}/{file}", _BRIDGE_TUNE_SHA256[file])


def _gin(name: str, rel: str, url: str, sha256: str, member: str | None, **expected: int) -> DatasetSpec:
    return DatasetSpec(name, "graph", (RemoteFile(rel, url, sha256),), partial(_gin_dataset, member=member),
                       expected=expected)


def _hindex(name: str, variant: str, **expected: int) -> DatasetSpec:
    stem = f"aminer_hindex_{variant}_5000"
    files = tuple(_bridge_tune("hindex", "node_classification/hindex", f"{stem}.{ext}")
                  for ext in ("edgelist", "nodelabel"))
    return DatasetSpec(name, "node", files, partial(_labelled_edge_list, binarize_at_median=True), expected=expected)


def _panther(name: str, first: str, second: str, **expected: int) -> DatasetSpec:
    files = tuple(_bridge_tune("panther", "similarity_search/panther", f"{conf}.{ext}")
                  for conf in (first, second) for ext in ("graph", "dict"))
    return DatasetSpec(name, "similarity", files, _panther_pair, expected=expected)


def _snap(name: str, folder: str, file: str, url: str, **expected: int) -> DatasetSpec:
    """A SNAP original; its gz checksum is not published, so counts in ``expected`` are the check."""
    rel = f"pretrain/{folder}/{file}"
    return DatasetSpec(name, "pretrain", (RemoteFile(rel, url, None),), _snap_edge_list, expected=expected)


def _specs() -> list[DatasetSpec]:
    return [
        _gin("imdb-binary", "graph_classification/IMDB-BINARY/IMDBBINARY.txt", f"{_DGCNN}/IMDBBINARY/IMDBBINARY.txt",
             "1068c698677c07c04f3ad56fc4a175cb2161523c840abfdaf50e101ecc30504f", None,
             num_graphs=1000, num_classes=2, num_nodes=19773, num_edges=96531),
        _gin("imdb-multi", "graph_classification/IMDB-MULTI/IMDBMULTI.txt", f"{_DGCNN}/IMDBMULTI/IMDBMULTI.txt",
             "f4cc1b32112303bf1b16a8351df8b8073978fdead823775fbe79e60cf94e7009", None,
             num_graphs=1500, num_classes=3, num_nodes=19502, num_edges=98903),
        _gin("collab", "graph_classification/COLLAB/COLLAB.zip", f"{_IHGNN}/COLLAB.zip",
             "9ecf84c958ac765b9e0f878f4bd002fec20926e0c3d037cb753ab251f59b41f3", "COLLAB.txt",
             # the file has 2,837 self-loops, which the MANIFEST's 12,288,916 edges count
             num_graphs=5000, num_classes=3, num_nodes=372474, num_edges=12286079),
        _gin("rdt-b", "graph_classification/REDDIT-BINARY/REDDIT-BINARY.zip", f"{_IHGNN}/REDDIT-BINARY.zip",
             "c45536bdd84db7a4913fd6a45ae7616a12a02bf1f444a4effbce903524d62121", "REDDIT-BINARY.txt",
             num_graphs=2000, num_classes=2, num_nodes=859254, num_edges=995508),
        DatasetSpec(
            "rdt-5k", "graph",
            (RemoteFile("graph_classification/REDDIT-MULTI-5K/REDDIT-MULTI-5K.zip",
                        "https://www.chrsmrrs.com/graphkerneldatasets/REDDIT-MULTI-5K.zip", None),),
            partial(_tu_dataset, tu_name="REDDIT-MULTI-5K"),
            expected={"num_graphs": 4999, "num_classes": 5},
        ),
        DatasetSpec(
            "usa_airport", "node",
            (RemoteFile("node_classification/struc2vec-airports/usa-airports.edgelist",
                        f"{_STRUC2VEC}/usa-airports.edgelist",
                        "c73fec3eef27ed6d6ef4d8dfa7fd1604b959601a38d399eeaa1f87e8d8d58fc0"),
             RemoteFile("node_classification/struc2vec-airports/labels-usa-airports.txt",
                        f"{_STRUC2VEC}/labels-usa-airports.txt",
                        "d4062ff3b3a67c3ae72b581bb68228433223e35d6f0b2d41844d197ad3772195")),
            partial(_labelled_edge_list, binarize_at_median=False),
            # GCC's layout: the same labels without the header line
            alternatives=(("node_classification/struc2vec-airports/usa-airports.edgelist",
                           "node_classification/struc2vec-airports/usa-airports.nodelabel"),),
            expected={"num_nodes": 1190, "num_edges": 13599, "num_classes": 4},
        ),
        _hindex("h-index", "rand20intop200", num_nodes=5000, num_edges=44020, num_classes=2),
        _hindex("h-index-rand1", "rand1", num_nodes=5000, num_edges=23460, num_classes=2),
        _hindex("h-index-top1", "top1", num_nodes=5000, num_edges=46358, num_classes=2),
        _panther("kdd_icdm", "kdd", "icdm", num_pairs=697,
                 num_nodes_1=2867, num_nodes_2=2607, num_edges_1=7637, num_edges_2=4774),
        _panther("sigir_cikm", "sigir", "cikm", num_pairs=874,
                 num_nodes_1=2851, num_nodes_2=3548, num_edges_1=6354, num_edges_2=7076),
        _panther("sigmod_icde", "sigmod", "icde", num_pairs=898,
                 num_nodes_1=2616, num_nodes_2=2559, num_edges_1=8304, num_edges_2=6668),
        DatasetSpec(
            "ca-grqc", "pretrain",
            (RemoteFile("pretrain/ca-GrQc/ca-GrQc-SNAP.txtu.lpm.lscc", f"{_GCC}/ca-GrQc-SNAP.txtu.lpm.lscc",
                        "0398d9181ca682be0fa3b9e19c674aa3c18cd13256bcea14ec5efc10ae2f38d9"),),
            _ca_grqc,
            alternatives=(("pretrain/ca-GrQc/ca-GrQc.txt.gz",),),
            expected={"num_nodes": 4158, "num_edges": 13422},
        ),
        # SNAP's published edge counts include self-loops (HepTh 25,998, HepPh 118,521, CondMat 93,497);
        # the simple graphs drop them.
        _snap("ca-hepth", "CA-HepTh", "CA-HepTh.txt.gz", f"{_SNAP}/ca-HepTh.txt.gz", num_nodes=9877, num_edges=25973),
        _snap("ca-hepph", "CA-HepPh", "CA-HepPh.txt.gz", f"{_SNAP}/ca-HepPh.txt.gz",
              num_nodes=12008, num_edges=118489),
        _snap("ca-condmat", "CA-CondMat", "CA-CondMat.txt.gz", f"{_SNAP}/ca-CondMat.txt.gz",
              num_nodes=23133, num_edges=93439),
        _snap("email-enron", "Email-Enron", "Email-Enron.txt.gz", f"{_SNAP}/email-Enron.txt.gz",
              num_nodes=36692, num_edges=183831),
        _snap("dblp-snap", "com-DBLP", "com-dblp.ungraph.txt.gz",
              f"{_SNAP}/bigdata/communities/com-dblp.ungraph.txt.gz", num_nodes=317080, num_edges=1049866),
        _snap("livejournal", "soc-LiveJournal1", "soc-LiveJournal1.txt.gz", f"{_SNAP}/soc-LiveJournal1.txt.gz",
              num_nodes=4847571),
        DatasetSpec(
            "academia", "pretrain",
            (RemoteFile("pretrain/soc-academia/soc-academia.zip",
                        "https://nrvis.com/download/data/soc/soc-academia.zip", None),),
            partial(_netrep_mtx, member="soc-academia.mtx"),
        ),
        DatasetSpec("synthetic", "pretrain", (), _built_in(synthetic.build_pretrain_corpus)),
        DatasetSpec("synthetic-roles", "node", (), _built_in(synthetic.build_role_graph)),
        DatasetSpec("synthetic-graphs", "graph", (), _built_in(synthetic.build_graph_collection)),
        DatasetSpec("synthetic-similarity", "similarity", (), _built_in(synthetic.build_similarity_pair)),
    ]


ALIASES = {"h-index-rand-1": "h-index-rand1", "h-index-top-1": "h-index-top1", "h-index-rand20intop200": "h-index"}
"""GCC's spellings of registered datasets (its ``--dataset`` choices), each naming the same entry."""


class Registry(dict):
    """The registered datasets by name; an alias of :data:`ALIASES` finds its entry (``in``, ``[]``, ``get``) but is
    not listed (iteration, ``keys``, ``items`` give each dataset once, under its own name).

    >>> DATASETS["h-index-rand-1"].name, "h-index-top-1" in DATASETS, "h-index-top-1" in list(DATASETS)
    ('h-index-rand1', True, False)
    """

    def __missing__(self, name: str) -> DatasetSpec:
        if name in ALIASES:
            return self[ALIASES[name]]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in ALIASES

    def get(self, name: str, default: DatasetSpec | None = None) -> DatasetSpec | None:
        return self[name] if name in self else default


DATASETS: Registry = Registry({spec.name: spec for spec in _specs()})


def get_spec(name: str) -> DatasetSpec:
    """The registry entry of ``name``; an unknown name raises a ``ValueError`` listing the valid ones."""
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(sorted(DATASETS))}") from None
