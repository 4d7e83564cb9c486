"""Issue 14: broken inputs are errors (one line naming the file or flag), run folders are locked, saves
leave nothing behind, the parse cache follows the files' bytes, arguments are checked before any data."""
import gzip
import os
import stat
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

import gcc_sgcl.data
from gcc_sgcl.cli import DEBUG_ENV
from gcc_sgcl.presets import PretrainParser, make_config
from gcc_sgcl.data import (
    ALLOW_MODIFIED_ENV,
    CountMismatchError,
    DataFormatError,
    load_graph_dataset,
    load_node_dataset,
    load_pretrain_corpus,
)
from gcc_sgcl.engine import checkpoint as checkpoint_module
from gcc_sgcl.engine import generate as generate_module
from gcc_sgcl.engine import pretrain as pretrain_module
from gcc_sgcl.engine.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from gcc_sgcl.engine.pretrain import pretrain
from gcc_sgcl.engine.checkpoint import UnfinishedRunWarning
from gcc_sgcl.engine.run_lock import LOCK_NAME, RunFolderLockedError, run_folder_lock
from gcc_sgcl.experiments.plot_training import read_scalars
from gcc_sgcl.fileio import atomic_target, remove_stale_temporaries
from gcc_sgcl.tasks import node_classification

ROOT = Path(__file__).resolve().parents[1]
AIRPORT = "node_classification/struc2vec-airports/"
HEPTH = "pretrain/CA-HepTh/CA-HepTh.txt.gz"
GIN = "graph_classification/IMDB-BINARY/IMDBBINARY.txt"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(ALLOW_MODIFIED_ENV, raising=False)
    monkeypatch.delenv(DEBUG_ENV, raising=False)


def _write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


def _corpus() -> list[dgl.DGLGraph]:
    return [dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(120, 3, seed=0)))]


def _cfg(tmp_path, run_name="run", steps=2, **train):
    return make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 2, "degree_embedding_size": 4},
        "train": {"batch_size": 4, "steps": steps, "save_freq": 1, "log_freq": 1, "output_dir": str(tmp_path),
                  "run_name": run_name, **train},
    })


@pytest.fixture
def no_data_loading(monkeypatch):
    """Any pre-training corpus load fails the test: the error must come first."""
    def load(*args, **kwargs):
        raise AssertionError("data was loaded before the error")

    monkeypatch.setattr(gcc_sgcl.data, "load_pretrain_corpus", load)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """A run folder with a 1-step checkpoint (for generate)."""
    return pretrain(_cfg(tmp_path_factory.mktemp("runs"), steps=1), progress=False, graphs=_corpus())


# ---------------------------------------------------------------------------------------------------------
# 1. loading checks


def test_registered_dataset_with_other_counts_is_an_error_naming_its_files_and_both_counts(tmp_path):
    edges = _write(tmp_path, AIRPORT + "usa-airports.edgelist", "1 2\n2 3\n")
    labels = _write(tmp_path, AIRPORT + "labels-usa-airports.txt", "node label\n1 0\n2 1\n3 0\n")
    with pytest.raises(CountMismatchError) as info:
        load_node_dataset("usa_airport", tmp_path)
    message = str(info.value)
    assert str(edges) in message and str(labels) in message
    assert "num_nodes: expected 1190, got 3" in message and "num_edges: expected 13599, got 2" in message
    assert ALLOW_MODIFIED_ENV in message and "download.sh usa_airport" in message


def test_a_deliberately_modified_copy_loads_when_explicitly_allowed(tmp_path, monkeypatch):
    _write(tmp_path, AIRPORT + "usa-airports.edgelist", "1 2\n2 3\n")
    _write(tmp_path, AIRPORT + "labels-usa-airports.txt", "node label\n1 0\n2 1\n3 0\n")
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    assert load_node_dataset("usa_airport", tmp_path).graph.num_nodes() == 3


def test_truncated_real_edge_list_fails_the_registry_counts(tmp_path, shared_data):
    for name in ("usa-airports.edgelist", "labels-usa-airports.txt"):
        _write(tmp_path, AIRPORT + name, (shared_data / AIRPORT / name).read_bytes())
    path = tmp_path / AIRPORT / "usa-airports.edgelist"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]))
    with pytest.raises(CountMismatchError, match=r"num_edges: expected 13599, got \d+"):
        load_node_dataset("usa_airport", tmp_path)


