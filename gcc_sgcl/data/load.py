"""The public loaders: a registered name (registry lookup, file location, cached parsing) or a path (read by
its format, see :mod:`gcc_sgcl.data.files`), and the checks every load of a registered dataset passes: at least
one edge, and the registry's expected counts (:func:`check_expected_counts`); a labels file given with a path
passes :func:`check_labels_file`."""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dgl
import numpy as np

from gcc_sgcl.data.cache import Parsed, load_cached
from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.files import MISSING_LABELS, dataset_stem, read_dataset_file, read_labels_file, read_pairs_file
from gcc_sgcl.data.kinds import KINDS, kind_of_data
from gcc_sgcl.data.paths import DatasetNotFoundError, resolve_data_dir
from gcc_sgcl.data.readers import read_two_columns
from gcc_sgcl.data.registry import DATASETS, DatasetSpec, get_spec
from gcc_sgcl.data.text import DataFormatError, quoted

DataDir = str | os.PathLike | None
Dataset = str | os.PathLike

_INTEGER = re.compile(r"[+-]?[0-9]+")  # a label the labels reader takes for an integer
ALLOW_MODIFIED_ENV = "GCC_SGCL_ALLOW_MODIFIED_DATA"
"""Set to ``1`` to load a registered dataset whose counts differ from the registry's (a deliberately
modified copy); the no-edges check still applies."""


class CountMismatchError(DataFormatError):
    """A registered dataset's parsed counts differ from the registry's expected counts."""


def graphs_of(data: Any) -> list[dgl.DGLGraph]:
    """Every graph of a loader result (node, graph, similarity dataset or pretrain list)."""
    return list(kind_of_data(data).graphs(data))


def _encode(data: Any) -> Parsed:
    """A loader result as the ``(graphs, arrays)`` the cache stores."""
    kind = kind_of_data(data)
    return list(kind.graphs(data)), kind.arrays(data)


def is_dataset_path(name: Dataset) -> bool:
    """Whether ``name`` is a path rather than a registered dataset name (a registered name wins; a path
    contains a directory separator or a file suffix, or exists).

    >>> is_dataset_path("usa_airport"), is_dataset_path("my_graph.edgelist"), is_dataset_path("usa-airpot")
    (False, True, False)
    """
    if isinstance(name, os.PathLike):
        return True
    return name not in DATASETS and ("/" in name or os.sep in name or Path(name).suffix != "" or Path(name).exists())


def dataset_name(name: Dataset) -> str:
    """The name a dataset goes by in embedding files (``<name>.npy``) and result rows: a registered name as
    is, a path's file name without its format suffix (see :func:`gcc_sgcl.data.files.dataset_stem`)."""
    return dataset_stem(name) if is_dataset_path(name) else name


def dataset_kind(name: Dataset) -> str:
    """``"node"``, ``"graph"``, ``"similarity"`` or ``"pretrain"`` of a registered name; ``"node"`` (one graph)
    or ``"graph"`` (a collection) of a path."""
    if is_dataset_path(name):
        data = read_dataset_file(name)
        return "node" if isinstance(data, NodeLabelData) else "graph"
    return get_spec(name).kind


def check_dataset_names(names: Sequence[Dataset], kinds: Sequence[str], flag: str) -> None:
    """Raise ``ValueError`` naming ``flag`` at the first of ``names`` that is neither a registered dataset of one
    of ``kinds`` nor an existing path (checked before any data is loaded).

    >>> check_dataset_names(["ca-hepth"], ["node", "graph"], "--dataset")
    Traceback (most recent call last):
    ...
    ValueError: --dataset: 'ca-hepth' is a pretrain dataset, expected a node or graph dataset
    """
    for name in names:
        if is_dataset_path(name):
            if not Path(name).exists():
                raise ValueError(f"{flag}: {str(name)!r} is neither a registered dataset nor an existing file")
            continue
        spec = DATASETS.get(name)
        if spec is None:
            valid = ", ".join(sorted(n for n, s in DATASETS.items() if s.kind in kinds))
            raise ValueError(f"{flag}: unknown dataset {name!r}; valid names: {valid} (or a path to a graph file)")
        if spec.kind not in kinds:
            raise ValueError(f"{flag}: {name!r} is a {spec.kind} dataset, expected a {' or '.join(kinds)} dataset")


def _load_path(path: Dataset, kind: str, labels: Dataset | None) -> NodeLabelData | GraphLabelData:
    """A dataset file as a ``kind`` (``"node"``/``"graph"``; ``"any"`` for either) dataset, labelled from the
    ``labels`` file when given."""
    data = read_dataset_file(path)
    found = "node" if isinstance(data, NodeLabelData) else "graph"
    if kind not in (found, "any"):
        what = {"node": "a single graph (a node dataset)", "graph": "a graph collection (a graph dataset)"}
        raise ValueError(f"{path} holds {what[found]}, not {what[kind]}")
    check_has_edges(data, [Path(path)], data.name, found)
    if labels is not None:
        if isinstance(data, NodeLabelData):
            data.labels = read_labels_file(labels, data.ids, f"{path}")
        else:
            data.labels = read_labels_file(labels, np.arange(len(data.graphs)), f"{path} (graph indices 0..n-1)")
        check_labels_file(labels, data.labels)
    return data


