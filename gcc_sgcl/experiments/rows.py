"""Result rows: the one record the runner, fine-tuning, the runtime measurement and the report share, and the
JSON-lines store that holds them (``docs/results/rows.jsonl.gz``).

A row is one metric of one evaluation: what was evaluated (method, mode, seed, dataset, task, metric), its
score (mean, spread, per-repetition scores, protocol), the budget that makes two rows comparable (steps,
batch, corpus, CV repeats and folds, evaluation seed, SVC protocol, fine-tuning epochs, folds run and view
copies, and a frozen encoder's inference views averaged per row) and where it came from (configuration, commit, wall times). Every stored row names every field (the
committed store was migrated once when ``view_copies`` was added).
"""
from __future__ import annotations

import dataclasses
import fcntl
import gzip
import json
import os
import sys
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Iterator

import numpy as np

from gcc_sgcl.fileio import atomic_target, open_nofollow, refuse_link, sync_folder
from gcc_sgcl.tasks.records import TaskResult

CLASSICAL_MODE = "none"
"""The mode of a training-free method's rows (no pre-training)."""


@dataclass(frozen=True)
class ResultRow:
    """One metric of one evaluation, with its budget and provenance (see the module docstring).

    ``scores`` are the per-repetition scores of classification (empty for similarity search and runtime);
    ``steps`` is the pre-training budget (0: an untrained encoder, the "random init" row); ``svc`` the
    graph-classification SVC protocol of the sweep (:data:`gcc_sgcl.tasks.graph_classification.SVC_PROTOCOLS`);
    ``copies`` is the number of inference views averaged into each embedding row of a frozen encoder's evaluation
    (GCC: 2; None for fine-tuned, training-free and runtime rows); ``pretrain_seconds`` is set on the first row of an encoder that the runner pre-trained itself;
    ``eval_seconds`` is the time of the whole evaluation, repeated on each of its metric rows (one resumed from
    stored folds adds their fit seconds over its processes to this run's time, :mod:`gcc_sgcl.tasks.folds`).
    """

    method: str
    mode: str
    seed: int
    dataset: str
    task: str
    metric: str
    mean: float
    std: float
    std_kind: str
    n: int
    protocol: str
    scores: list[float] = field(default_factory=list)
    steps: int | None = None
    batch_size: int | None = None
    corpus: str | None = None
    repeats: int | None = None
    folds: int | None = None
    eval_seed: int | None = None
    svc: str | None = None
    epochs: int | None = None
    max_folds: int | None = None
    view_copies: int | None = None
    copies: int | None = None
    config: dict[str, Any] = field(default_factory=dict)
    commit: str = "unknown"
    host: dict[str, Any] | None = None  # the machine's CPU and numeric libraries (provenance.host_fingerprint)
    time: str = ""
    pretrain_seconds: float | None = None
    eval_seconds: float | None = None
    columns: int | None = None
    lambda2_quintiles: list[float] | None = None
    lambda2_bounds: list[list[float]] | None = None

    KEY: ClassVar[tuple[str, ...]] = ("method", "mode", "seed", "dataset", "task", "steps", "batch_size", "corpus",
                                      "repeats", "folds", "eval_seed", "svc", "epochs", "max_folds",
                                      "view_copies", "copies")

    def __post_init__(self) -> None:
        finetuned = self.task.endswith("_finetuned")
        if finetuned == (self.view_copies is None):  # part of the key: a fine-tuned row without it matches any
            raise ValueError(f"{'fine-tuned' if finetuned else 'frozen'} row ({self.method}, seed {self.seed}, "
                             f"{self.dataset}, {self.task}): view_copies must be "
                             f"{'given' if finetuned else 'None'}, got {self.view_copies}")
        if self.copies is not None and (finetuned or self.task == "runtime" or self.mode == CLASSICAL_MODE):
            raise ValueError(f"row ({self.method}, seed {self.seed}, {self.dataset}, {self.task}): only a frozen "
                             f"encoder's row averages inference views (copies), got {self.copies}")

    @property
    def key(self) -> tuple:
        """The fields that identify an evaluation (all its metric rows share them)."""
        return tuple(getattr(self, name) for name in self.KEY)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object stored for this row."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ResultRow":
        """A stored row; unknown keys are rejected with their names (a row is also checked as built: a fine-tuned
        row must say how many view copies it cycled, a frozen one none)."""
        extra = set(d) - {f.name for f in dataclasses.fields(cls)}
        if extra:
            raise ValueError(f"unknown result-row fields {sorted(extra)}")
        return cls(**d)

    @classmethod
    def from_result(cls, result: TaskResult, **fields: Any) -> "ResultRow":
        """The row of a task result; ``fields`` add the method, mode, seed, budget and provenance."""
        scores = [float(s) for s in np.ravel(result.scores)] if result.task != "similarity_search" else []
        return cls(task=result.task, dataset=result.dataset, metric=result.metric, mean=float(result.mean),
                   std=float(result.std), std_kind=result.std_kind, scores=scores, n=int(result.n),
                   protocol=result.protocol, **fields)


