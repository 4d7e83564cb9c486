"""Issue 83: no file is written through a symbolic link planted where the package writes one (a shared folder, an
unpacked run archive). For every file the package writes into a run or output folder, a link in its place, to a file
outside with known bytes, dangling to a path outside, or to a folder, is refused with one line naming the link and
its target, and the outside is left exactly as it was (the file's bytes, nothing at the dangling path, the folder's
content); the link itself stays."""
import os
import pickle
import shutil
from pathlib import Path

import dgl
import networkx as nx
import numpy as np
import pytest

from gcc_sgcl.cli import user_errors
from gcc_sgcl.data.cache import write_entry
from gcc_sgcl.engine import generate as generate_module
from gcc_sgcl.engine.checkpoint import export_encoder, save_checkpoint
from gcc_sgcl.engine.pretrain import pretrain
from gcc_sgcl.engine.run_lock import LOCK_NAME, run_folder_lock
from gcc_sgcl.engine.stream import ResumeState
from gcc_sgcl.fileio import LinkRefusedError, atomic_target, copy_atomic
from gcc_sgcl.presets import make_config
from gcc_sgcl.tasks.folds import FoldResult, close_cache, held_cache, open_cache, save_fold
from gcc_sgcl.tasks.records import RESULTS_FILE, TaskResult, append_results_csv, check_results_csv

KINDS = ("outside-file", "dangling", "folder")
NOTES = b"a user's notes\n"


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder outside the run: ``notes.txt`` (known bytes) and ``folder/keep.txt``; nothing at ``nowhere.txt``."""
    folder = tmp_path / "outside"
    (folder / "folder").mkdir(parents=True)
    (folder / "notes.txt").write_bytes(NOTES)
    (folder / "folder" / "keep.txt").write_bytes(NOTES)
    return folder


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


def _plant(link: Path, kind: str, outside: Path) -> Path:
    """A symbolic link at ``link`` of ``kind``; returns what it points to."""
    target = {"outside-file": outside / "notes.txt", "dangling": outside / "nowhere.txt",
              "folder": outside / "folder"}[kind]
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return target


class Planted:
    """A link planted at ``link``, and the state of the outside folder before the writer ran."""

    def __init__(self, link: Path, kind: str, outside: Path) -> None:
        self.link, self.outside = link, outside
        self.target = _plant(link, kind, outside)
        self.before = _snapshot(outside)

    def refused(self, error: BaseException | str) -> None:
        """``error`` (or the command's message) is the one-line refusal naming the link, and nothing changed."""
        message = str(error)
        assert message.removeprefix("error: ") == (f"refused: {self.link} is a symbolic link (to {self.target}); the "
                                                   f"package never writes through a link: remove it")
        assert "\n" not in message
        assert _snapshot(self.outside) == self.before  # the file's bytes, nothing at the dangling path, the folder
        assert self.link.is_symlink() and os.readlink(self.link) == str(self.target)


@pytest.fixture
def plant(outside):
    return lambda link, kind: Planted(link, kind, outside)


def _cfg(output_dir: Path, steps: int = 1):
    return make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 2, "degree_embedding_size": 4},
        "train": {"batch_size": 4, "steps": steps, "save_freq": 1, "log_freq": 1, "output_dir": str(output_dir),
                  "run_name": "run"},
    })


def _corpus() -> list[dgl.DGLGraph]:
    return [dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(60, 3, seed=0)))]


@pytest.fixture
def run(tmp_path, tiny_encoder) -> Path:
    """A run folder of this test holding a trained checkpoint."""
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copyfile(tiny_encoder / "checkpoint.pt", folder / "checkpoint.pt")
    return folder


# ---------------------------------------------------------------------------------------------------------
# pre-training's run folder, and an exported encoder


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", [LOCK_NAME, "checkpoint.pt", "config.json"])
def test_pretraining_refuses_a_link_in_its_run_folder(name, kind, plant, tmp_path):
    planted = plant(tmp_path / "runs" / "run" / name, kind)
    for resume in (False, True):
        with pytest.raises(LinkRefusedError) as info:
            pretrain(_cfg(tmp_path / "runs"), resume=resume, progress=False, graphs=_corpus())
        planted.refused(info.value)
    assert sorted(p.name for p in (tmp_path / "runs" / "run").iterdir()) == [name]