@pytest.mark.parametrize("allow_modified", ["", "1"])
def test_an_empty_edge_list_is_an_error_even_for_a_modified_copy(tmp_path, monkeypatch, allow_modified):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, allow_modified)
    edges = _write(tmp_path, AIRPORT + "usa-airports.edgelist", "")
    _write(tmp_path, AIRPORT + "labels-usa-airports.txt", "node label\n1 0\n2 1\n3 0\n")
    with pytest.raises(DataFormatError, match=f"{edges}.*no edges: all 3 nodes are isolated"):
        load_node_dataset("usa_airport", tmp_path)


def test_empty_edge_and_label_files_are_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    edges = _write(tmp_path, AIRPORT + "usa-airports.edgelist", "")
    _write(tmp_path, AIRPORT + "labels-usa-airports.txt", "")
    with pytest.raises(DataFormatError, match=f"{edges}.*no edges"):
        load_node_dataset("usa_airport", tmp_path)


def test_a_pretraining_graph_of_self_loops_only_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    path = _write(tmp_path, HEPTH, gzip.compress(b"# comment\n1\t1\n2\t2\n"))
    with pytest.raises(DataFormatError, match=f"{path}: graph 1 of dataset 'ca-hepth' has no edges"):
        load_pretrain_corpus(["ca-hepth"], tmp_path)


def test_a_graph_collection_without_any_edge_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    _write(tmp_path, GIN, "2\n1 0\n0 0\n1 1\n0 0\n")
    with pytest.raises(DataFormatError, match="no edges in any of its 2 graphs"):
        load_graph_dataset("imdb-binary", tmp_path)


# ---------------------------------------------------------------------------------------------------------
# 2. damaged files: errors that name the file


