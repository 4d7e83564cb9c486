"""Issue 53, outputs and inputs: generate refuses NaN embeddings; labels files that cannot mean a classification are
refused; each embeddings file records where it came from and the task commands check it (and log the encoder's
step); caches are one atomic file per entry, checked on read, and never cross two sources; a full disk or a
read-only cache is one line naming the file, with nothing half-written; checkpoints that load but do not fit name
the file and the first mismatch."""
import csv
import errno
import io
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

import gcc_sgcl
from gcc_sgcl.cli import DEBUG_ENV
from gcc_sgcl.data import ALLOW_MODIFIED_ENV, DataFormatError, load_graph_dataset, load_node_dataset
from gcc_sgcl.engine import checkpoint as checkpoint_module
from gcc_sgcl.engine import generate as generate_module
from gcc_sgcl.engine import views as views_module
from gcc_sgcl.engine import pretrain as pretrain_module
from gcc_sgcl.engine.checkpoint import (
    CheckpointError,
    check_resumable,
    export_encoder,
    load_checkpoint,
    save_checkpoint,
)
from gcc_sgcl.engine.generate import GenerateConfig
from gcc_sgcl.engine.pretrain import pretrain
from gcc_sgcl.engine.checkpoint import UnfinishedRunWarning
from gcc_sgcl.fileio import WriteError, sha256_of
from gcc_sgcl.presets import make_config
from gcc_sgcl.tasks import graph_classification, node_classification, similarity_search
from gcc_sgcl.tasks.records import CSV_COLUMNS, EARLIER_CSV_HEADERS, RESULTS_FILE, TaskResult, append_results_csv

ROOT = Path(__file__).resolve().parents[1]
GIN = "graph_classification/IMDB-BINARY/IMDBBINARY.txt"
HIDDEN = 16
TINY = ["--rw-hops", "16", "--positional-embedding-size", "8", "--hidden-size", str(HIDDEN), "--num-layers", "2",
        "--degree-embedding-size", "4", "--batch-size", "4", "--steps", "1", "--save-freq", "1", "--log-freq", "1"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(ALLOW_MODIFIED_ENV, raising=False)
    monkeypatch.delenv(DEBUG_ENV, raising=False)


def _cfg(folder: Path, steps: int = 1):
    return make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": HIDDEN, "num_layers": 2, "degree_embedding_size": 4},
        "train": {"batch_size": 4, "steps": steps, "save_freq": 1, "log_freq": 1, "output_dir": str(folder),
                  "run_name": "run"},
    })


def _corpus() -> list[dgl.DGLGraph]:
    return [dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(120, 3, seed=0)))]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """The checkpoint of a finished 1-step run (copied into each test's run folder by :func:`run`)."""
    return pretrain(_cfg(tmp_path_factory.mktemp("runs")), progress=False, graphs=_corpus()) / "checkpoint.pt"


