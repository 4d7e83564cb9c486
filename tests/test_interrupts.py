"""Ctrl-C, SIGTERM and kills sent to real processes: pre-training writes its checkpoint, says how to resume and
resumes exactly; generate and the task scripts stop with one line and leave nothing half-written; a run killed
outright loses minutes (checkpoints by wall clock), not the steps since the last ``--save-freq``."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from gcc_sgcl.cli import STOP_SIGNALS
from gcc_sgcl.sampling.dataset import loader_batches, quiet_handover_errors, worker_init
from gcc_sgcl.tasks import cv

ROOT = Path(__file__).resolve().parents[1]


# Ctrl-C's default disposition, as in a terminal, then the command: a suite run in the background (where the shell
# ignores SIGINT, and every process it starts inherits that) tests the same thing
DEFAULT_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                  "os.execv(sys.argv[1], sys.argv[1:])")


class Process:
    """A command in its own process group (as a terminal runs it), its stderr collected as it comes."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {**os.environ, "GCC_SGCL_CACHE": str(cwd / "cache"), "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen([sys.executable, "-c", DEFAULT_SIGINT, *argv], cwd=cwd, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.err = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read(1), ""):
            self.err += chunk

    def wait_for(self, text: str, timeout: float = 600) -> None:
        end = time.time() + timeout
        while text not in self.err:
            assert self.proc.poll() is None, f"ended before {text!r}: {self.err[-2000:]}"
            assert time.time() < end, f"no {text!r} within {timeout} s: {self.err[-2000:]}"
            time.sleep(0.2)

    def signal_group(self, signum: int) -> tuple[int, str]:
        os.killpg(self.proc.pid, signum)
        code = self.proc.wait(timeout=600)
        self._reader.join(timeout=10)
        return code, self.err


def _pretrain(tmp: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "gcc_sgcl.engine.pretrain", "--method", "sgcl", "--steps", "40", "--batch-size",
            "8", "--output-dir", str(tmp / "runs"), "--num-workers", "1", *extra]


RUN = "sgcl-c=0.4_e2e_synthetic_s0"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_run_checkpoints_says_how_to_resume_and_resumes_exactly(signum, tmp_path):
    run = Process(_pretrain(tmp_path), tmp_path)
    run.wait_for("s/step:")  # the pace line: a few steps are done
    code, err = run.signal_group(signum)
    assert code == 128 + signum and "Traceback" not in err, err[-3000:]  # 130 for Ctrl-C, 143 for SIGTERM
    assert "Resume: python -m gcc_sgcl.engine.pretrain --method sgcl --steps 40 --batch-size 8 " in err
    assert err.rstrip().endswith("--num-workers 1 --resume")  # the literal command, not a description of it
    stopped = torch.load(tmp_path / "runs" / RUN / "checkpoint.pt", weights_only=True)
    assert 0 < stopped["step"] < 40
    subprocess.run(_pretrain(tmp_path, "--resume"), cwd=tmp_path, check=True, capture_output=True,
                   env={**os.environ, "GCC_SGCL_CACHE": str(tmp_path / "cache")})
    subprocess.run(_pretrain(tmp_path, "--output-dir", str(tmp_path / "straight")), cwd=tmp_path, check=True,
                   capture_output=True, env={**os.environ, "GCC_SGCL_CACHE": str(tmp_path / "cache")})
    resumed = torch.load(tmp_path / "runs" / RUN / "checkpoint.pt", weights_only=True)
    straight = torch.load(tmp_path / "straight" / RUN / "checkpoint.pt", weights_only=True)
    assert resumed["step"] == straight["step"] == 40
    assert all(torch.equal(resumed["model"][k], straight["model"][k]) for k in straight["model"])