def test_a_truncated_gzip_edge_list_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    data = gzip.compress(b"".join(b"%d\t%d\n" % (i, i + 1) for i in range(5000)))
    path = _write(tmp_path, HEPTH, data[: len(data) // 2])
    with pytest.raises(DataFormatError, match=f"{path}: the compressed file is truncated"):
        load_pretrain_corpus(["ca-hepth"], tmp_path)


def test_a_gz_file_that_is_not_gzip_names_the_file(tmp_path):
    path = _write(tmp_path, HEPTH, b"1\t2\n2\t3\n")
    with pytest.raises(DataFormatError, match=f"{path}: not a valid gzip file"):
        load_pretrain_corpus(["ca-hepth"], tmp_path)


def test_binary_bytes_in_a_text_file_name_the_file_and_the_byte(tmp_path):
    path = _write(tmp_path, AIRPORT + "usa-airports.edgelist", b"1 2\n\xff\xfe\x00garbage\n")
    _write(tmp_path, AIRPORT + "labels-usa-airports.txt", "node label\n1 0\n2 1\n")
    with pytest.raises(DataFormatError, match=f"{path}: not UTF-8 text \\(byte 0xff"):
        load_node_dataset("usa_airport", tmp_path)


def test_a_zip_that_is_not_a_zip_names_the_file(tmp_path):
    path = _write(tmp_path, "graph_classification/COLLAB/COLLAB.zip", b"PK but not really a zip")
    with pytest.raises(DataFormatError, match=f"{path}: not a valid zip archive"):
        load_graph_dataset("collab", tmp_path)


def test_a_damaged_zip_member_names_the_archive_and_member(tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    archive = tmp_path / "graph_classification/COLLAB/COLLAB.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("COLLAB/COLLAB.txt", "2\n2 0\n0 1 1\n0 1 0\n2 1\n0 1 1\n0 1 0\n" * 400)
    raw = bytearray(archive.read_bytes())
    raw[60:90] = bytes(30)  # damage the compressed member data
    archive.write_bytes(bytes(raw))
    with pytest.raises(DataFormatError, match=f"{archive}:COLLAB/COLLAB.txt: "):
        load_graph_dataset("collab", tmp_path)


def test_an_empty_checkpoint_is_an_error_naming_it(tmp_path):
    (tmp_path / "checkpoint.pt").write_bytes(b"")
    with pytest.raises(CheckpointError, match=f"{tmp_path / 'checkpoint.pt'}: empty checkpoint file"):
        load_checkpoint(tmp_path)


def test_a_truncated_checkpoint_is_an_error_naming_it(tmp_path, tiny_run):
    data = (tiny_run / "checkpoint.pt").read_bytes()
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=f"{path}: not a readable checkpoint, truncated or damaged"):
        load_checkpoint(path)


def test_an_encoder_of_an_unfinished_run_loads_with_a_warning_naming_its_step(tmp_path, tiny_run):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint_module.load_encoder_checkpoint(tiny_run)  # finished: no warning
    state = load_checkpoint(tiny_run)
    state["config"]["train"]["steps"] = 5
    save_checkpoint(state, tmp_path / "checkpoint.pt")
    with pytest.warns(UnfinishedRunWarning, match=f"{tmp_path}: the encoder is at step 1 of 5"):
        checkpoint_module.load_encoder_checkpoint(tmp_path)


def test_a_file_that_is_not_a_project_checkpoint_is_an_error_naming_it(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save({"weight": torch.zeros(2)}, path)
    with pytest.raises(CheckpointError, match=f"{path}: not a gcc_sgcl checkpoint"):
        load_checkpoint(path)


# ---------------------------------------------------------------------------------------------------------
# 2. the command-line boundary: one line, exit code != 0, traceback only on request


def test_generate_cli_reports_an_empty_edge_list_in_one_line_and_writes_nothing(tmp_path, tiny_run):
    edges = _write(tmp_path, AIRPORT + "usa-airports.edgelist", "")
    _write(tmp_path, AIRPORT + "labels-usa-airports.txt", "node label\n1 0\n2 1\n3 0\n")
    with pytest.raises(SystemExit) as info:
        generate_module.main(["--load-path", str(tiny_run), "--dataset", "usa_airport", "--data-dir", str(tmp_path)])
    message = str(info.value.code)
    assert message.startswith(f"error: {edges}") and "no edges" in message and "\n" not in message
    assert not (tiny_run / "usa_airport.npy").exists()


def test_an_empty_checkpoint_ends_the_command_with_one_line_and_exit_code_1(tmp_path):
    (tmp_path / "checkpoint.pt").write_bytes(b"")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(DEBUG_ENV, None)
    command = [sys.executable, "-m", "gcc_sgcl.engine.generate", "--load-path", str(tmp_path), "--dataset",
               "synthetic-roles"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"error: {tmp_path / 'checkpoint.pt'}: empty checkpoint file "
                                                f"(an interrupted copy?)"]


def test_debug_variable_shows_the_original_error(tmp_path, monkeypatch):
    (tmp_path / "checkpoint.pt").write_bytes(b"")
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(CheckpointError):
        generate_module.main(["--load-path", str(tmp_path), "--dataset", "synthetic-roles"])


def test_a_multi_line_message_is_reported_on_one_line(tmp_path):
    pretrain(_cfg(tmp_path, steps=1), progress=False, graphs=_corpus())
    argv = ["--output-dir", str(tmp_path), "--run-name", "run", "--rw-hops", "16", "--positional-embedding-size",
            "8", "--hidden-size", "16", "--num-layers", "2", "--degree-embedding-size", "4", "--batch-size", "4",
            "--steps", "1", "--save-freq", "1", "--log-freq", "1", "--lr", "0.1", "--resume"]
    with pytest.raises(SystemExit) as info:
        pretrain_module.main(argv)
    message = str(info.value.code)
    assert "\n" not in message and "differs from" in message and "train.lr: checkpoint 0.005 vs now 0.1" in message


def test_negative_worker_count_is_refused_by_pretrain_before_anything_runs(tmp_path, no_data_loading, capsys):
    with pytest.raises(SystemExit):
        pretrain_module.main(["--output-dir", str(tmp_path), "--num-workers", "-1", "--steps", "1"])
    assert "argument --num-workers: must be >= 0, got -1" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_negative_worker_count_is_refused_by_generate_before_the_checkpoint_is_read(tmp_path, capsys):
    with pytest.raises(SystemExit):
        generate_module.main(["--load-path", str(tmp_path / "absent"), "--dataset", "synthetic-roles",
                              "--num-workers", "-1"])
    assert "argument --num-workers: must be >= 0, got -1" in capsys.readouterr().err


def test_a_bad_gpu_argument_of_the_scripts_is_a_one_line_error(capsys):
    from gcc_sgcl.engine.device import main as device_main

    with pytest.raises(SystemExit) as exit_info:
        device_main(["gpu0"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "error: <gpu> must be a GPU index, -1 or 'cpu', got 'gpu0'\n"


def _node_loader(labels):
    def load(name, data_dir=None):
        g = dgl.graph((torch.tensor([0]), torch.tensor([1])), num_nodes=len(labels))
        return type("Data", (), {"name": name, "graph": g, "labels": np.asarray(labels)})

    return load


@pytest.mark.parametrize("labels", [[0] * 20 + [1] * 20 + [2] * 2, [0, 1, 0, 1]])
def test_fewer_examples_of_a_class_than_folds_is_a_one_line_error_naming_the_flag(tmp_path, labels):
    np.save(tmp_path / "toy.npy", np.random.default_rng(0).normal(size=(len(labels), 4)).astype(np.float32))
    argv = ["--load-path", str(tmp_path), "--hidden", "4", "--dataset", "toy", "--folds", "5", "--repeats", "1"]
    with pytest.raises(SystemExit, match=r"--folds 5: class \d has only 2 examples.*lower --folds"):
        node_classification.main(argv, loader=_node_loader(labels))


# ---------------------------------------------------------------------------------------------------------
# 4. run-folder lock


def test_a_second_run_into_a_locked_folder_stops_naming_the_folder_and_the_holders_pid(tmp_path, no_data_loading):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from gcc_sgcl.engine.run_lock import run_folder_lock\n"
         f"with run_folder_lock({str(tmp_path / 'run')!r}):\n print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunFolderLockedError, match=f"{tmp_path / 'run'} is in use by another run "
                                                       f"\\(PID {holder.pid}"):
            pretrain(_cfg(tmp_path), progress=False)
    finally:
        holder.communicate("")
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


def test_a_lock_left_by_a_dead_process_is_taken_over_and_removed_after_the_run(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock = _write(tmp_path, "run/" + LOCK_NAME, dead.stdout)
    with run_folder_lock(tmp_path / "run"):
        assert lock.read_text().strip() == str(os.getpid())
    run_dir = pretrain(_cfg(tmp_path), progress=False, graphs=_corpus())
    assert not (run_dir / LOCK_NAME).exists()


def test_the_lock_is_held_while_the_run_trains(tmp_path, monkeypatch):
    seen = []
    original = pretrain_module.Trainer.step

    def step(self, q, k):
        with pytest.raises(RunFolderLockedError, match=f"PID {os.getpid()}"):
            with run_folder_lock(tmp_path / "run"):
                pass
        seen.append(self.step_count)
        return original(self, q, k)

    monkeypatch.setattr(pretrain_module.Trainer, "step", step)
    pretrain(_cfg(tmp_path), progress=False, graphs=_corpus())
    assert seen == [0, 1]


# ---------------------------------------------------------------------------------------------------------
# 5. saves leave nothing behind


def test_a_run_removes_the_temporary_files_of_killed_saves(tmp_path):
    stale = [_write(tmp_path, "run/.checkpoint.pt.0123abcd.tmp", b""), _write(tmp_path, "run/checkpoint.ptx1y2.tmp", b"")]
    keep = _write(tmp_path, "run/notes.txt", "mine")
    pretrain(_cfg(tmp_path), progress=False, graphs=_corpus())
    assert not any(p.exists() for p in stale) and keep.exists()
    assert [p.name for p in (tmp_path / "run").iterdir() if p.name.endswith(".tmp")] == []


def test_generate_removes_the_temporary_file_of_a_killed_write_and_leaves_none(tmp_path, tiny_run, monkeypatch):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    _write(tmp_path, AIRPORT + "usa-airports.edgelist", "1 2\n2 3\n3 1\n")
    _write(tmp_path, AIRPORT + "labels-usa-airports.txt", "node label\n1 0\n2 1\n3 0\n")
    stale = _write(tiny_run, ".usa_airport.npy.0123abcd.tmp", b"")
    generate_module.generate(tiny_run, ["usa_airport"], data_dir=str(tmp_path), progress=False)
    assert np.load(tiny_run / "usa_airport.npy").shape == (3, 16) and not stale.exists()
    assert [p.name for p in tiny_run.iterdir() if p.name.endswith(".tmp")] == []


def test_a_write_in_progress_of_another_running_process_is_not_taken_for_a_stale_temporary(tmp_path):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    target = tmp_path / "net.npy"
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as writer:
        live = _write(tmp_path, f".net.npy.{writer.pid}-{'a' * 32}.tmp", b"partial")
        other = _write(tmp_path, f".social_net.npy.{ended.pid}-{'c' * 32}.tmp", b"")  # another file's
        stale = [_write(tmp_path, f".net.npy.{pid}-{'b' * 32}.tmp", b"") for pid in (ended.pid, os.getpid())]
        stale += [_write(tmp_path, ".net.npy.0123abcd.tmp", b""), _write(tmp_path, "net.npyx1y2.tmp", b"")]
        assert remove_stale_temporaries(target) == sorted(stale)
        assert live.exists() and other.exists()
        writer.kill()
        writer.wait()
    assert remove_stale_temporaries(target) == [live] and other.exists()


def test_checkpoints_are_created_with_the_umask_mode(tmp_path):
    previous = os.umask(0o022)
    try:
        save_checkpoint({"config": {}, "model": {}}, tmp_path / "checkpoint.pt")
    finally:
        os.umask(previous)
    assert (tmp_path / "checkpoint.pt").stat().st_mode & 0o777 == 0o644


def test_an_interrupted_atomic_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = _write(tmp_path, "a.json", "old")
    with pytest.raises(KeyboardInterrupt), atomic_target(target) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_an_atomic_write_syncs_the_file_then_its_folder_after_the_rename(tmp_path, monkeypatch):
    synced, real_fsync = [], os.fsync

    def fsync(fd):
        synced.append((stat.S_ISDIR(os.fstat(fd).st_mode), (tmp_path / "a.json").exists()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with atomic_target(tmp_path / "a.json") as tmp:
        tmp.write_text("new")
    assert synced == [(False, False), (True, True)]


def test_tensorboard_events_are_flushed_at_every_checkpoint(tmp_path, monkeypatch):
    calls = []
    original_save, original_step = pretrain_module.save_checkpoint, pretrain_module.Trainer.step

    class Writer(pretrain_module.SummaryWriter):
        def flush(self):
            calls.append("flush")
            super().flush()

    def save(state, path):
        calls.append(f"save {state['step']}")
        original_save(state, path)

    def step(self, q, k):
        calls.append("step")
        return original_step(self, q, k)

    monkeypatch.setattr(pretrain_module, "SummaryWriter", Writer)
    monkeypatch.setattr(pretrain_module, "save_checkpoint", save)
    monkeypatch.setattr(pretrain_module.Trainer, "step", step)
    run_dir = pretrain(_cfg(tmp_path, steps=3), progress=False, graphs=_corpus())
    assert calls[:9] == ["step", "save 1", "flush", "step", "save 2", "flush", "step", "save 3", "flush"]
    assert read_scalars(run_dir)["train/loss"][0] == [1, 2, 3]


# ---------------------------------------------------------------------------------------------------------
# 6. parse cache keyed by content


def test_an_edit_that_keeps_size_and_mtime_is_not_served_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    path = _write(tmp_path, GIN, "1\n3 0\n0 1 1\n0 1 0\n0 0\n")
    assert load_graph_dataset("imdb-binary", tmp_path).graphs[0].num_edges() == 2
    stat = path.stat()
    path.write_text("1\n3 0\n0 1 2\n0 0\n0 1 0\n")  # same size, edge 0-1 replaced by 0-2
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    src, dst = load_graph_dataset("imdb-binary", tmp_path).graphs[0].edges()
    assert sorted(zip(src.tolist(), dst.tolist())) == [(0, 2), (2, 0)]


# ---------------------------------------------------------------------------------------------------------
# 7. arguments checked before any data is loaded; --help shows each default once


def test_an_unknown_corpus_name_is_refused_before_any_data_is_loaded(tmp_path, no_data_loading):
    with pytest.raises(ValueError, match="--corpus: unknown dataset 'nope'; valid names: .*ca-hepth"):
        pretrain(_cfg(tmp_path, corpus=["synthetic", "nope"]), progress=False)


def test_a_downstream_dataset_as_corpus_is_refused_before_any_data_is_loaded(tmp_path, no_data_loading):
    with pytest.raises(ValueError, match="--corpus: 'usa_airport' is a node dataset, expected a pretrain dataset"):
        pretrain(_cfg(tmp_path, corpus=["usa_airport"]), progress=False)


def test_an_output_folder_that_cannot_be_created_is_refused_before_any_data_is_loaded(tmp_path, no_data_loading):
    blocker = _write(tmp_path, "file", "not a folder")
    with pytest.raises(ValueError, match=f"--output-dir {blocker / 'run'}: cannot create the folder"):
        pretrain(_cfg(blocker), progress=False)


def test_generate_refuses_an_unknown_dataset_before_embedding_any(tmp_path, tiny_run, monkeypatch):
    for building in ("view_sources", "cached_views"):  # the streamed and the cached views
        monkeypatch.setattr(generate_module, building, lambda *a, **k: pytest.fail("a dataset was embedded"))
    with pytest.raises(SystemExit, match="--dataset: unknown dataset 'nope'"):
        generate_module.main(["--load-path", str(tiny_run), "--dataset", "synthetic-roles", "nope"])


def test_help_shows_each_default_once():
    text = PretrainParser().format_help()
    assert "(default: None)" not in text
    for line in text.split("\n  --"):
        assert line.count("(default:") <= 1, line
    flat = " ".join(text.split())  # argparse wraps long help lines anywhere
    assert "(default: 256)" in flat and "(default: gcc)" in flat