def test_pretrain_resume_with_a_planted_lock_is_one_line_and_leaves_the_users_file(plant, tmp_path, capsys):
    from gcc_sgcl.engine.pretrain import main

    cfg = _cfg(tmp_path / "runs")
    planted = plant(tmp_path / "runs" / cfg.run_dir_name() / LOCK_NAME, "outside-file")
    with pytest.raises(SystemExit) as info:
        main(["--method", "gcc", "--steps", "1", "--output-dir", str(tmp_path / "runs"), "--run-name", "run",
              "--resume"])
    planted.refused(info.value.code)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["checkpoint.pt", "config.json"])
def test_exporting_an_encoder_refuses_a_link_at_its_files(name, kind, plant, run, tmp_path):
    planted = plant(tmp_path / "export" / name, kind)
    with pytest.raises(LinkRefusedError) as info:
        export_encoder(run, tmp_path / "export")
    planted.refused(info.value)


# ---------------------------------------------------------------------------------------------------------
# generate's outputs and its resume files


def _edge_list(path: Path, n: int = 30) -> Path:
    path.write_text("".join(f"{i} {i + 1}\n" for i in range(n - 1)) + "0 5\n3 9\n")
    return path


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("suffix", [".npy", ".ids.txt", ".provenance.json", ".partial.npy", ".partial.json"])
def test_generate_refuses_a_link_at_each_output_before_embedding(suffix, kind, plant, run, tmp_path):
    graph = _edge_list(tmp_path / "g.edgelist")
    planted = plant(run / f"g{suffix}", kind)
    with pytest.raises(SystemExit) as info:
        generate_module.main(["--load-path", str(run), "--dataset", str(graph), "--copies", "1"])
    planted.refused(info.value.code)
    assert sorted(p.name for p in run.iterdir()) == sorted(["checkpoint.pt", f"g{suffix}"])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("suffix", [".partial.npy", ".partial.json"])
@pytest.mark.parametrize("own_file", [False, True], ids=["first-save", "later-save"])
def test_generates_periodic_resume_save_refuses_a_link_planted_while_it_runs(suffix, kind, own_file, plant, tmp_path):
    (tmp_path / "run").mkdir()
    state = ResumeState(tmp_path / "run" / "g", {"copies": 2}, interval=0.0)
    rows = state.rows(4, 3)
    rows[:] = 1.0
    if own_file:  # the rows file is this run's, updated in place by the next save
        state.finished((0, 0), slice(0, 2))
        (tmp_path / "run" / f"g{suffix}").unlink()
    planted = plant(tmp_path / "run" / f"g{suffix}", kind)
    with pytest.raises(LinkRefusedError) as info:
        state.finished((0, 2), slice(2, 4))
    planted.refused(info.value)


# ---------------------------------------------------------------------------------------------------------
# the tasks' results.csv and its lock, the fold cache


def _result() -> TaskResult:
    return TaskResult("node_classification", "d", "micro_f1", np.array([0.7]), 0.7, 0.0, "std", 10, "p", 0)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", [RESULTS_FILE, f".{RESULTS_FILE}.lock"])
def test_the_results_log_and_its_lock_refuse_a_link(name, kind, plant, tmp_path):
    planted = plant(tmp_path / "run" / name, kind)
    for write in (lambda: check_results_csv(tmp_path / "run" / RESULTS_FILE),
                  lambda: append_results_csv(tmp_path / "run" / RESULTS_FILE, [_result()], "saved/x")):
        with pytest.raises(LinkRefusedError) as info:
            write()
        planted.refused(info.value)
    assert [p.name for p in (tmp_path / "run").iterdir()] == [name]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", [LOCK_NAME, "meta.json", "features.npy", "0.npz"])
def test_the_fold_cache_refuses_a_link_at_each_of_its_files(name, kind, plant, tmp_path):
    folder = tmp_path / "folds" / "eval"
    planted = plant(folder / name, kind)
    features = np.ones((4, 2), dtype=np.float32)
    with pytest.raises(LinkRefusedError) as info:
        with held_cache(folder):
            open_cache(folder, features, {"model": "svc"})
            save_fold(folder, 0, FoldResult(np.zeros(2), 0.1))
            close_cache(folder)
    planted.refused(info.value)
    if name.endswith(".npz"):  # a link among the files a finished evaluation removes: refused, none removed
        with pytest.raises(LinkRefusedError) as info:
            close_cache(folder)
        planted.refused(info.value)