def check_labels_file(path: Dataset, labels: np.ndarray) -> None:
    """Raise :class:`DataFormatError` naming the labels file ``path`` (which gave ``labels``, ``-1`` unlabelled)
    when it mixes integers with other values. Labels are either all integers (classes in numeric order, ``09`` =
    ``9``) or all names; a mix (``abc`` or ``0.0`` among integers) is refused at the line of the first label of the
    rarer kind, rather than read as names for every line, where ``0.0`` and ``0`` would silently be two classes.
    (Fewer than two classes is refused by the task commands, which score labels: loading such a file is fine.)

    The file was read by :func:`~gcc_sgcl.data.files.read_labels_file` already, which refuses unknown ids and
    repeated ones; so it has one line per labelled item, and one more when its first line is a header.
    """
    rows = [(label, reader.line_number) for _, label, reader in read_two_columns(Path(path), "'id label'", True)
            if label not in MISSING_LABELS]
    labelled = int((np.asarray(labels) >= 0).sum())
    rows = rows[len(rows) - labelled:]  # without a header line
    integer = [bool(_INTEGER.fullmatch(label)) for label, _ in rows]
    if any(integer) and not all(integer):
        odd_is_integer = sum(integer) < len(rows) - sum(integer)  # the rarer kind is the odd one out
        label, line = next(row for row, is_integer in zip(rows, integer) if is_integer == odd_is_integer)
        what = "an integer among names" if odd_is_integer else "not an integer, unlike the others"
        raise DataFormatError(f"{path} line {line}: label {quoted(label)} is {what} ({sum(integer)} of its {len(rows)} "
                              f"labels are integers); labels must be all integers or all names")


def _load(name: str, kind: str, data_dir: DataDir, labels: Dataset | None = None) -> Any:
    if is_dataset_path(name):
        return _load_path(name, kind, labels)
    if labels is not None:
        raise ValueError(f"a labels file applies to a dataset given by path; {name!r} is registered with its labels")
    spec = get_spec(name)
    if spec.kind != kind:
        raise ValueError(f"dataset {name!r} is a {spec.kind} dataset, not a {kind} dataset")
    if not spec.files:
        return spec.parse(name, [])
    paths = spec.locate(resolve_data_dir(data_dir))
    graphs, arrays = load_cached(name, paths, lambda: _encode(spec.parse(name, paths)))
    data = KINDS[kind].build(name, graphs, arrays)
    check_has_edges(data, paths, spec.name, spec.kind)
    if os.environ.get(ALLOW_MODIFIED_ENV, "") in ("", "0"):
        check_expected_counts(spec, data, paths)
    return data


def _files(paths: Sequence[Path]) -> str:
    return ", ".join(str(p) for p in paths)


def check_has_edges(data: Any, paths: Sequence[Path], name: str, kind: str) -> None:
    """Raise :class:`DataFormatError` naming ``paths`` when the parsed dataset ``name`` of ``kind`` has no edge
    where one is needed: a node dataset (its nodes would all be isolated; self-loops are dropped), a
    pre-training or similarity graph, or a whole graph collection (single graphs of a collection may be
    edgeless, not empty); or a similarity dataset has no ground-truth pairs. The API's ``embed_graphs`` refuses
    alike."""
    if isinstance(data, NodeLabelData) and data.graph.num_edges() == 0:
        raise DataFormatError(f"{_files(paths)}: dataset {name!r} has no edges: all {data.graph.num_nodes()} "
                              f"nodes are isolated (is the edge list empty, or only self-loops?)")
    if isinstance(data, GraphLabelData) and not any(g.num_edges() for g in data.graphs):
        raise DataFormatError(f"{_files(paths)}: dataset {name!r} has no edges in any of its "
                              f"{len(data.graphs)} graphs")
    empty = [i for i, g in enumerate(graphs_of(data)) if g.num_nodes() == 0]
    if isinstance(data, GraphLabelData) and empty:
        raise DataFormatError(f"{_files(paths)}: graph {empty[0] + 1} of dataset {name!r} has no nodes "
                              f"({len(empty)} of its {len(data.graphs)} graphs have none): nothing to embed")
    if isinstance(data, SimilarityPairData) and len(data.pairs) == 0:
        raise DataFormatError(f"{_files(paths)}: dataset {name!r} has no ground-truth pairs (no author "
                              f"name is in both dicts with edges in both graphs)")
    if kind in ("pretrain", "similarity"):
        for i, g in enumerate(graphs_of(data)):
            if g.num_edges() == 0:
                raise DataFormatError(f"{_files(paths)}: graph {i + 1} of dataset {name!r} has no edges")


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


