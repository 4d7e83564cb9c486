"""The embeddings the tasks score, loaded and checked: evaluation is decoupled from training through
``<load_path>/<dataset>.npy`` (written by ``bash scripts/generate.sh``): one float row per node (node datasets), per
graph (graph datasets), or per node of graph_1 followed by graph_2 (similarity datasets). A dataset given by path
goes by its file's stem (``<load_path>/<stem>.npy``, with ``<stem>.ids.txt`` holding each row's original node id).

``generate`` writes a record beside each file, ``<stem>.provenance.json``, which the commands check
(:func:`checked_embeddings`, :func:`~gcc_sgcl.engine.provenance.check_provenance`): embeddings of another graph than
the one evaluated (a file given by path under a registered dataset's name, an edited file, another data root) are
refused; embeddings of an unfinished run are scored with a one-line warning
(:class:`~gcc_sgcl.engine.checkpoint.UnfinishedRunWarning`), and what the record says of the rows
(:class:`Embeddings`) goes into every row of ``results.csv``. Rows written by ``generate --with-structural`` (the
encoder's embedding joined to the structural vector, the tables' ``<method> ⊕ structural`` rows) are wider rows, read
as any others: ``--hidden`` is then the encoder's size or the rows' whole width
(:data:`~gcc_sgcl.tasks.commands.JOINED_ROWS_HELP`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gcc_sgcl.engine.provenance import check_provenance, encoder_columns, record_path, rows_of
from gcc_sgcl.fileio import folder_of, load_npy


@dataclass(frozen=True)
class Embeddings:
    """What the record of scored embeddings says of their rows (:func:`checked_embeddings`): the ``step`` of the
    encoder that wrote them, the ``views`` averaged per row and the vector ``joined`` to them (``"structural"`` for
    rows of ``generate --with-structural``, else None). Each is None when unknown (no record)."""

    step: int | None = None
    views: int | None = None
    joined: str | None = None

    def described(self) -> list[str]:
        """What the rows are, as the printed table says it (nothing for rows without a record).

        >>> Embeddings(6000, 2, "structural").described()
        ['2 views per row', '⊕ structural']
        """
        return ([f"{self.views} views per row"] if self.views is not None else []) + (
            [f"⊕ {self.joined}"] if self.joined else [])


def check_embeddings_exist(load_path: str | Path, datasets: Sequence[str]) -> None:
    """A FileNotFoundError naming the first dataset of ``datasets`` without ``<load_path>/<dataset>.npy`` and the
    ``generate.sh`` command that writes it."""
    for name in datasets:
        path = embeddings_path(load_path, name)
        if not path.is_file():
            raise FileNotFoundError(f"embeddings file {path} not found; run "
                                    f"`bash scripts/generate.sh <gpu> {load_path} {name}` first")


def embeddings_path(load_path: str | Path, dataset: str) -> Path:
    """``<load_path>/<dataset>.npy`` (a dataset given by path: ``<load_path>/<stem>.npy``; a checkpoint file as
    ``load_path``: its folder's)."""
    from gcc_sgcl.data import dataset_name

    return folder_of(load_path) / f"{dataset_name(dataset)}.npy"


def ids_path(load_path: str | Path, dataset: str) -> Path:
    """``<load_path>/<stem>.ids.txt``: the original node id of each row of a dataset given by path."""
    return embeddings_path(load_path, dataset).with_suffix(".ids.txt")


def check_ids(load_path: str | Path, dataset: str, ids: np.ndarray | None) -> None:
    """Raise if ``<stem>.ids.txt`` exists and does not list ``ids`` row by row (the embeddings were generated
    from another file of the same name)."""
    path = ids_path(load_path, dataset)
    if ids is None or not path.is_file():
        return
    if path.read_text().splitlines() != [str(i) for i in ids.tolist()]:
        raise ValueError(f"{path} does not list the node ids of {dataset} in order: the embeddings were generated "
                         f"from a different graph; run generate.sh on {dataset} again")


def check_classes(labels: np.ndarray, source: str | Path) -> None:
    """A ValueError naming ``source`` (a labels file, or what the rows are) when the labelled items (label >= 0)
    are of fewer than two classes: every classifier would score 100%.

    >>> check_classes(np.array([3, 3, -1]), "labels.txt")
    Traceback (most recent call last):
    ...
    ValueError: labels.txt: all 2 labelled items are of one class; classification needs at least two
    """
    labelled = np.asarray(labels)[np.asarray(labels) >= 0]
    if len(np.unique(labelled)) < 2:
        raise ValueError(f"{source}: all {len(labelled)} labelled items are of one class; classification needs at "
                         f"least two")


def labelled_rows(emb: np.ndarray, labels: np.ndarray, rows_are: str) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``emb`` and ``labels`` whose label is not ``-1`` (unlabelled); prints how many there are
    when some are not. ``rows_are`` names the rows (``"nodes of cora"``). Fewer than two classes among them is a
    ValueError (it would score 100%)."""
    labelled = np.asarray(labels) >= 0
    if not labelled.any():
        raise ValueError(f"none of the {len(labelled)} {rows_are} is labelled; give a labels file with --labels")
    check_classes(labels, rows_are)
    if not labelled.all():
        print(f"{rows_are}: evaluating the {int(labelled.sum())} labelled of {len(labelled)}", flush=True)
    return emb[labelled], np.asarray(labels)[labelled]


def load_embeddings(load_path: str | Path, dataset: str, hidden: int) -> np.ndarray:
    """Load ``<load_path>/<dataset>.npy`` and check it is a matrix of ``hidden`` finite columns (for rows joined to
    the structural vector, :func:`~gcc_sgcl.engine.provenance.encoder_columns`: ``hidden`` of the encoder, and the
    structural columns).

    Called before the dataset is loaded, so that a missing or wrong file fails fast.
    """
    path = embeddings_path(load_path, dataset)
    check_embeddings_exist(load_path, [dataset])
    try:
        emb = load_npy(path)  # its header checked against the file's size before anything is allocated
    except (ValueError, OSError, EOFError) as error:  # not an .npy, truncated, forged, or object arrays
        raise ValueError(f"{path}: not a readable .npy array ({str(error).removeprefix(f'{path}: ')}); generate it "
                         "again") from None
    if emb.ndim != 2:
        raise ValueError(f"{path}: expected a 2-D (rows, hidden) array, got shape {emb.shape}")
    encoder = encoder_columns(path)
    if hidden not in (emb.shape[1], encoder):
        parts = (f" ({encoder} of the encoder joined to {emb.shape[1] - encoder} structural, generate "
                 "--with-structural)") if encoder is not None else ""
        raise ValueError(f"{path} has hidden size {emb.shape[1]}{parts} but --hidden is {hidden}")
    bad = int(np.size(emb) - np.count_nonzero(np.isfinite(emb)))
    if bad:
        raise ValueError(f"{path} contains {bad} non-finite values (NaN/inf); the encoder likely diverged")
    return emb


def check_rows(emb: np.ndarray, load_path: str | Path, dataset: str, rows: int, rows_are: str) -> None:
    """Raise unless ``emb`` has ``rows`` rows; ``rows_are`` says what they stand for (``"nodes in cora"``)."""
    if emb.shape[0] != rows:
        raise ValueError(
            f"{embeddings_path(load_path, dataset)} has {emb.shape[0]} rows but there are {rows} {rows_are}"
        )


def checked_embeddings(load_path: str | Path, evaluated: Sequence[tuple[str, Sequence[Any]]]) -> Embeddings:
    """:func:`~gcc_sgcl.engine.provenance.check_provenance` of each ``(dataset, graphs)`` evaluated together (one
    dataset, or the two graphs of a similarity search by path), and what their records say of the rows
    (:class:`Embeddings`; all None when no file has a record). Files that cannot be scored together are refused (a
    ValueError naming them): a file with a record beside one without, rows of different checkpoints, or of different
    views per row or joined vectors."""
    records = [(name, check_provenance(embeddings_path(load_path, name), name, graphs)) for name, graphs in evaluated]
    files = " and ".join(str(embeddings_path(load_path, name)) for name, _ in evaluated)
    lacking = [str(record_path(embeddings_path(load_path, name))) for name, r in records if r is None]
    if lacking and len(lacking) < len(records):
        raise ValueError(f"{files}: {' and '.join(lacking)} is missing (rows of older code or of a baseline beside "
                         f"rows of generate.sh); run generate.sh on them with one encoder")
    records = [(name, r) for name, r in records if r is not None]
    steps = {r["encoder"]["sha256"]: r["encoder"]["step"] for _, r in records}
    if len(steps) > 1:
        raise ValueError(f"{files} come from different checkpoints (steps {', '.join(map(str, steps.values()))}); "
                         f"run generate.sh on them with one encoder")
    found = {rows_of(r) for _, r in records}
    if len(found) > 1:
        said = " and ".join(f"{name}: {'; '.join(Embeddings(None, *rows_of(r)).described())}" for name, r in records)
        raise ValueError(f"{files} hold different rows ({said}); run generate.sh on them with the same --copies "
                         f"and --with-structural")
    views, joined = next(iter(found), (None, None))
    return Embeddings(next(iter(steps.values()), None), views, joined)