@pytest.fixture
def run(tmp_path, trained) -> Path:
    """A run folder of this test holding the finished 1-step checkpoint."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "checkpoint.pt").write_bytes(trained.read_bytes())
    return folder


def _edge_list(path: Path, n: int, seed: int = 0, extra: int = 60) -> Path:
    """A connected graph on nodes ``0..n-1`` (a path, so that the ids appear in order, plus random chords)."""
    rng = np.random.default_rng(seed)
    chords = {tuple(sorted(e)) for e in rng.integers(0, n, size=(extra, 2)).tolist() if e[0] != e[1]}
    path.write_text("".join(f"{i} {i + 1}\n" for i in range(n - 1)) + "".join(f"{u} {v}\n" for u, v in chords))
    return path


def _labels(path: Path, values) -> Path:
    path.write_text("".join(f"{i} {v}\n" for i, v in enumerate(values)))
    return path


def _error_line(call) -> str:
    """The one-line message a command ends with (it must not be a traceback)."""
    with pytest.raises(SystemExit) as info:
        call()
    message = str(info.value.code)
    assert message.startswith("error: ") and "\n" not in message, message
    return message


def _generate(run: Path, *datasets: str, **settings) -> list[Path]:
    return generate_module.generate(run, list(datasets), GenerateConfig(**settings), progress=False)


def _node_task(run: Path, dataset: str, *flags: str) -> list[TaskResult]:
    return node_classification.main(["--load-path", str(run), "--hidden", str(HIDDEN), "--dataset", dataset,
                                     "--folds", "2", "--repeats", "1", *flags])


def test_gccs_checkpoint_names_inside_a_run_folder_read_that_runs_checkpoint_and_say_so(run, tmp_path, capsys):
    graph = _edge_list(tmp_path / "g.edgelist", 30)
    generate_module.main(["--load-path", str(run / "current.pth"), "--dataset", str(graph), "--copies", "1"])
    assert (run / "g.npy").is_file()  # beside the checkpoint, as with the folder itself
    assert "current.pth is GCC's name for a run's checkpoint" in capsys.readouterr().err
    assert checkpoint_module.read_checkpoint(run / "ckpt_epoch_100.pth").path == run / "checkpoint.pt"


def test_a_missing_checkpoint_says_what_the_folder_holds(run, tmp_path):
    message = _error_line(lambda: generate_module.main(["--load-path", str(run / "model.pt"), "--dataset", "synthetic-roles"]))
    assert "that folder holds checkpoint.pt: pass the folder" in message
    message = _error_line(lambda: generate_module.main(["--load-path", str(tmp_path), "--dataset", "synthetic-roles"]))
    assert "that folder holds run folders (run/): pass one of them" in message


# ---------------------------------------------------------------------------------------------------------
# 2. generate refuses non-finite embeddings


def test_generate_refuses_an_encoder_with_nan_weights_naming_checkpoint_and_dataset_and_writes_nothing(run, tmp_path):
    state = load_checkpoint(run)
    state["model"]["degree_embedding.weight"][3, 1] = float("nan")
    save_checkpoint(state, run / "checkpoint.pt")
    graph = _edge_list(tmp_path / "g.edgelist", 30)
    message = _error_line(lambda: generate_module.main(["--load-path", str(run), "--dataset", str(graph)]))
    assert str(run / "checkpoint.pt") in message and str(graph) in message and "non-finite" in message
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pt"]


def test_generate_refuses_embeddings_holding_nan_from_finite_weights(run, tmp_path, monkeypatch):
    real = generate_module.embed_parts

    def overflowing(*args, **kwargs):
        emb = real(*args, **kwargs)
        emb[0, 0] = np.inf
        return emb

    monkeypatch.setattr(generate_module, "embed_parts", overflowing)
    graph = _edge_list(tmp_path / "g.edgelist", 30)
    message = _error_line(lambda: generate_module.main(["--load-path", str(run), "--dataset", str(graph)]))
    assert f"{run / 'checkpoint.pt'}: the encoder gives 1 non-finite values" in message and str(graph) in message
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pt"]


# ---------------------------------------------------------------------------------------------------------
# 3. labels files that cannot mean a classification


def test_a_labels_file_of_one_class_is_refused_by_the_task_naming_it(run, tmp_path):
    graph = _edge_list(tmp_path / "g.edgelist", 40)
    labels = _labels(tmp_path / "labels.txt", [7] * 40)
    _generate(run, str(graph))
    message = _error_line(lambda: _node_task(run, str(graph), "--labels", str(labels)))
    assert message == f"error: {labels}: all 40 labelled items are of one class; classification needs at least two"
    assert not (run / RESULTS_FILE).exists()


def test_a_graph_labels_file_of_one_class_is_refused_by_the_task_naming_it(run, tmp_path):
    collection = tmp_path / "graphs.txt"
    collection.write_text(_gin_cycles([5 + i % 3 for i in range(8)]))
    labels = _labels(tmp_path / "graph_labels.txt", [1] * 8)
    _generate(run, str(collection))
    message = _error_line(lambda: graph_classification.main(["--load-path", str(run), "--hidden", str(HIDDEN),
                                                             "--dataset", str(collection), "--labels", str(labels)]))
    assert message == f"error: {labels}: all 8 labelled items are of one class; classification needs at least two"


@pytest.mark.parametrize("odd", ["abc", "0.0"])
def test_a_label_that_is_not_an_integer_among_integers_is_refused_at_its_line(tmp_path, odd):
    graph = _edge_list(tmp_path / "g.edgelist", 40)
    labels = _labels(tmp_path / "labels.txt", [i % 3 for i in range(40)])
    lines = labels.read_text().splitlines(keepends=True)
    lines[16] = f"16 {odd}\n"
    labels.write_text("node label\n" + "".join(lines))  # a header first: line 18 holds node 16
    with pytest.raises(DataFormatError, match=f"{labels} line 18: label '{odd}' is not an integer"):
        load_node_dataset(str(graph), labels=str(labels))


def test_an_integer_among_names_is_refused_at_its_line(tmp_path):
    graph = _edge_list(tmp_path / "g.edgelist", 40)
    labels = _labels(tmp_path / "labels.txt", [("cat", "dog")[i % 2] if i != 5 else 3 for i in range(40)])
    with pytest.raises(DataFormatError, match=f"{labels} line 6: label '3' is an integer among names"):
        load_node_dataset(str(graph), labels=str(labels))


def test_labels_that_are_all_names_are_classes(tmp_path):
    graph = _edge_list(tmp_path / "g.edgelist", 40)
    names = _labels(tmp_path / "names.txt", [("cat", "dog", "0.5")[i % 3] for i in range(40)])
    assert sorted(set(load_node_dataset(str(graph), labels=str(names)).labels.tolist())) == [0, 1, 2]


def test_a_task_refuses_a_loader_of_one_class(run):
    np.save(run / "x.npy", np.random.default_rng(0).normal(size=(20, HIDDEN)).astype(np.float32))

    def load(name, data_dir=None):
        return type("Data", (), {"name": name, "graph": dgl.graph(([0], [1]), num_nodes=20),
                                 "labels": np.zeros(20, dtype=np.int64)})

    message = _error_line(lambda: node_classification.main(["--load-path", str(run), "--hidden", str(HIDDEN),
                                                            "--dataset", "x"], loader=load))
    assert "error: x: all 20 labelled items are of one class" in message


# ---------------------------------------------------------------------------------------------------------
# 4. embeddings say where they came from; the tasks check it and log the step


def test_each_embeddings_file_has_a_record_of_its_encoder_dataset_and_views(run, tmp_path):
    graph = _edge_list(tmp_path / "g.edgelist", 30)
    written = _generate(run, str(graph), "synthetic-roles", seed=3, copies=1)
    assert [p.name for p in written] == ["g.npy", "g.ids.txt", "g.provenance.json", "synthetic-roles.npy",
                                         "synthetic-roles.provenance.json"]
    record = json.loads((run / "g.provenance.json").read_text())
    assert record["encoder"] == {"checkpoint": str((run / "checkpoint.pt").resolve()), "method": "gcc",
                                 "sha256": sha256_of(run / "checkpoint.pt"), "step": 1, "steps": 1, "finished": True}
    assert record["dataset"]["source"] == "path" and record["dataset"]["path"] == str(graph.resolve())
    assert record["dataset"]["sha256"] == sha256_of(graph) and len(record["dataset"]["graphs_sha256"]) == 64
    assert record["views"] == {"copies": 1, "seed": 3, "visit_budget": "pretrain"}
    assert record["embeddings"]["sha256"] == sha256_of(run / "g.npy") and record["embeddings"]["shape"] == [30, 16]
    assert record["ids"]["sha256"] == sha256_of(run / "g.ids.txt")
    registered = json.loads((run / "synthetic-roles.provenance.json").read_text())["dataset"]
    assert registered["source"] == "registered" and registered["name"] == "synthetic-roles"
    assert [p.name for p in run.iterdir() if p.name.endswith(".tmp")] == []


def test_a_file_embedded_by_path_never_shadows_the_registered_dataset_of_its_name(run, tmp_path):
    rows = load_node_dataset("synthetic-roles").graph.num_nodes()
    impostor = _edge_list(tmp_path / "synthetic-roles.edgelist", rows)  # a random graph with the same node count
    _generate(run, str(impostor))
    message = _error_line(lambda: _node_task(run, "synthetic-roles"))
    assert f"{run / 'synthetic-roles.npy'} was generated from the file {impostor.resolve()}" in message
    assert "not from the registered dataset 'synthetic-roles'" in message
    assert not (run / RESULTS_FILE).exists()


def test_the_registered_dataset_embeddings_are_not_evaluated_as_a_file_of_that_name(run, tmp_path):
    n = load_node_dataset("synthetic-roles").graph.num_nodes()
    _generate(run, "synthetic-roles")
    same_name = _edge_list(tmp_path / "synthetic-roles.edgelist", n)
    labels = _labels(tmp_path / "labels.txt", [i % 2 for i in range(n)])
    message = _error_line(lambda: _node_task(run, str(same_name), "--labels", str(labels)))
    assert "holds the registered dataset 'synthetic-roles', not the file" in message


def test_embeddings_of_a_file_edited_since_are_refused(run, tmp_path):
    graph = _edge_list(tmp_path / "g.edgelist", 40)
    labels = _labels(tmp_path / "labels.txt", [i % 2 for i in range(40)])
    _generate(run, str(graph))
    graph.write_text(graph.read_text() + "0 39\n")  # the same nodes in the same order, one more edge
    message = _error_line(lambda: _node_task(run, str(graph), "--labels", str(labels)))
    assert f"{run / 'g.npy'} was generated from other graphs than those of {graph}" in message


def test_an_embeddings_file_replaced_after_its_record_was_written_is_refused(run, tmp_path):
    graph = _edge_list(tmp_path / "g.edgelist", 40)
    labels = _labels(tmp_path / "labels.txt", [i % 2 for i in range(40)])
    _generate(run, str(graph))
    np.save(run / "g.npy", np.zeros((40, HIDDEN), dtype=np.float32) + 1)
    message = _error_line(lambda: _node_task(run, str(graph), "--labels", str(labels)))
    assert f"{run / 'g.npy'} is not the file its record g.provenance.json describes" in message


def test_a_damaged_record_is_one_line_naming_it(run, tmp_path):
    graph = _edge_list(tmp_path / "g.edgelist", 40)
    labels = _labels(tmp_path / "labels.txt", [i % 2 for i in range(40)])
    _generate(run, str(graph))
    (run / "g.provenance.json").write_text('{"format": 1, "encoder": {\x01')
    message = _error_line(lambda: _node_task(run, str(graph), "--labels", str(labels)))
    assert f"{run / 'g.provenance.json'}: not a readable embeddings record" in message


def test_embeddings_of_an_unfinished_run_are_scored_with_a_warning_and_the_step_is_logged(run, tmp_path):
    state = load_checkpoint(run)
    state["config"]["train"]["steps"] = 5
    save_checkpoint(state, run / "checkpoint.pt")
    graph = _edge_list(tmp_path / "g.edgelist", 40)
    labels = _labels(tmp_path / "labels.txt", [i % 2 for i in range(40)])
    with pytest.warns(UnfinishedRunWarning):
        _generate(run, str(graph))
    with pytest.warns(UnfinishedRunWarning, match=r"g.npy: embeddings of an unfinished run \(its "
                                                                  r"encoder at step 1 of 5\)"):
        (result,) = _node_task(run, str(graph), "--labels", str(labels))
    assert result.encoder_step == 1
    with open(run / RESULTS_FILE, newline="") as f:
        (row,) = csv.DictReader(f)
    assert row["encoder_step"] == "1" and row["dataset"] == "g"


def test_graph_classification_and_similarity_search_log_the_encoder_step_views_and_joined_vector(run, tmp_path,
                                                                                                  capsys):
    collection = tmp_path / "graphs.txt"
    collection.write_text(_gin_cycles([5 + i % 3 for i in range(12)]))
    rng = np.random.default_rng(0)
    one, two = _edge_list(tmp_path / "a.edgelist", 40, seed=1), _edge_list(tmp_path / "b.edgelist", 40, seed=2)
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{i} {i}\n" for i in rng.permutation(40)[:20]))
    _generate(run, str(collection), with_structural=True)  # whole graphs: GCC's 2 views by default
    _generate(run, str(one), str(two), copies=3)
    (result,) = graph_classification.main(["--load-path", str(run), "--hidden", str(HIDDEN), "--dataset",
                                           str(collection), "--folds", "2", "--repeats", "1"])
    found = similarity_search.main(["--load-path", str(run), "--hidden", str(HIDDEN), "--dataset", str(one),
                                    str(two), "--pairs", str(pairs)])
    assert result.encoder_step == 1 and [r.encoder_step for r in found] == [1, 1]
    assert (result.views, result.joined) == (views_module.GRAPH_COPIES, "structural")
    assert [(r.views, r.joined) for r in found] == [(3, None), (3, None)]
    with open(run / RESULTS_FILE, newline="") as f:
        rows = [(row["encoder_step"], row["views"], row["joined"]) for row in csv.DictReader(f)]
    assert rows == [("1", str(views_module.GRAPH_COPIES), "structural"), ("1", "3", ""), ("1", "3", "")]
    printed = capsys.readouterr().out
    assert f"; {views_module.GRAPH_COPIES} views per row; ⊕ structural)" in printed and "; 3 views per row)" in printed


def test_similarity_rows_of_different_view_counts_are_refused_naming_both(run, tmp_path):
    one, two = _edge_list(tmp_path / "a.edgelist", 40, seed=1), _edge_list(tmp_path / "b.edgelist", 40, seed=2)
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{i} {i}\n" for i in range(20)))
    _generate(run, str(one), copies=2)
    _generate(run, str(two), copies=4)
    message = _error_line(lambda: similarity_search.main(["--load-path", str(run), "--hidden", str(HIDDEN),
                                                          "--dataset", str(one), str(two), "--pairs", str(pairs)]))
    assert f"{run / 'a.npy'} and {run / 'b.npy'} hold different rows ({one}: 2 views per row and {two}: 4 views per " \
           f"row)" in message
    assert not (run / RESULTS_FILE).exists()


def test_similarity_rows_joined_beside_plain_rows_or_beside_rows_without_a_record_are_refused(run, tmp_path):
    one, two = _edge_list(tmp_path / "a.edgelist", 40, seed=1), _edge_list(tmp_path / "b.edgelist", 40, seed=2)
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{i} {i}\n" for i in range(20)))
    _generate(run, str(one), copies=2, with_structural=True)
    _generate(run, str(two), copies=2)
    search = ["--load-path", str(run), "--hidden", str(HIDDEN), "--dataset", str(one), str(two), "--pairs", str(pairs)]
    message = _error_line(lambda: similarity_search.main(search))
    assert f"({one}: 2 views per row; ⊕ structural and {two}: 2 views per row)" in message
    _generate(run, str(one), copies=2)
    (run / "b.provenance.json").unlink()  # as rows of older code or of a baseline
    message = _error_line(lambda: similarity_search.main(search))
    assert f"{run / 'b.provenance.json'} is missing" in message
    assert not (run / RESULTS_FILE).exists()


def test_similarity_rows_of_two_different_checkpoints_are_refused(run, tmp_path):
    one, two = _edge_list(tmp_path / "a.edgelist", 40, seed=1), _edge_list(tmp_path / "b.edgelist", 40, seed=2)
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{i} {i}\n" for i in range(20)))
    _generate(run, str(one))
    state = load_checkpoint(run)
    state["model"]["degree_embedding.weight"] += 1.0
    save_checkpoint(state, run / "checkpoint.pt")
    _generate(run, str(two))
    message = _error_line(lambda: similarity_search.main(["--load-path", str(run), "--hidden", str(HIDDEN),
                                                          "--dataset", str(one), str(two), "--pairs", str(pairs)]))
    assert "come from different checkpoints" in message


@pytest.mark.parametrize("header", EARLIER_CSV_HEADERS, ids=["before encoder_step", "before views"])
def test_a_results_log_of_earlier_code_gains_the_new_columns_and_keeps_its_rows(tmp_path, header):
    log = tmp_path / RESULTS_FILE
    old_row = dict(zip(header, ["t", "node_classification", "d", "micro_f1", "0.5", "0.1", "std", "10", "2", "p", "0",
                                "saved/x", "7"]))
    with open(log, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerow(old_row)
    result = TaskResult("node_classification", "d", "micro_f1", np.array([0.7]), 0.7, 0.0, "std", 10, "p", 0,
                        encoder_step=42, views=32)
    append_results_csv(log, [result], "saved/x")
    with open(log, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert tuple(reader.fieldnames) == CSV_COLUMNS
    assert rows[0] == {"encoder_step": "", **old_row, "views": "", "joined": ""}
    assert (rows[1]["encoder_step"], rows[1]["views"], rows[1]["joined"]) == ("42", "32", "")


# ---------------------------------------------------------------------------------------------------------
# 5. caches: one atomic file per entry, checked on read, never crossed


def _gin_cycles(sizes: list[int]) -> str:
    """A GIN-format collection of cycles of ``sizes`` nodes (labels alternate)."""
    blocks = [f"{n} {i % 2}\n" + "".join(f"0 2 {(j - 1) % n} {(j + 1) % n}\n" for j in range(n))
              for i, n in enumerate(sizes)]
    return f"{len(sizes)}\n" + "".join(blocks)


def _gin(n_graphs: int) -> str:
    """A GIN-format collection of ``n_graphs`` triangles (labels alternate)."""
    return f"{n_graphs}\n" + "".join(f"3 {i % 2}\n0 2 1 2\n0 2 0 2\n0 2 0 1\n" for i in range(n_graphs))


_LOADER = textwrap.dedent("""
    import sys
    from gcc_sgcl.data import load_graph_dataset
    root, expected, loads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    crossed = sum(len(load_graph_dataset("imdb-binary", root).graphs) != expected for _ in range(loads))
    print(crossed)