# ---------------------------------------------------------------------------------------------------------
# the one way to write: atomic_target and the writers built on it


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", ["atomic_target", "copy_atomic", "save_checkpoint", "parse cache entry"])
def test_every_atomic_writer_refuses_a_link_at_its_target(writer, kind, plant, tmp_path):
    target = tmp_path / "out" / "file.bin"
    planted = plant(target, kind)
    source = tmp_path / "source.txt"
    source.write_text("new")
    write = {
        "atomic_target": lambda: atomic_target(target).__enter__(),
        "copy_atomic": lambda: copy_atomic(source, target),
        "save_checkpoint": lambda: save_checkpoint({"step": 1}, target),
        "parse cache entry": lambda: write_entry(target, ([dgl.graph(([0], [1]))], {}), {"version": 1}),
    }[writer]
    with pytest.raises(LinkRefusedError) as info:
        write()
    planted.refused(info.value)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["file.bin"]  # no temporary file left


def test_a_link_planted_while_an_atomic_write_runs_is_refused_at_the_rename(plant, tmp_path):
    target = tmp_path / "out" / "file.txt"
    target.parent.mkdir()
    with pytest.raises(LinkRefusedError) as info:
        with atomic_target(target) as tmp:
            tmp.write_text("new")
            planted = plant(target, "outside-file")
    planted.refused(info.value)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["file.txt"]


def test_releasing_a_lock_leaves_a_link_put_in_its_place(plant, tmp_path):
    folder = tmp_path / "run"
    with run_folder_lock(folder) as lock:
        lock.unlink()
        planted = plant(lock, "outside-file")
    planted.refused(LinkRefusedError(planted.link))  # the link and the user's file are as they were


def test_a_fifo_as_a_lock_file_is_refused_as_not_a_regular_file(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    os.mkfifo(folder / LOCK_NAME)
    with pytest.raises(LinkRefusedError, match=rf"^refused: {folder / LOCK_NAME} is not a regular file"):
        with run_folder_lock(folder):
            pass


def test_a_refusal_is_one_line_in_a_command_and_survives_a_forked_worker(tmp_path):
    link = tmp_path / "results.csv"
    link.symlink_to(tmp_path / "elsewhere")
    error = pickle.loads(pickle.dumps(LinkRefusedError(link)))
    assert isinstance(error, OSError) and str(error) == str(LinkRefusedError(link))
    with pytest.raises(SystemExit) as info, user_errors():
        raise error
    assert info.value.code == f"error: refused: {link} is a symbolic link (to {tmp_path / 'elsewhere'}); the " \
                              f"package never writes through a link: remove it"


@pytest.mark.parametrize("kind", KINDS)
def test_the_gpu_checks_rows_file_refuses_a_link_before_the_checks_run(kind, plant, tmp_path):
    from gcc_sgcl.bench import gpu_check

    planted = plant(tmp_path / "rows.tsv", kind)
    with pytest.raises(SystemExit) as info:
        gpu_check.main(["--rows", str(planted.link)])
    planted.refused(info.value.code)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["rows.jsonl", "rows.jsonl.lock", "rows.jsonl.gz", "results.md"])
def test_the_row_store_and_the_report_refuse_a_link(name, kind, plant, tmp_path):
    from gcc_sgcl.experiments.report import build_report
    from gcc_sgcl.experiments.rows import ResultRow, RowStore

    rows = tmp_path / "results" / ("rows.jsonl.gz" if name == "rows.jsonl.gz" else "rows.jsonl")
    row = ResultRow(method="gcc", mode="e2e", seed=0, dataset="imdb-binary", task="graph_classification",
                    metric="accuracy", mean=0.7, std=0.0, std_kind="", n=1, protocol="p")
    if name == "results.md":
        RowStore(rows).append([row])
    planted = plant(tmp_path / "results" / name, kind)
    with pytest.raises(LinkRefusedError) as refused:
        if name == "results.md":
            build_report(rows, tmp_path / "results" / "results.md")
        else:
            RowStore(rows).append([row])
    planted.refused(refused.value)