@pytest.mark.parametrize("second", ["during-the-step", "after-the-stop-line"])
def test_a_second_ctrl_c_ends_pretraining_at_once_with_status_130_and_no_traceback(second, tmp_path):
    """Issue 83: the second Ctrl-C comes while the step in progress finishes, or once the run has said how to resume
    (its last lines and the interpreter's shutdown, where the signal handlers were Python's again)."""
    run = Process(_pretrain(tmp_path, "--steps", "400"), tmp_path)
    run.wait_for("s/step:")
    os.killpg(run.proc.pid, signal.SIGINT)
    end = time.time() + 600
    while second == "after-the-stop-line" and "Resume: " not in run.err and run.proc.poll() is None:
        assert time.time() < end, run.err[-2000:]
        time.sleep(0.002)
    with contextlib.suppress(ProcessLookupError):  # it may have ended already
        os.killpg(run.proc.pid, signal.SIGINT)
    code = run.proc.wait(timeout=600)
    run._reader.join(timeout=10)
    assert code == 130 and "Traceback" not in run.err and "Exception ignored" not in run.err, run.err[-3000:]


def test_a_killed_run_keeps_the_checkpoint_of_its_last_minutes(tmp_path):
    """--save-freq far beyond the steps: only the wall-clock checkpoint (every 0.01 s here) can exist."""
    run = Process(_pretrain(tmp_path, "--save-freq", "100000", "--save-minutes", "0.0002", "--steps", "400"),
                  tmp_path)
    run.wait_for("s/step:")
    time.sleep(2)
    run.signal_group(signal.SIGKILL)
    state = torch.load(tmp_path / "runs" / RUN / "checkpoint.pt", weights_only=True)
    assert 0 < state["step"] < 400


@pytest.mark.parametrize("command", [
    ["-m", "gcc_sgcl.engine.generate", "--dataset", "synthetic-roles", "--copies", "200"],
    ["-m", "gcc_sgcl.tasks.graph_classification", "--dataset", "synthetic-graphs", "--hidden", "64", "--repeats",
     "200", "--jobs", "2", "--fold-cache", "folds"],
], ids=["generate", "graph_classification"])
def test_ctrl_c_in_generate_and_a_task_is_one_line_and_writes_nothing(command, tmp_path):
    encoder = tmp_path / "enc"
    subprocess.run([sys.executable, "-m", "gcc_sgcl.engine.pretrain", "--steps", "1", "--batch-size", "4",
                    "--output-dir", str(tmp_path), "--run-name", "enc"], check=True, capture_output=True,
                   env={**os.environ, "GCC_SGCL_CACHE": str(tmp_path / "cache")})
    if "generate" not in command[1]:
        subprocess.run([sys.executable, "-m", "gcc_sgcl.engine.generate", "--load-path", str(encoder), "--dataset",
                        "synthetic-graphs", "--copies", "1"], check=True, capture_output=True,
                       env={**os.environ, "GCC_SGCL_CACHE": str(tmp_path / "cache")})
    before = sorted(p.name for p in encoder.iterdir())
    run = Process([sys.executable, *command, "--load-path", str(encoder)], tmp_path)
    if "generate" in command[1]:
        run.wait_for("%|")  # a progress bar: the work has started
    else:  # the first fold written to the fold cache: the forked workers are fitting
        end = time.time() + 600
        while not list((tmp_path / "folds").rglob("*.npz")) and time.time() < end:
            assert run.proc.poll() is None, run.err[-2000:]
            time.sleep(0.2)
    code, err = run.signal_group(signal.SIGINT)
    assert code == 130 and "Traceback" not in err, err[-3000:]
    assert err.rstrip().splitlines()[-1].startswith("interrupted: nothing half-written")
    kept = {"synthetic-roles.partial.npy", "synthetic-roles.partial.json"} if "generate" in command[1] else set()
    assert set(p.name for p in encoder.iterdir()) - set(before) <= kept  # generate's finished chunks, to go on


