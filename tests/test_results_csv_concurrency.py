"""``results.csv`` loses no row: several processes appending at once (to a new log, or to a log of earlier code
whose header is being migrated) leave every row readable under one header, and a damaged line is reported by
its number while the new rows still read as rows."""
import csv
import multiprocessing
import time
import warnings

import numpy as np
import pytest

import gcc_sgcl.tasks.records as records
from gcc_sgcl.tasks.records import (
    CSV_COLUMNS,
    EARLIER_CSV_HEADERS,
    RESULTS_FILE,
    DamagedLogWarning,
    TaskResult,
    append_results_csv,
)

PROCESSES, LOGS, APPENDS = 6, 16, 3  # each log is raced on afresh: the processes meet at a barrier before it


def _result(dataset: str) -> TaskResult:
    return TaskResult("node_classification", dataset, "micro_f1", np.array([0.7]), 0.7, 0.0, "std", 10, "p", 0)


def _append_many(logs, worker, barrier) -> None:
    """One writer process: for each log, wait for the others, then append APPENDS rows one at a time (each write
    a little late, so that a process reading the log between another's check and write is likely)."""
    write = records._append
    records._append = lambda path, data: (time.sleep(0.002), write(path, data))[-1]
    for log in logs:
        barrier.wait()
        for i in range(APPENDS):
            append_results_csv(log, [_result(f"p{worker}-{i}")], "saved/x")


def _race(logs) -> None:
    """PROCESSES real processes appending to each of ``logs`` at the same moment."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(PROCESSES)
    procs = [context.Process(target=_append_many, args=(logs, w, barrier)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * PROCESSES


def _read(log) -> tuple[list[str], list[dict]]:
    with open(log, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def _expected_datasets() -> list[str]:
    return sorted(f"p{w}-{i}" for w in range(PROCESSES) for i in range(APPENDS))


def test_processes_creating_a_log_at_once_write_one_header_and_every_row(tmp_path):
    logs = [tmp_path / str(k) / RESULTS_FILE for k in range(LOGS)]
    for log in logs:
        log.parent.mkdir()
    _race(logs)
    for log in logs:
        header, rows = _read(log)
        assert tuple(header) == CSV_COLUMNS
        assert sorted(row["dataset"] for row in rows) == _expected_datasets()  # a second header reads as a row


@pytest.mark.parametrize("old_header", EARLIER_CSV_HEADERS, ids=["before encoder_step", "before views"])
def test_appends_racing_the_header_migration_lose_no_row(tmp_path, old_header):
    logs = [tmp_path / str(k) / RESULTS_FILE for k in range(LOGS)]
    for log in logs:
        log.parent.mkdir()
        with open(log, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=old_header)
            writer.writeheader()
            writer.writerow({**dict.fromkeys(old_header, "0"), "dataset": "old"})
    _race(logs)
    for log in logs:
        header, rows = _read(log)
        assert tuple(header) == CSV_COLUMNS
        assert sorted(row["dataset"] for row in rows) == sorted(["old", *_expected_datasets()])


def _log_with_last_line(tmp_path, last: str):
    """A log of one sound row followed by the text ``last`` (line 3)."""
    log = tmp_path / RESULTS_FILE
    append_results_csv(log, [_result("sound")], "saved/x")
    with open(log, "a", newline="") as f:
        f.write(last)
    return log


@pytest.mark.parametrize("last", ['2026-01-01,node_classification,"cut\n', '2026-01-01,node_classification,"cut',
                                  "2026-01-01,node_classification,cut"],
                         ids=["unterminated quote", "unterminated quote, no line break", "no line break"])
def test_a_damaged_last_line_is_reported_by_number_and_the_new_row_stays_readable(tmp_path, last):
    log = _log_with_last_line(tmp_path, last)
    with pytest.warns(DamagedLogWarning, match=f"{log} line 3: damaged"):
        append_results_csv(log, [_result("new")], "saved/x")
    _, rows = _read(log)
    assert [row["dataset"] for row in rows][0] == "sound" and rows[-1]["dataset"] == "new"
    assert rows[-1]["load_path"] == "saved/x" and rows[-1]["mean"] == "0.700000"


def test_a_row_of_another_width_is_reported_by_its_line_number(tmp_path):
    log = _log_with_last_line(tmp_path, "a,b,c\n")
    with pytest.warns(DamagedLogWarning, match=f"{log} line 3: damaged"):
        append_results_csv(log, [_result("next")], "saved/x")  # line 4, sound
    with pytest.warns(DamagedLogWarning, match=f"{log} line 3: damaged \\(3 fields where the header has 15\\)"):
        append_results_csv(log, [_result("new")], "saved/x")
    assert _read(log)[1][-1]["dataset"] == "new"


def test_a_sound_log_appends_without_a_warning(tmp_path):
    log = tmp_path / RESULTS_FILE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("a", "b"):
            append_results_csv(log, [_result(name)], "saved/x")
    assert [row["dataset"] for row in _read(log)[1]] == ["a", "b"]