def load_node_dataset(name: Dataset, data_dir: DataDir = None, labels: Dataset | None = None) -> NodeLabelData:
    """A node-classification dataset: a registered name (``usa_airport``, ``h-index``, ``synthetic-roles``,
    ...) or a graph file (see :mod:`gcc_sgcl.data.files`), labelled by the ``labels`` file (``node label``
    lines; nodes it does not name get ``-1``).

    >>> data = load_node_dataset("synthetic-roles")
    >>> data.graph.num_nodes() == len(data.labels), data.ids is None
    (True, True)
    """
    return _load(name, "node", data_dir, labels)


def load_graph_dataset(name: Dataset, data_dir: DataDir = None, labels: Dataset | None = None) -> GraphLabelData:
    """A graph-classification dataset: a registered name (``imdb-binary``, ``collab``, ``rdt-b``,
    ``synthetic-graphs``, ...) or a collection file or TU directory, whose labels come from its format or
    from the ``labels`` file (lines ``graph_index label``, 0-based)."""
    return _load(name, "graph", data_dir, labels)


def load_similarity_dataset(
    name: Dataset | tuple[Dataset, Dataset], data_dir: DataDir = None, pairs: Dataset | None = None
) -> SimilarityPairData:
    """A top-k similarity-search pair: a registered name (``kdd_icdm``, ``sigir_cikm``, ``sigmod_icde``,
    ``synthetic-similarity``), or two graph files ``(path_1, path_2)`` with a ``pairs`` file of lines
    ``id_1 id_2`` naming nodes by their ids in the two files."""
    if isinstance(name, (tuple, list)):
        if pairs is None:
            raise ValueError("a similarity dataset given by two graph paths needs a pairs file")
        one, two = (_load_path(p, "node", None) for p in name)
        found = read_pairs_file(pairs, one.ids, two.ids, str(name[0]), str(name[1]))
        return SimilarityPairData(f"{one.name}+{two.name}", one.graph, two.graph, found, one.ids, two.ids)
    if is_dataset_path(name):
        raise ValueError(f"{name}: a similarity dataset by path is two graph files and a pairs file")
    if pairs is not None:
        raise ValueError(f"a pairs file applies to two graphs given by path; {name!r} is registered with its pairs")
    return _load(name, "similarity", data_dir)


def load_pretrain_corpus(names: Sequence[Dataset], data_dir: DataDir = None) -> list[dgl.DGLGraph]:
    """The pre-training graphs of ``names`` in order: registered corpora (``synthetic`` contributes several
    graphs) or paths (a graph file contributes its graph, a collection all of its graphs)."""
    if isinstance(names, str):
        raise TypeError(f"names must be a sequence of dataset names, got the string {names!r}")
    return [g for name in names for g in graphs_of(load_any(name, data_dir) if is_dataset_path(name)
                                                   else _load(name, "pretrain", data_dir))]


def dataset_present(name: Dataset, data_dir: DataDir = None) -> bool:
    """Whether dataset ``name`` can be loaded without downloading: a path that exists, an embedded dataset, or a
    registered one whose files are under the data root (their contents are not read)."""
    if is_dataset_path(name):
        return Path(name).exists()
    spec = get_spec(name)
    if not spec.files:
        return True
    try:
        spec.locate(resolve_data_dir(data_dir))
    except DatasetNotFoundError:
        return False
    return True


def check_present(names: Sequence[Dataset], data_dir: DataDir = None) -> None:
    """Before any work: every registered dataset of ``names`` has its files under the data root (their contents are
    not read), else a :class:`DatasetNotFoundError` for the one missing, or one error naming all the missing ones
    and the command that fetches them. Paths are left to their reader.

    >>> check_present(["synthetic-roles", "usa_airport"], "/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    gcc_sgcl.data.paths.DatasetNotFoundError: dataset 'usa_airport' not found under /nonexistent: expected ...
    """
    root = resolve_data_dir(data_dir)
    missing = []
    for name in dict.fromkeys(names):
        spec = None if is_dataset_path(name) else get_spec(name)
        if spec is not None and spec.files:
            try:
                spec.locate(root)
            except DatasetNotFoundError as error:
                missing.append(error)
    if len(missing) == 1:
        raise missing[0]
    if missing:
        where = root.resolve()
        raise FileNotFoundError(
            f"{len(missing)} datasets not found under {where}: "
            + "; ".join(f"{m.name} (expected {', '.join(m.expected)})" for m in missing)
            + f". Fetch them with `bash scripts/download.sh --data-dir {where} {' '.join(m.name for m in missing)}`.")


def load_file(path: Dataset, labels: Dataset | None = None) -> NodeLabelData | GraphLabelData:
    """A graph file (one graph, or a collection) as ``generate`` and the tasks read it, labelled by ``labels``."""
    return _load_path(path, "any", labels)


def load_any(name: Dataset, data_dir: DataDir = None) -> Any:
    """Dataset ``name`` loaded with the loader of its kind (a path: as a node or graph dataset, unlabelled)."""
    if is_dataset_path(name):
        return _load_path(name, "any", None)
    return _load(name, get_spec(name).kind, data_dir)


def summarize(data: Any) -> dict[str, int]:
    """Counts that identify a loaded dataset (the keys :attr:`DatasetSpec.expected` may check)."""
    return kind_of_data(data).summary(data)