def test_generate_stopped_by_sigterm_goes_on_from_its_finished_chunks_to_a_straight_runs_rows(tmp_path):
    env = {**os.environ, "GCC_SGCL_CACHE": str(tmp_path / "cache")}
    subprocess.run([sys.executable, "-m", "gcc_sgcl.engine.pretrain", "--steps", "1", "--batch-size", "4",
                    "--output-dir", str(tmp_path), "--run-name", "enc"], check=True, capture_output=True, env=env)
    straight, stopped = tmp_path / "enc", tmp_path / "stopped"
    shutil.copytree(straight, stopped)
    command = ["-m", "gcc_sgcl.engine.generate", "--dataset", "synthetic-roles", "--copies", "40", "--num-workers", "1"]
    subprocess.run([sys.executable, *command, "--load-path", str(straight)], check=True, capture_output=True, env=env)
    run = Process([sys.executable, *command, "--load-path", str(stopped)], tmp_path)
    end = time.time() + 600
    while not any(int(p) >= 64 for p in re.findall(r"(\d+)%\|", run.err)):  # chunks of 256 of 1 620 rows done
        assert run.proc.poll() is None and time.time() < end, run.err[-2000:]
        time.sleep(0.1)
    code, err = run.signal_group(signal.SIGTERM)  # a kill as Ctrl-C: generate keeps its finished chunks
    assert code == 143 and "Traceback" not in err, err[-3000:]
    assert err.rstrip().splitlines()[-1].startswith("terminated (SIGTERM): nothing half-written")
    state = json.loads((stopped / "synthetic-roles.partial.json").read_text())
    chunks = state["chunks"]  # the finished chunks of 256 rows, in order, not all seven
    assert chunks == [[0, 256 * i] for i in range(len(chunks))] and 0 < len(chunks) < 7
    assert not (stopped / "synthetic-roles.npy").exists()
    again = subprocess.run([sys.executable, *command, "--load-path", str(stopped)], capture_output=True, text=True,
                           env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert re.search(r"\b6[34]%\|", again.stderr)  # its bar starts at the finished chunk
    assert np.load(stopped / "synthetic-roles.npy").tobytes() == np.load(straight / "synthetic-roles.npy").tobytes()
    assert not list(stopped.glob("*.partial.*"))


def test_a_workers_thread_ends_silently_when_the_main_process_hangs_up_mid_handover(capsys):
    def fail(error):
        thread = threading.Thread(target=lambda: (_ for _ in ()).throw(error))
        previous, threading.excepthook = threading.excepthook, quiet_handover_errors
        try:
            thread.start()
            thread.join()
        finally:
            threading.excepthook = previous
        return capsys.readouterr().err

    assert fail(BrokenPipeError(32, "Broken pipe")) == "" and fail(ConnectionResetError()) == ""
    assert "ValueError: a real bug" in fail(ValueError("a real bug"))  # anything else is still reported


def _stopped_before_its_init(signals, init, *args) -> None:
    """A forked worker that gets ``signals`` after its fork, before its initializer ignores them: the race of a
    Ctrl-C sent to the process group while the command forks its workers."""
    for signum in signals:
        os.kill(os.getpid(), signum)
    init(*args)


def test_ctrl_c_between_a_dataloader_workers_fork_and_its_init_waits_for_the_init_to_drop_it(capfd):
    late = lambda i: _stopped_before_its_init(STOP_SIGNALS, worker_init, i)  # noqa: E731
    loader = torch.utils.data.DataLoader(range(6), batch_size=2, num_workers=2, worker_init_fn=late)
    assert [b.tolist() for b in loader_batches(loader)] == [[0, 1], [2, 3], [4, 5]]
    assert "Traceback" not in capfd.readouterr().err


def test_ctrl_c_between_a_cv_workers_fork_and_its_init_waits_for_the_init_to_drop_it(monkeypatch, capfd):
    init = cv._init_worker
    # Ctrl-C only: the parent ends these workers by SIGTERM (they keep its default)
    monkeypatch.setattr(cv, "_init_worker", lambda task: _stopped_before_its_init([signal.SIGINT], init, task))
    assert cv.forked_map(lambda i: i * i, 4, jobs=2) == [0, 1, 4, 9]
    assert "Traceback" not in capfd.readouterr().err


def _seconds_until_a_ctrl_c_ends_a_cv_map(capfd) -> float:
    """Seconds until the Ctrl-C the caller arranges ends a map of four 30-s fits on two workers (60 s if the pool
    waited for them), raised as ``KeyboardInterrupt`` with no traceback printed."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a terminal's Ctrl-C, also in the background
    began = time.time()
    try:
        with pytest.raises(KeyboardInterrupt):
            cv.forked_map(lambda i: time.sleep(30), 4, jobs=2)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "Traceback" not in capfd.readouterr().err
    return time.time() - began


def test_ctrl_c_while_the_cv_pool_forks_ends_its_workers_rather_than_waiting_for_their_fits(monkeypatch, capfd):
    held = cv.signals_held

    @contextlib.contextmanager
    def ctrl_c_inside():
        with held():
            yield
            os.kill(os.getpid(), signal.SIGINT)  # delivered when the block lets it through, the submits done

    monkeypatch.setattr(cv, "signals_held", ctrl_c_inside)
    assert _seconds_until_a_ctrl_c_ends_a_cv_map(capfd) < 20


def test_a_ctrl_c_another_thread_takes_still_ends_the_cv_map_at_once(capfd):
    # A Ctrl-C sent while the main thread blocks it (the pool's fork) goes to a thread that does not; CPython runs
    # its handler there but raises only in the main thread, which notices once it runs again: it must not sit in a
    # wait until a fit ends. The timer thread takes the signal itself, the main thread then waiting for the fits.
    ctrl_c = threading.Timer(2, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT))
    ctrl_c.start()
    try:
        assert _seconds_until_a_ctrl_c_ends_a_cv_map(capfd) < 10
    finally:
        ctrl_c.cancel()


def test_sigterm_inside_any_command_body_exits_143_with_one_line_and_restores_the_handler(capsys):
    from gcc_sgcl.cli import user_errors

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stopped:
        with user_errors():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
    assert stopped.value.code == 143
    assert capsys.readouterr().err.strip().startswith("terminated (SIGTERM): nothing half-written")
    assert signal.getsignal(signal.SIGTERM) is before
    with pytest.raises(SystemExit) as stopped, user_errors():
        raise KeyboardInterrupt
    assert stopped.value.code == 130


def test_a_workers_broken_pipe_reported_by_a_thread_during_a_stop_prints_nothing(capsys):
    from gcc_sgcl.cli import quiet_stopped_workers

    namespace = {}  # a function "of multiprocessing", as its fd-sharing thread's send is
    exec(compile("def send():\n    raise BrokenPipeError(32, 'Broken pipe')\n", "/x/multiprocessing/reduction.py",
                 "exec"), namespace)
    previous = quiet_stopped_workers()
    try:
        for error in (namespace["send"], lambda: 1 / 0):
            try:
                error()
            except Exception:
                sys.excepthook(*sys.exc_info())  # what multiprocessing.resource_sharer's thread does
    finally:
        sys.excepthook, threading.excepthook, sys.unraisablehook = previous
    err = capsys.readouterr().err
    assert "BrokenPipeError" not in err and "ZeroDivisionError" in err  # only the stopped worker's pipe is dropped


def test_a_dataloader_iterator_interrupted_while_made_prints_nothing_when_collected():
    """A Ctrl-C inside torch's ``_MultiProcessingDataLoaderIter.__init__`` leaves an object whose ``__del__`` reads
    ``_shutdown`` it never set: "Exception ignored ... AttributeError" after the one line; other unraisable errors
    still print."""
    import gc

    from gcc_sgcl.cli import quiet_stopped_workers

    namespace = {}  # a class "of torch's dataloader.py", as the half-made iterator is
    exec(compile("class Iter:\n    def __del__(self):\n        self._shutdown\n", "/x/torch/utils/data/dataloader.py",
                 "exec"), namespace)

    class Other:
        def __del__(self):
            raise ZeroDivisionError("kept")

    reported, saved = [], sys.unraisablehook
    sys.unraisablehook = lambda unraisable: reported.append(unraisable.exc_type)  # what would print
    previous = quiet_stopped_workers()
    try:
        namespace["Iter"]()
        Other()
        gc.collect()
    finally:
        sys.excepthook, threading.excepthook, sys.unraisablehook = previous
        sys.unraisablehook = saved
    assert reported == [ZeroDivisionError]
