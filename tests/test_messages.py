"""Refusals are one line naming the input and the parameter, and come before the work: results logs that cannot be
appended to, seeds beyond what the random streams take, a data root that is a file, run names no folder can hold,
dataset files whose names start with '-', and a second stop signal while the first is reported."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gcc_sgcl.data.paths import resolve_data_dir
from gcc_sgcl.presets import make_config
from gcc_sgcl.tasks.records import CSV_COLUMNS, check_results_csv

ROOT = Path(__file__).resolve().parents[1]


def test_a_results_log_saved_with_a_byte_order_mark_is_appended_to(tmp_path):
    log = tmp_path / "results.csv"
    log.write_bytes(b"\xef\xbb\xbf" + ",".join(CSV_COLUMNS).encode() + b"\n")
    assert check_results_csv(log) is False  # a log of the expected header, not new


@pytest.mark.parametrize("make,message", [
    (lambda p: p.write_bytes(",".join(CSV_COLUMNS).encode() + b"\n2026,x\xff\n"),
     r"results.csv line 2: byte 0xff is not UTF-8 text"),
    (lambda p: p.mkdir(), r"results.csv is a directory; the results log is a file"),
    (lambda p: os.mkfifo(p), r"results.csv is a FIFO; the results log is a file"),
])
def test_a_results_log_that_cannot_be_appended_to_is_refused_before_any_work(tmp_path, make, message):
    log = tmp_path / "results.csv"
    make(log)
    with pytest.raises(ValueError, match=message):
        check_results_csv(log)


def test_a_lock_file_that_is_a_directory_is_refused_naming_it(tmp_path):
    (tmp_path / ".results.csv.lock").mkdir()
    with pytest.raises(ValueError, match=r"\.results\.csv\.lock is a directory"):
        check_results_csv(tmp_path / "results.csv")


@pytest.mark.parametrize("module,argv", [
    ("gcc_sgcl.engine.generate", ["--load-path", "x", "--dataset", "usa_airport", "--seed", str(2**64)]),
    ("gcc_sgcl.engine.pretrain", ["--method", "gcc", "--seed", str(2**64)]),
    ("gcc_sgcl.tasks.node_classification", ["--load-path", "x", "--hidden", "64", "--dataset", "usa_airport",
                                            "--seed", str(2**32)]),
])
def test_a_seed_beyond_its_random_streams_is_refused_by_the_flag_in_one_line(module, argv):
    done = subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "argument --seed: must be in [0, " in lines[0] and "Traceback" not in done.stderr


def test_a_data_root_that_is_a_file_is_refused_naming_where_it_came_from(tmp_path, monkeypatch):
    root = tmp_path / "data"
    root.write_text("")
    with pytest.raises(NotADirectoryError, match=r"the data root .*data \(--data-dir\) is a file, not a folder"):
        resolve_data_dir(root)
    monkeypatch.setenv("GCC_SGCL_DATA", str(root))
    with pytest.raises(NotADirectoryError, match=r"\(\$GCC_SGCL_DATA\) is a file"):
        resolve_data_dir()


def test_a_run_name_longer_than_a_folder_name_is_refused_before_training():
    with pytest.raises(ValueError, match=r"--run-name is 300 bytes long; a folder name holds at most 255"):
        make_config("gcc", {"train": {"run_name": "r" * 300}})


def test_dataset_files_starting_with_a_dash_are_passed_as_files_not_flags(tmp_path):
    (tmp_path / "-g.edgelist").write_text("1 2\n")
    script = (f'source {ROOT}/scripts/_help.sh; dash_safe -g.edgelist -missing.edgelist --seed 3; '
              'printf "%s\\n" "${DASH_SAFE[@]}"')
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert out.split() == ["./-g.edgelist", "-missing.edgelist", "--seed", "3"]


def test_a_second_ctrl_c_while_the_first_is_reported_exits_at_once_without_a_traceback():
    code = ("import time, signal, os\n"
            "from gcc_sgcl.cli import user_errors\n"
            "import gcc_sgcl.cli as cli\n"
            "def slow():\n"
            "    print('reporting', flush=True); time.sleep(30)\n"
            "cli.close_progress_bars = slow\n"
            "with user_errors():\n"
            "    print('working', flush=True); time.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    assert proc.stdout.readline().strip() == "working"
    proc.send_signal(signal.SIGINT)
    assert proc.stdout.readline().strip() == "reporting"
    began = time.time()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert time.time() - began < 10 and proc.returncode == 130
    assert "Traceback" not in err and "SIGINT again: stopping now" in err


def test_a_long_evaluation_in_a_log_prints_its_progress_with_an_estimate(capsys):
    from gcc_sgcl.tasks.cv import _LoggedProgress

    assert list(_LoggedProgress(range(4), total=4, desc="imdb-multi folds", every=0.0)) == [0, 1, 2, 3]
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"[gcc_sgcl] imdb-multi folds: {k} of 4, about 0 min left" for k in (1, 2, 3)]
    assert list(_LoggedProgress(range(4), total=4, desc="short", every=60.0)) == [0, 1, 2, 3]
    assert capsys.readouterr().err == ""  # a short evaluation prints nothing
