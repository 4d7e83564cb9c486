"""The fold cache: an evaluation killed part-way resumes at its missing folds, with the result of an uninterrupted
run, and never reads the folds of another evaluation."""
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score

from gcc_sgcl.engine.run_lock import LOCK_NAME, RunFolderLockedError
from gcc_sgcl.tasks.cv import cross_validated, estimator_fit_predict, repeated_stratified_folds
from gcc_sgcl.tasks.folds import (
    CacheProgress,
    FoldResult,
    cache_meta,
    cache_progress,
    close_cache,
    held_cache,
    load_fold,
    open_cache,
    save_fold,
)
from gcc_sgcl.tasks.graph_classification import evaluate_graph_classification
from gcc_sgcl.tasks.node_classification import evaluate_node_classification


ROOT = Path(__file__).resolve().parents[1]


def near_chance(n_per_class: int = 20, dim: int = 4, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Features independent of two balanced classes: every fold's predictions matter to the score."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2 * n_per_class, dim)), rng.permutation(np.repeat([0, 1], n_per_class))


class Killed(Exception):
    """The kill of a run, raised by a fit."""


def test_an_evaluation_killed_part_way_resumes_at_its_missing_folds_with_the_same_result(tmp_path):
    x, y = near_chance()
    fit = estimator_fit_predict(LogisticRegression(), x, y)
    calls, kill_at = [], [4]

    def counted(train, test):
        calls.append(len(test))
        if len(calls) in kill_at:
            raise Killed  # after three folds were stored
        return fit(train, test)

    def evaluate(fit_predict, cache=None, jobs=1):
        return cross_validated("t", "d", "accuracy", fit_predict, accuracy_score, y, "logreg", folds=4, repeats=3,
                               seed=1, jobs=jobs, cache=cache, features=x)

    folder = tmp_path / "d"
    with pytest.raises(Killed):
        evaluate(counted, folder)
    assert sorted(p.name for p in folder.glob("*.npz")) == ["0.npz", "1.npz", "2.npz"]
    progress = cache_progress(folder)
    assert (progress.stored, progress.total) == (3, 12) and progress.seconds > 0
    assert cache_progress(tmp_path / "elsewhere") == cache_progress(None) == CacheProgress()
    calls.clear()
    kill_at.clear()
    resumed = evaluate(counted, folder)
    assert len(calls) == 12 - 3  # only the missing folds were fitted
    fresh = evaluate(fit)
    assert np.array_equal(resumed.scores, fresh.scores) and np.array_equal(resumed.correct, fresh.correct)
    assert resumed.resumed_seconds > 0 and fresh.resumed_seconds == 0
    assert not folder.exists()  # removed once every fold is in
    kill_at.append(len(calls) + 6)  # a second kill, then a resume in two forked processes
    with pytest.raises(Killed):
        evaluate(counted, folder)
    assert np.array_equal(evaluate(fit, folder, jobs=2).correct, fresh.correct) and not folder.exists()
    with pytest.raises(ValueError, match="needs the features"):
        cross_validated("t", "d", "accuracy", fit, accuracy_score, y, "logreg", folds=4, repeats=3, cache=folder)


def test_stored_folds_are_kept_only_for_the_same_evaluation(tmp_path):
    x, y = near_chance(100, 8)
    x = x.astype(np.float32)
    splits = repeated_stratified_folds(y, 4, 2, 1)
    meta = cache_meta(y, splits, "logreg", 1)

    def stored_after(features, labels=y, model="logreg", seed=1, repeats=2):
        folder = tmp_path / "d"
        open_cache(folder, x, meta)
        save_fold(folder, 0, FoldResult(np.zeros(len(splits[0][0][1])), 1.0))
        return open_cache(folder, features, cache_meta(labels, repeated_stratified_folds(labels, 4, repeats, seed),
                                                       model, seed))

    # the same embedding recomputed on another CPU (every entry one float32 step away) finds its fold
    assert stored_after(np.nextafter(x, np.float32(np.inf))) == 1
    # another embedding (shifted or rescaled), classifier, CV seed, repetition count or labelling does not
    assert stored_after(x + 0.01) == 0 and stored_after(2 * x) == 0 and stored_after(x[:-1]) == 0
    assert stored_after(x, model="svc") == 0 and stored_after(x, seed=2) == 0 and stored_after(x, repeats=3) == 0
    assert stored_after(x, labels=y[::-1].copy()) == 0 and stored_after(x, labels=y + 1) == 0  # same splits
    assert list((tmp_path / "d").glob("*.npz")) == []  # a mismatch empties the folder


def test_a_fold_file_that_is_gone_or_wrong_is_fitted_again(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    save_fold(folder, 0, FoldResult(np.arange(3), 2.5))
    assert load_fold(folder, 0, 3).predictions.tolist() == [0, 1, 2] and load_fold(folder, 0, 3).seconds == 2.5
    assert load_fold(folder, 0, 4) is None and load_fold(folder, 1, 3) is None  # wrong size, missing
    (folder / "1.npz").write_bytes(b"truncated")
    assert load_fold(folder, 1, 3) is None
    (folder / "notes.txt").write_text("not the cache's")
    close_cache(folder)  # only the cache's own files go
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    (folder / "notes.txt").unlink()
    close_cache(folder)  # another sweep finished the same evaluation: writing and removing are no-ops
    save_fold(folder, 2, FoldResult(np.arange(3), 1.0))
    close_cache(folder)
    assert not folder.exists()


def test_the_task_entry_points_read_and_clear_the_cache(tmp_path):
    x, y = near_chance()
    for task in (evaluate_graph_classification, evaluate_node_classification):
        plain = task(x, y, folds=4, repeats=2)
        model = plain.protocol.rsplit(", 2x repeated", 1)[0]
        splits = repeated_stratified_folds(y, 4, 2, 0)
        folder = tmp_path / task.__name__
        open_cache(folder, x, cache_meta(y, splits, model, 0))
        wrong = 1 - y[splits[0][0][1]]  # a stored first fold whose every prediction is wrong
        save_fold(folder, 0, FoldResult(wrong, 1.0))
        cached = task(x, y, folds=4, repeats=2, jobs=2, cache=folder)
        assert cached.scores[0] < plain.scores[0] and cached.scores[1] == plain.scores[1]
        assert not cached.correct[0, splits[0][0][1]].any() and not folder.exists()


def test_a_second_evaluation_into_a_folder_in_use_stops_naming_it_and_leaves_the_folds_alone(tmp_path):
    x, y = near_chance()
    fit = estimator_fit_predict(LogisticRegression(), x, y)

    calls = []

    def killed_after_two(train, test):
        calls.append(1)
        if len(calls) == 3:
            raise Killed
        return fit(train, test)

    def evaluate(fit_predict, folder):
        return cross_validated("t", "d", "accuracy", fit_predict, accuracy_score, y, "logreg", folds=4, repeats=2,
                               seed=1, cache=folder, features=x)

    folder = tmp_path / "row" / "d"
    with pytest.raises(Killed):
        evaluate(killed_after_two, folder)
    stored = sorted(p.read_bytes() for p in folder.glob("*.npz"))
    assert len(stored) == 2 and not (folder / LOCK_NAME).exists()  # a failed evaluation releases the folder
    with held_cache(folder):  # the first evaluation, still running
        # another model over the same folder would empty it; it stops before touching it
        message = f"{re.escape(str(folder))} is in use by another evaluation \\(PID {os.getpid()}.*its own --fold-cache"
        with pytest.raises(RunFolderLockedError, match=message):
            cross_validated("t", "d", "accuracy", fit, accuracy_score, y, "svc", folds=4, repeats=2, seed=1,
                            cache=folder, features=x)
        assert sorted(p.read_bytes() for p in folder.glob("*.npz")) == stored
    assert folder.exists()  # still holds the folds
    assert np.array_equal(evaluate(fit, folder).correct, evaluate(fit, None).correct)
    assert not (tmp_path / "row").exists()  # folder, lock file and the row's folder are gone


def test_cv_workers_forked_under_the_lock_do_not_keep_it_once_the_evaluation_is_killed(tmp_path):
    folder = tmp_path / "d"
    # each worker reports with one os.write (atomic on a pipe): print's separate writes of text and newline
    # from the two workers could interleave into one line "fittingfitting" (seen in CI)
    script = ("import os, time\nfrom pathlib import Path\nfrom gcc_sgcl.tasks.cv import forked_map\n"
              "from gcc_sgcl.tasks.folds import held_cache\n"
              "def fold(i):\n    os.write(1, b'fitting\\n')\n    time.sleep(60)\n"
              f"with held_cache(Path({str(folder)!r})):\n    forked_map(fold, 2, jobs=2)\n")
    evaluation = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                                  start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert evaluation.stdout.readline().strip() == "fitting"  # the workers are fitting, the lock is held
        with pytest.raises(RunFolderLockedError):
            with held_cache(folder):
                pass
        evaluation.kill()
        evaluation.wait()
        assert (folder / LOCK_NAME).exists()  # a killed holder leaves its file: the next evaluation takes it over
        with held_cache(folder):  # while the orphaned workers still sleep
            assert (folder / LOCK_NAME).read_text().strip() == str(os.getpid())
    finally:
        os.killpg(evaluation.pid, signal.SIGKILL)  # the orphaned workers
