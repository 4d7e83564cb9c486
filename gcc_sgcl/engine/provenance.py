"""The record beside each embeddings file, ``<stem>.provenance.json``: written by ``generate``
(:func:`embeddings_record`, :func:`write_embeddings`) and read by the task commands (:func:`check_provenance`,
:func:`rows_of`, :func:`encoder_columns`).

A record names the checkpoint that wrote the rows (its sha256 and step, and whether its run had finished), the
dataset's source (a registered name, or a path and the file's sha256) and the digest of its graphs, the views'
settings, whether the rows are joined to the structural vector, and the sha256 of the files it describes. Embeddings of
another graph than the one evaluated are refused; those of an unfinished run are scored with a one-line
:class:`~gcc_sgcl.engine.checkpoint.UnfinishedRunWarning`.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gcc_sgcl.classical import STRUCTURAL
from gcc_sgcl.classical.structural import GRAPH_COLUMNS, NODE_COLUMNS
from gcc_sgcl.config import Config
from gcc_sgcl.data.graphs import graphs_digest
from gcc_sgcl.engine.checkpoint import Checkpoint, UnfinishedRunWarning
from gcc_sgcl.fileio import atomic_target, refuse_link, remove_stale_temporaries, sha256_of

RECORD_SUFFIX = ".provenance.json"
RECORD_FORMAT = 1  # raise when a field of :func:`embeddings_record` changes meaning
_RECORD_FIELDS = (("embeddings", "sha256"), ("encoder", "sha256"), ("encoder", "step"), ("encoder", "steps"),
                  ("encoder", "finished"), ("dataset", "source"), ("dataset", "graphs_sha256"))
"""The fields of an embeddings record (:func:`embeddings_record`) that :func:`check_provenance` reads."""


def record_path(embeddings: str | Path) -> Path:
    """The record of the embeddings file ``<stem>.npy``: ``<stem>.provenance.json``.

    >>> record_path("saved/run/usa_airport.npy").name
    'usa_airport.provenance.json'
    """
    return Path(embeddings).with_suffix(RECORD_SUFFIX)


def embeddings_record(checkpoint: Checkpoint, cfg: Config, name: str, data: Any, views: dict[str, Any],
                      with_structural: bool) -> dict:
    """Where the embeddings of dataset ``name`` (loaded as ``data``) come from: the encoder (checkpoint file and
    sha256, step, steps, whether its run had finished), the dataset (``source`` ``"registered"`` with its name, or
    ``"path"`` with the file and its sha256; the digest of its graphs, what the task commands compare) and the
    ``views``' settings (``copies``, ``seed``, ``visit_budget``); ``joined``: None, or for rows joined to the
    structural vector (``with_structural``, :func:`~gcc_sgcl.engine.inference.joined_rows`) the vector joined to the
    encoder's columns and the names of its columns, which follow them. :func:`write_embeddings` adds the files' own
    digests."""
    from gcc_sgcl.data import is_dataset_path, kind_of_data

    step, steps = int(checkpoint.state["step"]), cfg.train.steps
    source = {"source": "registered", "name": name}
    if is_dataset_path(name):
        file = Path(name).resolve()
        source = {"source": "path", "path": str(file), "sha256": sha256_of(file) if file.is_file() else None}
    kind = kind_of_data(data)
    vector = GRAPH_COLUMNS if kind.per_graph else NODE_COLUMNS
    return {
        "format": RECORD_FORMAT,
        "encoder": {"checkpoint": str(checkpoint.path.resolve()), "sha256": checkpoint.sha256, "step": step,
                    "steps": steps, "finished": step >= steps, "method": cfg.method},
        "dataset": {**source, "kind": kind.name, "graphs_sha256": graphs_digest(kind.graphs(data))},
        "views": views,
        "joined": {"vector": STRUCTURAL, "encoder_columns": cfg.model.hidden_size, "vector_columns": list(vector)}
        if with_structural else None,
    }


def output_files(path: Path) -> tuple[Path, Path, Path]:
    """The files :func:`write_embeddings` writes for the embeddings file ``path``: itself, ``<stem>.ids.txt`` and
    ``<stem>.provenance.json``.

    >>> [p.name for p in output_files(Path("saved/run/g.npy"))]
    ['g.npy', 'g.ids.txt', 'g.provenance.json']
    """
    return path, path.with_suffix(".ids.txt"), record_path(path)


def write_embeddings(path: Path, emb: np.ndarray, ids: np.ndarray | None, record: dict) -> list[Path]:
    """Write ``emb`` to ``path``, the ``ids`` of its rows (if any) to ``<stem>.ids.txt`` and ``record`` (completed
    with the two files' sha256) to ``<stem>.provenance.json``, each through a temporary file; returns the paths.
    The record comes last, and names the bytes of the files it describes, so a reader can tell when a file was
    replaced without it."""
    files = [path]
    for output in output_files(path):
        refuse_link(output)  # a planted link: refused before any of the files is written
        remove_stale_temporaries(output)  # of a killed generate
    with atomic_target(path) as tmp, open(tmp, "wb") as f:
        np.save(f, emb)
    record = {**record, "embeddings": {"file": path.name, "sha256": sha256_of(path), "shape": list(emb.shape)},
              "ids": None}
    if ids is not None:
        files.append(path.with_suffix(".ids.txt"))
        with atomic_target(files[-1]) as tmp:
            tmp.write_text("".join(f"{i}\n" for i in ids.tolist()))
        record["ids"] = {"file": files[-1].name, "sha256": sha256_of(files[-1])}
    files.append(record_path(path))
    with atomic_target(files[-1]) as tmp:
        tmp.write_text(json.dumps(record, indent=1) + "\n")
    return files


def check_provenance(emb_path: Path, dataset: str, graphs: Sequence[Any]) -> dict | None:
    """Check the embeddings file ``emb_path`` of ``dataset`` against its record (``<stem>.provenance.json``) and the
    ``graphs`` being evaluated; returns the record (its ``encoder`` entry: ``step``, ``steps``, ``finished``,
    ``sha256``; ``views``; ``joined``), or None when there is no record (embeddings of older code or of a classical
    baseline: nothing to check).

    Refused (a ValueError naming the file and what differs): a damaged record, a ``.npy`` that is not the file the
    record describes, embeddings of a file given by path evaluated as a registered dataset of the same name (or the
    reverse), and embeddings of other graphs (another digest: an edited file, another data root). Embeddings of an
    unfinished run are scored, with a one-line :class:`UnfinishedRunWarning`: scoring an encoder part-way through its
    training is a legitimate use (a learning curve), so it is said, not refused.
    """
    from gcc_sgcl.data import is_dataset_path

    path = record_path(emb_path)
    if not path.is_file():
        return None
    record = _read_record(path)
    encoder, source = record["encoder"], record["dataset"]
    if record["embeddings"].get("sha256") != sha256_of(emb_path):
        raise ValueError(f"{emb_path} is not the file its record {path.name} describes (written since, without a "
                         f"record?); run generate.sh on {dataset} again")
    if is_dataset_path(dataset) and source["source"] != "path":
        raise ValueError(f"{emb_path} holds the registered dataset {source.get('name')!r}, not the file {dataset}; "
                         f"run generate.sh on the file, or evaluate {source.get('name')!r}")
    if not is_dataset_path(dataset) and source["source"] != "registered":
        raise ValueError(f"{emb_path} was generated from the file {source.get('path')}, not from the registered dataset "
                         f"{dataset!r}; evaluate it by that path, or run generate.sh on {dataset}")
    if source["graphs_sha256"] != graphs_digest(list(graphs)):
        raise ValueError(f"{emb_path} was generated from other graphs than those of {dataset} (its record "
                         f"{path.name} has another digest: an edited file, or another data root); run generate.sh "
                         f"on {dataset} again")
    if not encoder["finished"]:
        warnings.warn(f"{emb_path}: embeddings of an unfinished run (its encoder at step {encoder['step']} of "
                      f"{encoder['steps']}); the scores are of that step", UnfinishedRunWarning, stacklevel=2)
    return record


def _read_record(path: Path) -> dict:
    """The embeddings record ``path``, checked to hold the fields :func:`check_provenance` reads."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable embeddings record ({error}); run generate.sh again") from None
    missing = next((f"{group}.{key}" for group, key in _RECORD_FIELDS
                    if not isinstance(record, dict) or not isinstance(record.get(group), dict)
                    or key not in record[group]), None)
    if missing is not None:
        raise ValueError(f"{path}: not an embeddings record of this code (no {missing}); run generate.sh again")
    if record.get("format") != RECORD_FORMAT:
        raise ValueError(f"{path}: record format {record.get('format')!r}, this code reads {RECORD_FORMAT}; run "
                         f"generate.sh again")
    return record


def rows_of(record: dict) -> tuple[int | None, str | None]:
    """The views per row and the joined vector an embeddings record names (None for a record without them, or with
    a value of another type: a hand-edited record is not trusted).

    >>> rows_of({"views": {"copies": 2}, "joined": {"vector": "structural"}}), rows_of({"views": {"copies": True}})
    ((2, 'structural'), (None, None))
    """
    views = record.get("views") if isinstance(record.get("views"), dict) else {}
    joined = record.get("joined") if isinstance(record.get("joined"), dict) else {}
    copies, vector = views.get("copies"), joined.get("vector")
    return (copies if isinstance(copies, int) and not isinstance(copies, bool) else None,
            vector if isinstance(vector, str) else None)


def encoder_columns(emb_path: str | Path) -> int | None:
    """The encoder's columns of embeddings written by ``generate --with-structural`` (their record's ``joined``
    entry; the structural vector's columns follow them); None for rows that are not joined, or without a readable
    record (:func:`check_provenance` says what is wrong with it)."""
    try:
        joined = json.loads(record_path(emb_path).read_text()).get("joined")
        return int(joined["encoder_columns"]) if joined else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
