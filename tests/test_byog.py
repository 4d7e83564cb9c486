"""Bring your own graph: pre-train on, embed and evaluate graph files given by path, in Python and through the
shell scripts, with the original node ids written next to the embeddings."""
import csv
import os
import subprocess
from pathlib import Path

import dgl
import networkx as nx
import numpy as np
import pytest

from gcc_sgcl.presets import make_config
from gcc_sgcl.data import DataFormatError
from gcc_sgcl.data.files import read_dataset_file as read_file
from gcc_sgcl.engine.generate import generate
from gcc_sgcl.engine.pretrain import pretrain
from gcc_sgcl.tasks import node_classification, similarity_search

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = 16


def _airport_files(folder: Path, n: int = 60, seed: int = 0) -> tuple[Path, Path, dict[int, int]]:
    """A struc2vec-style airport graph (``u v`` lines over large integer ids) and a ``node label`` file with
    a header labelling two thirds of its nodes (class = a degree band)."""
    g = nx.relabel_nodes(nx.barabasi_albert_graph(n, 2, seed=seed), lambda v: 10_000 + 7 * v)
    edges = folder / "usa-airports.edgelist"
    edges.write_text("".join(f"{u} {v}\n" for u, v in g.edges))
    labelled = {v: min(g.degree(v) // 3, 2) for v in sorted(g.nodes)[: 2 * n // 3]}
    labels = folder / "labels-usa-airports.txt"
    labels.write_text("node label\n" + "".join(f"{v} {c}\n" for v, c in labelled.items()))
    return edges, labels, labelled


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A tiny encoder pre-trained on a corpus given by path (an edge list of string ids)."""
    folder = tmp_path_factory.mktemp("byog")
    corpus = folder / "my-corpus.csv"
    g = nx.powerlaw_cluster_graph(200, 3, 0.3, seed=1)
    corpus.write_text("# source,target\n" + "".join(f"n{u},n{v}\n" for u, v in g.edges))
    cfg = make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": HIDDEN, "num_layers": 2, "degree_embedding_size": 4},
        "train": {"batch_size": 8, "steps": 2, "save_freq": 2, "log_freq": 1, "output_dir": str(folder),
                  "corpus": [str(corpus)]},
    })
    run = Path(pretrain(cfg, progress=False))
    assert run.name == "gcc_e2e_my-corpus.csv_s0"  # a corpus path goes by its file name, never a directory
    return run


def test_generate_writes_stem_npy_and_the_original_id_of_every_row(run_dir, tmp_path):
    edges, _, _ = _airport_files(tmp_path)
    written = generate(run_dir, [str(edges)], progress=False)
    assert written == [run_dir / "usa-airports.npy", run_dir / "usa-airports.ids.txt",
                       run_dir / "usa-airports.provenance.json"]
    emb = np.load(run_dir / "usa-airports.npy")
    ids = (run_dir / "usa-airports.ids.txt").read_text().splitlines()
    first_appearance = list(dict.fromkeys(edges.read_text().split()))
    assert emb.shape == (60, HIDDEN) and ids == first_appearance


def test_generate_reads_a_file_given_by_path_once(run_dir, tmp_path, monkeypatch):
    import gcc_sgcl.data.load as load

    edges, _, _ = _airport_files(tmp_path)
    reads = []
    monkeypatch.setattr(load, "read_dataset_file", lambda path: reads.append(path) or read_file(path))
    generate(run_dir, [str(edges)], progress=False)
    assert reads == [str(edges)]


def test_a_bad_file_stops_generate_before_anything_is_written(run_dir, tmp_path):
    good = tmp_path / "good.edgelist"
    good.write_text("1 2\n2 3\n")
    bad = tmp_path / "bad.edgelist"
    bad.write_text("1 2\n3\n")
    with pytest.raises(DataFormatError, match=r"bad.edgelist line 2: expected an edge"):
        generate(run_dir, [str(good), str(bad)], progress=False)
    assert not (run_dir / "good.npy").exists() and not (run_dir / "good.ids.txt").exists()


def test_node_task_evaluates_only_the_labelled_nodes_and_says_how_many(run_dir, tmp_path, capsys):
    edges, labels, labelled = _airport_files(tmp_path, seed=3)
    (tmp_path / "run").mkdir()
    np.save(tmp_path / "run" / "usa-airports.npy", np.random.default_rng(0).normal(size=(60, HIDDEN)))
    argv = ["--load-path", str(tmp_path / "run"), "--hidden", str(HIDDEN), "--dataset", str(edges),
            "--labels", str(labels), "--folds", "2", "--repeats", "1"]
    (result,) = node_classification.main(argv)
    assert result.n == len(labelled) == 40 and result.dataset == "usa-airports"
    assert "evaluating the 40 labelled of 60" in capsys.readouterr().out


def test_stale_ids_file_of_another_graph_is_refused(tmp_path):
    edges, labels, _ = _airport_files(tmp_path)
    np.save(tmp_path / "usa-airports.npy", np.zeros((60, HIDDEN)))
    (tmp_path / "usa-airports.ids.txt").write_text("".join(f"{i}\n" for i in range(60)))
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", str(edges), "--labels", str(labels)]
    with pytest.raises(SystemExit, match="different graph"):
        node_classification.main(argv)


def test_labels_files_must_match_the_datasets_given_by_path(tmp_path, capsys):
    argv = ["--load-path", str(tmp_path), "--hidden", "4", "--dataset", "a.edgelist", "b.edgelist", "--labels", "x"]
    with pytest.raises(SystemExit):
        node_classification.main(argv)
    assert "--labels gives 1 file(s) for 2 dataset(s) given by path" in capsys.readouterr().err


def test_similarity_task_on_two_paths_and_a_pairs_file(tmp_path):
    g = nx.barabasi_albert_graph(50, 2, seed=0)
    one, two = tmp_path / "kdd.edgelist", tmp_path / "icdm.edgelist"
    one.write_text("".join(f"a{u} a{v}\n" for u, v in g.edges))
    two.write_text("".join(f"b{v} b{u}\n" for u, v in reversed(list(g.edges))))  # same graph, other ids and order
    (tmp_path / "pairs.txt").write_text("".join(f"a{v} b{v}\n" for v in range(50)))
    emb = np.random.default_rng(0).normal(size=(50, HIDDEN))
    order_1 = list(dict.fromkeys(one.read_text().split()))
    order_2 = list(dict.fromkeys(two.read_text().split()))
    np.save(tmp_path / "kdd.npy", emb[[int(v[1:]) for v in order_1]])
    np.save(tmp_path / "icdm.npy", emb[[int(v[1:]) for v in order_2]])  # identical rows for paired nodes
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", str(one), str(two),
            "--pairs", str(tmp_path / "pairs.txt")]
    results = similarity_search.main(argv)
    assert [r.dataset for r in results] == ["kdd+icdm"] * 2 and all(r.mean == 1.0 and r.n == 50 for r in results)


def _bash(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "CI": "true"}
    return subprocess.run(["bash", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_generate_and_node_scripts_take_a_path_and_labels(run_dir, tmp_path):
    edges, labels, _ = _airport_files(tmp_path, seed=5)
    out = _bash(str(ROOT / "scripts/generate.sh"), "-1", str(run_dir), str(edges), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (run_dir / "usa-airports.ids.txt").is_file()
    out = _bash(str(ROOT / "scripts/node_classification/ours.sh"), str(run_dir), str(HIDDEN), str(edges),
                "--labels", str(labels), "--folds", "2", "--repeats", "1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usa-airports" in out.stdout and "evaluating the 40 labelled of 60" in out.stdout
    with open(run_dir / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows[-1]["dataset"] == "usa-airports" and rows[-1]["n"] == "40"


def test_baseline_script_embeds_a_path_and_forwards_flags_to_the_task(tmp_path):
    edges, labels, _ = _airport_files(tmp_path, seed=7)
    out = _bash(str(ROOT / "scripts/baseline.sh"), "8", "structural", str(edges), "--labels", str(labels),
                "--folds", "2", "--repeats", "1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "saved/classical/structural/usa-airports.npy").is_file()
    with open(tmp_path / "saved/classical/structural/results.csv") as f:
        (row,) = list(csv.DictReader(f))
    assert row["n"] == "40" and "1x repeated stratified 2-fold CV" in row["protocol"]


def test_view_cache_of_a_path_dataset_stays_in_the_cache_and_follows_the_content(tmp_path, monkeypatch):
    from gcc_sgcl.config import SamplingConfig
    from gcc_sgcl.engine.views import ViewOptions, cached_views

    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    edges = tmp_path / "ring.edgelist"
    edges.write_text("".join(f"{i} {(i + 1) % 12}\n" for i in range(12)))
    sampling = SamplingConfig(rw_hops=8, positional_embedding_size=4)
    first = cached_views(str(edges), ViewOptions(sampling), progress=False)
    edges.write_text("".join(f"{i} {(i + 1) % 12}\n" for i in range(11)))  # same name, new content
    second = cached_views(str(edges), ViewOptions(sampling), progress=False)
    stored = sorted((tmp_path / "cache" / "views").iterdir())
    assert len(stored) == 2 and all(p.name.startswith("ring-") for p in stored)
    assert first[0][0].num_edges.sum() != second[0][0].num_edges.sum()


def test_view_cache_of_a_registered_name_follows_the_graphs_read_not_the_name(tmp_path, monkeypatch):
    """The same registered name read from two data roots holding different graphs (an edited copy) gets each its
    own views; the same graphs get the stored ones."""
    from gcc_sgcl.config import SamplingConfig
    from gcc_sgcl.data.containers import NodeLabelData
    from gcc_sgcl.engine.views import ViewOptions, cached_views

    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    sampling = SamplingConfig(rw_hops=8, positional_embedding_size=4)

    def views(g: nx.Graph):
        data = NodeLabelData("synthetic-roles", dgl.to_bidirected(dgl.from_networkx(g)), np.zeros(12, dtype=np.int64))
        return cached_views("synthetic-roles", ViewOptions(sampling), data=data, progress=False)[0][0]

    ring, path = views(nx.cycle_graph(12)), views(nx.path_graph(12))
    assert ring.num_edges.sum() != path.num_edges.sum()
    assert len(list((tmp_path / "cache" / "views").iterdir())) == 2
    again = views(nx.cycle_graph(12))
    assert np.array_equal(again.num_edges, ring.num_edges) and len(list((tmp_path / "cache" / "views").iterdir())) == 2
