"""The downstream tasks' result record (:class:`TaskResult`) and their log, ``<load_path>/results.csv``: one row per
result, appended in one write under a lock (:func:`append_results_csv`), a damaged line reported
(:func:`damaged_tail`), and a log of earlier columns migrated (:data:`EARLIER_CSV_HEADERS`).

Every row records what the scored embeddings' record says of the rows
(:class:`~gcc_sgcl.tasks.embeddings.Embeddings`): the encoder's step (``encoder_step``), the views averaged per row
(``views``: the tables' are GCC's 2, ``generate``'s node default is 32) and the vector joined to them
(``joined``); empty for embeddings without a record (written by older code or by a classical baseline).
"""
from __future__ import annotations

import codecs
import csv
import dataclasses
import fcntl
import io
import os
import stat
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from gcc_sgcl.fileio import atomic_target, open_nofollow, refuse_link, write_failure
from gcc_sgcl.tasks.embeddings import Embeddings

RESULTS_FILE = "results.csv"
CSV_COLUMNS = (
    "time",
    "task",
    "dataset",
    "metric",
    "mean",
    "std",
    "std_kind",
    "n",
    "n_scores",
    "protocol",
    "seed",
    "load_path",
    "encoder_step",
    "views",
    "joined",
)
EARLIER_CSV_HEADERS = tuple(CSV_COLUMNS[:CSV_COLUMNS.index(first)] for first in ("encoder_step", "views"))
"""The headers of logs written before ``encoder_step``, and before ``views`` and ``joined``, existed: such a log is
rewritten with the columns (empty in its old rows) when a row is next added."""


@dataclass(frozen=True)
class TaskResult:
    """One metric of one task on one dataset.

    ``scores`` are the per-repetition scores (classification: the mean over the folds of one repetition of
    the CV, see :func:`~gcc_sgcl.tasks.cv.cross_validated`) or per-query-pair hits (similarity search); ``mean`` is
    their mean and ``std_kind`` says what ``std`` is (it is not always the std of ``scores``). ``n`` is the number of
    evaluated examples (nodes, graphs or query pairs). ``correct`` (classification only) is the
    ``(repeats, n)`` boolean out-of-fold record: whether example ``i``'s prediction in repetition ``r`` (made
    when ``i`` was in the test fold, before any bootstrap) was right; it is not written to the CSV.
    ``resumed_seconds`` estimates the time an interrupted earlier run spent on the folds this one read back.
    ``encoder_step``, ``views`` and ``joined`` say what the scored embeddings' record says of them, when known
    (:class:`~gcc_sgcl.tasks.embeddings.Embeddings`, :func:`~gcc_sgcl.tasks.embeddings.checked_embeddings`).
    """

    task: str
    dataset: str
    metric: str
    scores: np.ndarray
    mean: float
    std: float
    std_kind: str
    n: int
    protocol: str
    seed: int
    correct: np.ndarray | None = field(default=None, repr=False, compare=False)
    resumed_seconds: float = field(default=0.0, repr=False, compare=False)
    encoder_step: int | None = None
    views: int | None = None
    joined: str | None = None

    def row(self) -> dict[str, object]:
        """The CSV fields this result owns (``time`` and ``load_path`` are added by the writer)."""
        return {
            "task": self.task,
            "dataset": self.dataset,
            "metric": self.metric,
            "mean": f"{self.mean:.6f}",
            "std": f"{self.std:.6f}",
            "std_kind": self.std_kind,
            "n": self.n,
            "n_scores": len(self.scores),
            "protocol": self.protocol,
            "seed": self.seed,
            "encoder_step": "" if self.encoder_step is None else self.encoder_step,
            "views": "" if self.views is None else self.views,
            "joined": self.joined or "",
        }

    def line(self) -> str:
        """One line of the printed table: ``dataset | metric | mean ± std`` in percent, then what the rows are when
        their record says (views per row, the joined vector).

        >>> TaskResult("node_classification", "usa_airport", "micro_f1", np.zeros(1), 0.6687, 0.0087, "std", 1190,
        ...            "p", 0, views=32).line()
        'usa_airport      | micro_f1  |  66.87 ±  0.87   (std; 32 views per row)'
        """
        about = [self.std_kind, *Embeddings(self.encoder_step, self.views, self.joined).described()]
        return (
            f"{self.dataset:<16} | {self.metric:<9} | {100 * self.mean:6.2f} ± {100 * self.std:5.2f}"
            f"   ({'; '.join(about)})"
        )


def with_embeddings(results: list[TaskResult], embeddings: Embeddings) -> list[TaskResult]:
    """``results`` recording what the scored rows are (their ``results.csv`` rows' ``encoder_step``, ``views``,
    ``joined``)."""
    return [dataclasses.replace(result, encoder_step=embeddings.step, views=embeddings.views, joined=embeddings.joined)
            for result in results]