class RowStore:
    """Result rows in a JSON-lines file, stored as soon as they exist. A ``.gz`` path holds the lines gzip-compressed
    (the committed store, ``docs/results/rows.jsonl.gz``: the configurations repeat from row to row, so it is
    about 25 times smaller); each append then rewrites it atomically as one gzip member. A plain path is appended
    to. Appends and rewrites hold an exclusive lock on ``<path>.lock``, so that concurrent sweeps neither drop nor
    repeat each other's rows."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    @property
    def compressed(self) -> bool:
        """Whether the store is gzip-compressed (its path ends in ``.gz``)."""
        return self.path.suffix == ".gz"

    def text(self) -> str:
        """The stored JSON lines ("" without a store); a damaged compressed store is an error naming it."""
        if not self.path.is_file():
            return ""
        if not self.compressed:
            return self.path.read_text()
        try:
            return gzip.decompress(self.path.read_bytes()).decode()
        except (OSError, EOFError, zlib.error) as err:
            raise ValueError(f"{self.path}: damaged gzip data ({err})") from err

    def load(self) -> list[ResultRow]:
        """Every stored row (a truncated last line, left by a kill mid-write, is ignored); two rows of the same
        evaluation (:attr:`ResultRow.key`) and metric are an error naming both lines, since the tables would keep
        one of them silently."""
        return self._parse(self.text())

    def _parse(self, text: str) -> list[ResultRow]:
        lines = text.splitlines()
        rows = []
        first_line: dict[tuple, int] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = _current(ResultRow.from_dict(json.loads(line)))
            except json.JSONDecodeError as err:
                if number == len(lines):
                    break
                raise ValueError(f"{self.path}, line {number}: not a JSON row ({err})") from err
            except (TypeError, ValueError) as err:
                raise ValueError(f"{self.path}, line {number}: {err}") from err
            seen = first_line.setdefault((row.key, row.metric), number)
            if seen != number:
                raise ValueError(f"{self.path}, line {number}: repeats the evaluation of line {seen} ({row.method}, "
                                 f"{row.mode}, seed {row.seed}, {row.dataset}, {row.metric}, {row.steps} steps); "
                                 f"remove one of the two lines")
            rows.append(row)
        return rows

    def keys(self) -> set[tuple]:
        """The identifying fields (:attr:`ResultRow.key`) of every stored row."""
        return {row.key for row in self.load()}

    def append(self, rows: Iterable[ResultRow]) -> None:
        """Add ``rows``, one JSON object per line, on disk when this returns (a plain store's folder is synced too
        when the append created the file). Under the store's lock, a row whose evaluation and metric are stored
        already (another sweep on the same store finished it first) is left out, with a note on stderr, so that
        :meth:`load` never meets the same evaluation twice."""
        rows = list(rows)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._locked():
            before = self.text()
            stored = {(row.key, row.metric) for row in self._parse(before)}
            new = [row for row in rows if (row.key, row.metric) not in stored]
            if len(new) < len(rows):
                print(f"{self.path}: {len(rows) - len(new)} of {len(rows)} rows were stored already by another run; "
                      f"not added again", file=sys.stderr)
            text = "".join(_line(row) for row in new)
            if self.compressed:
                self._write(before + text)
                return
            created = not self.path.exists()
            with os.fdopen(open_nofollow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            if created:
                sync_folder(self.path.parent)

    def replace(self, drop: Callable[[ResultRow], bool], rows: Iterable[ResultRow]) -> None:
        """Rewrite the store atomically without the stored rows for which ``drop`` is true, plus ``rows``."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._locked():
            kept = [row for row in self.load() if not drop(row)]
            self._write("".join(_line(row) for row in [*kept, *rows]))

    def _write(self, text: str) -> None:
        with atomic_target(self.path) as tmp:
            tmp.write_bytes(gzip.compress(text.encode(), mtime=0) if self.compressed else text.encode())

    @contextmanager
    def _locked(self) -> Iterator[None]:
        refuse_link(self.path)  # a store that is a link is refused before it is read, let alone written
        with os.fdopen(open_nofollow(f"{self.path}.lock", os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield


def _current(row: ResultRow) -> ResultRow:
    """``row`` under its method's current name (:func:`~gcc_sgcl.presets.current_name`): a row stored as plain
    ``sgcl`` before names carried SGCL's filter threshold reads as ``sgcl[c=<its c>]``."""
    from gcc_sgcl.presets import current_name  # here: the presets import the augmentations (torch, DGL)

    name = current_name(row.method, (row.config or {}).get("augment"))
    return row if name == row.method else dataclasses.replace(row, method=name)


def _line(row: ResultRow) -> str:
    return json.dumps(row.to_dict(), sort_keys=True) + "\n"