""")


def test_processes_loading_different_sources_under_one_name_never_read_each_others_graphs(tmp_path):
    """Four processes share one cache and load imdb-binary from four data roots, each of another graph count."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), ALLOW_MODIFIED_ENV: "1", "GCC_SGCL_CACHE": str(tmp_path / "cache")}
    roots = []
    for n in range(1, 5):
        (tmp_path / f"root{n}" / GIN).parent.mkdir(parents=True)
        (tmp_path / f"root{n}" / GIN).write_text(_gin(n))
        roots.append((tmp_path / f"root{n}", n))
    workers = [subprocess.Popen([sys.executable, "-c", _LOADER, str(root), str(n), "150"], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE) for root, n in roots]
    outcomes = [worker.communicate(timeout=600) for worker in workers]
    assert [worker.returncode for worker in workers] == [0] * 4, [err[-2000:] for _, err in outcomes]
    assert [int(out) for out, _ in outcomes] == [0, 0, 0, 0]
    assert len(list((tmp_path / "cache").glob("imdb-binary-*.bin"))) == 4


@pytest.mark.parametrize("damage", ["empty", "truncated", "a byte changed", "trailer garbled"])
def test_a_damaged_parse_cache_entry_is_rebuilt_with_a_one_line_notice(tmp_path, monkeypatch, capsys, damage):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    (tmp_path / GIN).parent.mkdir(parents=True)
    (tmp_path / GIN).write_text(_gin(3))
    assert len(load_graph_dataset("imdb-binary", tmp_path).graphs) == 3
    (entry,) = (tmp_path / "cache").glob("*.bin")  # the entry's one file
    data = bytearray(entry.read_bytes())
    if damage == "empty":
        data = bytearray()
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "a byte changed":
        data[len(data) // 3] ^= 0xFF
    else:
        data[-40] = 0x01
    entry.write_bytes(bytes(data))
    capsys.readouterr()
    again = load_graph_dataset("imdb-binary", tmp_path)
    assert len(again.graphs) == 3 and again.labels.tolist() == [0, 1, 0]
    (notice,) = capsys.readouterr().err.strip().splitlines()
    assert notice.startswith(f"{entry}: damaged parse-cache entry") and notice.endswith("rebuilding it")
    assert entry.read_bytes() != bytes(data)  # rebuilt in place
    assert len(load_graph_dataset("imdb-binary", tmp_path).graphs) == 3 and capsys.readouterr().err == ""


def test_a_full_disk_while_caching_parsed_graphs_is_a_notice_and_leaves_no_entry(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    (tmp_path / GIN).parent.mkdir(parents=True)
    (tmp_path / GIN).write_text(_gin(2))

    def full_disk(filename, graphs, labels=None):
        Path(filename).write_bytes(b"DGL partial")
        raise dgl.DGLError("[10:00:00] /opt/dgl/src/runtime/file_stream.cc:52: FileStream.Write incomplete\n"
                           "Stack trace:\n  [bt] (0) libdgl.so")

    monkeypatch.setattr(dgl, "save_graphs", full_disk)
    assert len(load_graph_dataset("imdb-binary", tmp_path).graphs) == 2
    (notice,) = capsys.readouterr().err.strip().splitlines()
    assert "cannot write the parse cache" in notice and "FileStream.Write incomplete" in notice
    assert notice.startswith(str(tmp_path / "cache" / "imdb-binary-"))
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_read_only_cache_is_named_and_skipped(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")
    (tmp_path / GIN).parent.mkdir(parents=True)
    (tmp_path / GIN).write_text(_gin(2))

    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Path, "touch", read_only)
    assert len(load_graph_dataset("imdb-binary", tmp_path).graphs) == 2
    (notice,) = capsys.readouterr().err.strip().splitlines()
    assert f"cannot write the parse cache ($GCC_SGCL_CACHE={tmp_path / 'cache'}: Read-only file system)" in notice


def test_a_truncated_view_cache_entry_is_rebuilt_with_a_notice(run, tmp_path, capsys):
    graph = _edge_list(tmp_path / "g.edgelist", 30)
    _generate(run, str(graph), cache_views=True)
    first = np.load(run / "g.npy")
    (entry,) = (tmp_path / "cache" / "views").glob("g-*.npz")
    entry.write_bytes(entry.read_bytes()[:100])
    capsys.readouterr()
    _generate(run, str(graph), cache_views=True)
    (notice,) = capsys.readouterr().err.strip().splitlines()
    assert notice.startswith(f"{entry}: damaged view-cache entry") and notice.endswith("rebuilding it")
    np.testing.assert_array_equal(np.load(run / "g.npy"), first)


def test_a_read_only_view_cache_is_named_and_skipped(run, tmp_path, monkeypatch, capsys):
    graph = _edge_list(tmp_path / "g.edgelist", 30)

    def no_writes(file, mode="r", *args, **kwargs):
        if "w" in mode and (tmp_path / "cache") in Path(file).parents:
            raise OSError(errno.EROFS, "Read-only file system", str(file))
        return open(file, mode, *args, **kwargs)

    monkeypatch.setattr(views_module, "open", no_writes, raising=False)
    _generate(run, str(graph), cache_views=True)
    (notice,) = capsys.readouterr().err.strip().splitlines()
    assert "cannot write the view cache" in notice and "Read-only file system" in notice
    assert (run / "g.npy").is_file()


class _FullDisk(io.FileIO):
    """A file that takes the first ``room`` bytes, then fails as a full disk does."""

    room = 600

    def write(self, data):
        if self.tell() + len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(data)


def test_a_full_disk_while_saving_a_checkpoint_is_one_line_naming_it_and_keeps_the_previous(run, monkeypatch):
    path = run / "checkpoint.pt"
    before = path.read_bytes()

    def full_disk_open(file, mode="r", *args, **kwargs):
        return _FullDisk(file, "wb") if "w" in mode else open(file, mode, *args, **kwargs)

    monkeypatch.setattr(checkpoint_module, "open", full_disk_open, raising=False)
    with pytest.raises(WriteError) as info:
        save_checkpoint(load_checkpoint(run), path)
    assert str(info.value) == f"{path}: cannot write it (No space left on device); nothing was written under that name"
    assert path.read_bytes() == before and sorted(p.name for p in run.iterdir()) == ["checkpoint.pt"]


def test_a_full_disk_while_writing_embeddings_is_one_line_naming_the_npy(run, tmp_path, monkeypatch):
    graph = _edge_list(tmp_path / "g.edgelist", 30)

    def full_disk(file, array, *args, **kwargs):
        file.write(b"\x93NUMPY partial")
        raise OSError("76160 requested and 56288 written")

    monkeypatch.setattr(np, "save", full_disk)
    message = _error_line(lambda: generate_module.main(["--load-path", str(run), "--dataset", str(graph)]))
    assert message == (f"error: {run / 'g.npy'}: cannot write it (76160 requested and 56288 written); nothing was "
                       f"written under that name")
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pt"]


def test_a_full_disk_while_writing_node_ids_leaves_no_half_written_ids_file(run, tmp_path, monkeypatch):
    graph = _edge_list(tmp_path / "g.edgelist", 30)
    real = Path.write_text

    def full_disk(self, text, *args, **kwargs):
        real(self, text[: len(text) // 2], *args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    message = _error_line(lambda: generate_module.main(["--load-path", str(run), "--dataset", str(graph)]))
    assert message.startswith(f"error: {run / 'g.ids.txt'}: cannot write it (No space left on device)")
    assert not (run / "g.ids.txt").exists() and [p.name for p in run.iterdir() if p.suffix == ".tmp"] == []


def test_a_full_disk_while_logging_results_leaves_the_log_as_it_was(tmp_path, monkeypatch):
    log = tmp_path / RESULTS_FILE
    result = TaskResult("node_classification", "d", "micro_f1", np.array([0.7]), 0.7, 0.0, "std", 10, "p", 0)
    append_results_csv(log, [result], "saved/x")
    before = log.read_bytes()
    real = os.write

    def full_disk(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}") != str(log):
            return real(fd, data)
        real(fd, bytes(data[:10]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(WriteError, match=f"{log}: cannot write it"):
        append_results_csv(log, [result], "saved/x")
    monkeypatch.undo()
    assert log.read_bytes() == before


def test_a_write_failure_of_a_forked_worker_reaches_the_parent_intact():
    failure = pickle.loads(pickle.dumps(WriteError("folds/3.npz", "No space left on device", errno.ENOSPC)))
    assert isinstance(failure, OSError) and failure.errno == errno.ENOSPC and failure.reason == "No space left on device"
    assert str(failure) == "folds/3.npz: cannot write it (No space left on device); nothing was written under that name"


# ---------------------------------------------------------------------------------------------------------
# 6. checkpoints that load but do not fit


def test_a_checkpoint_of_unknown_config_and_no_weights_is_one_line_from_generate_and_load_encoder(tmp_path):
    path = tmp_path / "checkpoint.pt"
    torch.save({"config": {"bogus": 1}, "model": {}}, path)
    message = _error_line(lambda: generate_module.main(["--load-path", str(tmp_path), "--dataset",
                                                        "synthetic-roles"]))
    assert message == f"error: {path}: unknown config key 'bogus' (a checkpoint of other code?)"
    with pytest.raises(CheckpointError, match=f"{path}: unknown config key 'bogus'"):
        gcc_sgcl.load_encoder(tmp_path)


def test_a_checkpoint_without_its_step_is_one_line_from_pretrain_resume(tmp_path):
    pretrain(_cfg(tmp_path), progress=False, graphs=_corpus())
    path = tmp_path / "run" / "checkpoint.pt"
    state = load_checkpoint(path)
    del state["step"]
    save_checkpoint(state, path)
    message = _error_line(lambda: pretrain_module.main(["--output-dir", str(tmp_path), "--run-name", "run", *TINY,
                                                         "--resume"]))
    assert message == f"error: {path}: no 'step' field (not saved by this project's pretrain?)"


def test_a_weight_of_another_shape_is_named_with_the_file(run):
    state = load_checkpoint(run)
    state["model"]["degree_embedding.weight"] = torch.zeros(9, 4)
    save_checkpoint(state, run / "checkpoint.pt")
    with pytest.raises(CheckpointError, match=rf"{run / 'checkpoint.pt'}: model tensor 'degree_embedding.weight' has "
                                              rf"shape \[9, 4\], but its config builds \[513, 4\]"):
        gcc_sgcl.load_encoder(run)
    message = _error_line(lambda: generate_module.main(["--load-path", str(run), "--dataset", "synthetic-roles"]))
    assert "degree_embedding.weight" in message and str(run / "checkpoint.pt") in message


def test_a_missing_or_unknown_weight_and_a_non_tensor_entry_are_named(run):
    state = load_checkpoint(run)
    model = dict(state["model"])
    path = run / "checkpoint.pt"
    save_checkpoint({**state, "model": {k: v for k, v in model.items() if k != "gnn.convs.0.eps"}}, path)
    with pytest.raises(CheckpointError, match=f"{path}: model has no tensor 'gnn.convs.0.eps' \\(1 of"):
        gcc_sgcl.load_encoder(run)
    save_checkpoint({**state, "model": {**model, "extra.weight": torch.zeros(1)}}, path)
    with pytest.raises(CheckpointError, match=f"{path}: model holds the tensor 'extra.weight'"):
        gcc_sgcl.load_encoder(run)
    save_checkpoint({**state, "model": {**model, "gnn.convs.0.eps": [0.0]}}, path)
    with pytest.raises(CheckpointError, match=f"{path}: model entry 'gnn.convs.0.eps' is a list, not a tensor"):
        load_checkpoint(path)
    save_checkpoint({**state, "step": -2}, path)
    with pytest.raises(CheckpointError, match=f"{path}: 'step' is -2, expected a step count >= 0"):
        load_checkpoint(path)


def test_resuming_from_an_exported_encoder_or_weights_of_another_shape_is_named(run, tmp_path):
    path = run / "checkpoint.pt"
    trainer = pretrain_module.Trainer(_cfg(tmp_path))
    check_resumable(load_checkpoint(run), path, trainer.model)  # the run's own checkpoint resumes
    exported = export_encoder(run, tmp_path / "shipped") / "checkpoint.pt"
    with pytest.raises(CheckpointError, match=f"{exported}: no 'optimizer' to resume from"):
        check_resumable(load_checkpoint(exported), exported, trainer.model)
    state = load_checkpoint(run)
    state["model"]["gnn.convs.0.apply_func.0.weight"] = torch.zeros(16, 12)
    with pytest.raises(CheckpointError, match=f"{path}: model tensor 'gnn.convs.0.apply_func.0.weight' has shape"):
        check_resumable(state, path, trainer.model)


def test_generate_refuses_a_missing_dataset_before_embedding_any(run, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    message = _error_line(lambda: generate_module.main(["--load-path", str(run), "--dataset", "synthetic-roles",
                                                        "imdb-binary", "rdt-5k", "--data-dir", str(data)]))
    assert "2 datasets not found under" in message and "imdb-binary (expected" in message and "rdt-5k" in message
    assert "scripts/download.sh --data-dir" in message and message.endswith("imdb-binary rdt-5k`.")
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pt"]  # synthetic-roles, first, was not embedded