def _header(path: Path) -> list[str] | None:
    """The header of the CSV file ``path``; None when it is absent or empty."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    with path.open(newline="", encoding="utf-8-sig") as f:  # a byte-order mark (a spreadsheet's save) dropped
        return next(csv.reader(f), [])


def check_results_csv(path: str | Path) -> bool:
    """Whether the ``results.csv`` log ``path`` is new (absent or empty); ``ValueError`` if it exists with another
    header than :data:`CSV_COLUMNS` (or one of :data:`EARLIER_CSV_HEADERS`), and a
    :class:`~gcc_sgcl.fileio.LinkRefusedError` if it or its lock file is a symbolic link (never written through). The
    commands check it before evaluating, so a foreign file costs no work."""
    path = refuse_link(path)
    for file in (path, refuse_link(lock_path(path))):
        _refuse_special(file)
    _check_text(path)
    header = _header(path)
    if header is None:
        return True
    if tuple(header) not in (CSV_COLUMNS, *EARLIER_CSV_HEADERS):
        raise ValueError(f"{path} exists with header {header}, expected {list(CSV_COLUMNS)}; move it away to start a "
                         f"new log")
    return False


def _refuse_special(path: Path) -> None:
    """A ``ValueError`` when ``path`` exists as something other than a regular file (a directory, a FIFO that would
    block the command, a device), naming it."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise ValueError(f"{path} is {kind}; the results log is a file written there: move it away")


def _check_text(path: Path) -> None:
    """A ``ValueError`` naming ``path`` and the line of the first byte that is not UTF-8 (a log saved in another
    encoding), found before any work rather than when the rows are appended; a leading byte-order mark is fine."""
    if not path.is_file():
        return
    data = path.read_bytes()
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        start = error.start + (3 if data.startswith(codecs.BOM_UTF8) else 0)
        line = data[:start].count(b"\n") + 1
        raise ValueError(f"{path} line {line}: byte 0x{data[start]:02x} is not UTF-8 text; save the log as UTF-8 "
                         f"or move it away to start a new one") from None


class DamagedLogWarning(UserWarning):
    """A ``results.csv`` holds a line no CSV reader reads as a row; the message names the file and the line."""


def append_results_csv(path: str | Path, results: Sequence[TaskResult], load_path: str | Path) -> None:
    """Append one row per result to ``path``, writing the header only when the file is new or empty.

    An existing file with a different header is left untouched and reported (:func:`check_results_csv`), rather
    than mixed; one of :data:`EARLIER_CSV_HEADERS` is first rewritten with the columns it lacks (through a temporary
    file). A symbolic link in place of the log or of its lock file is refused
    (:class:`~gcc_sgcl.fileio.LinkRefusedError`), its target left as it was. The rows are added in one write, and a
    failed one (a full disk) is cut off again: a :class:`~gcc_sgcl.fileio.WriteError` naming ``path`` leaves the log
    as it was. Processes appending to one log
    take turns (:func:`results_lock`), so none writes a second header or appends to a file being replaced; a
    damaged line is reported (:func:`damaged_tail`) and the new rows are made to start a row of their own.
    """
    path = refuse_link(path)  # before its lock file is made
    now = datetime.now().isoformat(timespec="seconds")
    with results_lock(path):
        if not check_results_csv(path) and tuple(_header(path)) in EARLIER_CSV_HEADERS:
            _add_new_columns(path)
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=CSV_COLUMNS)
        if _header(path) is None:
            writer.writeheader()
        else:
            text.write(damaged_tail(path))
        for result in results:
            writer.writerow({"time": now, **result.row(), "load_path": str(load_path)})
        _append(path, text.getvalue().encode())


def lock_path(path: Path) -> Path:
    """The lock file of the log ``path``: ``.<name>.lock`` beside it."""
    return path.with_name(f".{path.name}.lock")


@contextmanager
def results_lock(path: Path) -> Iterator[None]:
    """Hold the exclusive ``flock`` of the log ``path`` for the block, waiting for it: a side file
    ``.<name>.lock`` beside it (:func:`lock_path`, opened with ``O_NOFOLLOW``), since the log itself may be replaced
    while it is held (the header migration). The file is left in place (removing it would let two processes lock
    two files)."""
    fd = open_nofollow(lock_path(path), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def damaged_tail(path: Path) -> str:
    """What must precede new rows appended to the log ``path`` for them to read as rows: ``""`` for a sound log;
    else a :class:`DamagedLogWarning` names the first damaged line (a row of another width, an unterminated quote,
    no final line break) and the text returned closes an open quote and ends the last line."""
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as f:
        text = f.read()
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    damage, width, start, open_quote = None, None, 1, False
    try:
        for record in reader:
            width = len(record) if width is None else width
            if damage is None and len(record) != width:
                damage = (start, f"{len(record)} fields where the header has {width}")
            start = reader.line_num + 1
    except csv.Error as error:
        open_quote = "unexpected end of data" in str(error)
        damage = damage or (start, "an unterminated quote" if open_quote else str(error))
    if damage is None and text.endswith("\n"):
        return ""
    line, what = damage or (text.count("\n") + 1, "no line break at its end")
    warnings.warn(f"{path} line {line}: damaged ({what}), it does not read as a row of the log; the new rows start "
                  f"on a line of their own: fix or remove line {line}", DamagedLogWarning, stacklevel=3)
    return ('"' if open_quote else "") + ("" if text.endswith("\n") and not open_quote else "\n")


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (created if absent); a failed write is cut off again, so a full disk leaves no
    half row, and raised as a :class:`~gcc_sgcl.fileio.WriteError` naming ``path``."""
    fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        rest = memoryview(data)
        try:
            while rest:
                rest = rest[os.write(fd, rest):]
        except OSError as error:
            os.ftruncate(fd, size)
            failure = write_failure(path, error)
            if failure is None:
                raise
            raise failure from None
    finally:
        os.close(fd)


def _add_new_columns(path: Path) -> None:
    """Rewrite the log ``path`` of one of :data:`EARLIER_CSV_HEADERS` with the columns of :data:`CSV_COLUMNS` (the new
    ones empty), atomically."""
    with path.open(newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    with atomic_target(path) as tmp, tmp.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(rows)
