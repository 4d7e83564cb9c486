"""The experiment sweeps: a tiny real sweep on the synthetic data, skip/resume, the view cache and the report."""
import dataclasses
import json
import os
import shutil
import stat
from pathlib import Path

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

from gcc_sgcl.presets import make_config
from gcc_sgcl.engine.checkpoint import CHECKPOINT_NAME
from gcc_sgcl.engine.views import ViewOptions, cached_views, dataset_views
from gcc_sgcl.experiments.__main__ import main as experiments_main
from gcc_sgcl.experiments.report import build_report
from gcc_sgcl.experiments.rows import ResultRow, RowStore
from gcc_sgcl.classical import embed_dataset, joined
from gcc_sgcl.experiments.encoders import same_training
from gcc_sgcl.experiments.frozen_sweep import run_sweep
from gcc_sgcl.experiments.scoring import quintile_scores
from gcc_sgcl.experiments.sweep import Sweep, joined_name
from gcc_sgcl.sampling.connectivity import lambda2
from gcc_sgcl.sampling.induced import whole_graph_views

DATASETS = ["synthetic-roles", "synthetic-graphs", "synthetic-similarity"]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    """One tiny sweep (2 pre-trained methods × 2 seeds + a training-free row), shared by the tests below."""
    root = tmp_path_factory.mktemp("sweep")
    mp = pytest.MonkeyPatch()
    mp.setenv("GCC_SGCL_CACHE", str(root / "cache"))
    sweep = Sweep(methods=["gcc", "sgcl", "structural"], seeds=[0, 1], datasets=DATASETS, steps=2, batch_size=8,
                  num_workers=0, output_dir=str(root / "runs"), rows=str(root / "rows.jsonl"), folds=3, repeats=2)
    added = run_sweep(sweep, progress=False)
    yield root, sweep, added
    mp.undo()


def test_sweep_stores_one_row_per_metric_with_config_and_commit(sweep_dir):
    _, sweep, added = sweep_dir
    # per (method, seed): 1 node + 1 graph + 2 similarity metrics
    assert len(added) == 3 * 2 * 4
    gcc = [r for r in added if r.method == "gcc"]
    assert {r.seed for r in gcc} == {0, 1} and {r.mode for r in gcc} == {"e2e"}
    for r in gcc:
        assert r.config["method"] == "gcc" and r.config["train"]["seed"] == r.seed
        assert r.config["train"]["steps"] == 2 and len(r.commit) >= 7
    node = next(r for r in added if r.task == "node_classification")
    assert len(node.scores) == sweep.repeats and np.isclose(np.mean(node.scores), node.mean)
    assert len(node.lambda2_quintiles) == 5 and all(0 <= q <= 1 for q in node.lambda2_quintiles)
    assert {r.mode for r in added if r.method == "structural"} == {"none"}


def test_seeds_give_different_encoders_and_same_seed_same_rows(sweep_dir):
    _, _, added = sweep_dir
    graph = {(r.method, r.seed): r.mean for r in added if r.task == "graph_classification"}
    node = {(r.method, r.seed): r.mean for r in added if r.task == "node_classification"}
    assert (graph[("gcc", 0)], node[("gcc", 0)]) != (graph[("gcc", 1)], node[("gcc", 1)])
    # the training-free floor does not depend on the encoder seed
    assert graph[("structural", 0)] == graph[("structural", 1)]


def test_rerun_skips_stored_rows_and_reuses_trained_runs(sweep_dir):
    root, sweep, _ = sweep_dir
    cfg = sweep.encoder_config("gcc", "e2e", 0)
    ckpt = Path(cfg.train.output_dir) / cfg.run_dir_name() / CHECKPOINT_NAME
    assert Path(cfg.train.output_dir) == root / "runs" / f"{sweep.steps}x{sweep.batch_size}"
    before = ckpt.stat().st_mtime_ns
    assert run_sweep(sweep, progress=False) == []
    # drop one dataset's rows of one encoder: only those come back, without re-training
    store = RowStore(sweep.rows)
    rows = store.load()
    store.replace(lambda r: r.method == "gcc" and r.seed == 0 and r.dataset == "synthetic-graphs", [])
    again = run_sweep(sweep, progress=False)
    assert [(r.method, r.seed, r.dataset) for r in again] == [("gcc", 0, "synthetic-graphs")]
    old = next(r for r in rows if r.method == "gcc" and r.seed == 0 and r.dataset == "synthetic-graphs")
    assert again[0].mean == old.mean and ckpt.stat().st_mtime_ns == before


def test_variant_with_another_k_and_structural_join_rows(sweep_dir, tmp_path, monkeypatch):
    """A bracketed variant (k = 8) gets its own views and encoder; --with-structural adds rows of the
    embedding joined to the structural vector, and a rerun adds only the join rows that are missing."""
    root, _, _ = sweep_dir
    monkeypatch.setenv("GCC_SGCL_CACHE", str(root / "cache"))
    sweep = Sweep(methods=["sgcl[k=8]"], seeds=[0], datasets=["synthetic-graphs"], steps=2, batch_size=8,
                  num_workers=0, output_dir=str(tmp_path / "runs"), rows=str(tmp_path / "rows.jsonl"), folds=3,
                  repeats=2, with_structural=True)
    added = run_sweep(sweep, progress=False)
    assert [r.method for r in added] == ["sgcl[c=0.4,k=8]", joined_name("sgcl[c=0.4,k=8]")]  # the name says its c
    plain, join = added
    assert plain.config["sampling"]["positional_embedding_size"] == 8
    structural = embed_dataset("structural", "synthetic-graphs")
    assert join.columns == plain.columns + structural.shape[1] and plain.mean != join.mean
    assert (tmp_path / "runs" / "2x8" / "sgcl-c=0.4-k=8_e2e_synthetic_s0").is_dir()
    RowStore(sweep.rows).replace(lambda r: r.method == joined_name("sgcl[c=0.4,k=8]"), [])
    again = run_sweep(sweep, progress=False)
    assert [(r.method, r.mean) for r in again] == [(join.method, join.mean)]


def test_joined_blocks_weigh_alike_whatever_their_scale():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(50, 64)), 100 * rng.normal(size=(50, 8))
    out = joined(a, b)
    assert out.shape == (50, 72)
    assert np.isclose(np.linalg.norm(out[:, :64], axis=1).mean(), 1, atol=1e-5)
    assert np.isclose(np.linalg.norm(out[:, 64:], axis=1).mean(), 1, atol=1e-5)
    assert np.allclose(out[:, :64] / out[0, 0], a / a[0, 0], atol=1e-4)  # within a block: only rescaled


def test_an_exported_encoder_copied_into_a_run_folder_is_reused_not_retrained(sweep_dir, tmp_path, monkeypatch):
    """saved/ does not survive a session: a shipped (exported) checkpoint put where the runner looks is used as
    the finished run, and gives the rows the original run gave."""
    from gcc_sgcl.engine.checkpoint import export_encoder

    root, sweep, added = sweep_dir
    monkeypatch.setenv("GCC_SGCL_CACHE", str(root / "cache"))
    cfg = sweep.encoder_config("gcc", "e2e", 0)
    shipped = export_encoder(Path(cfg.train.output_dir) / cfg.run_dir_name(), tmp_path / "shipped")
    again = Sweep(**{**sweep.__dict__, "methods": ["gcc"], "seeds": [0], "datasets": ["synthetic-graphs"],
                     "output_dir": str(tmp_path / "runs"), "rows": str(tmp_path / "rows.jsonl")})
    run = tmp_path / "runs" / f"{sweep.steps}x{sweep.batch_size}" / cfg.run_dir_name()
    run.mkdir(parents=True)
    (run / CHECKPOINT_NAME).write_bytes((shipped / CHECKPOINT_NAME).read_bytes())
    (row,) = run_sweep(again, progress=False)
    original = next(r for r in added if (r.method, r.seed, r.dataset) == ("gcc", 0, "synthetic-graphs"))
    assert row.pretrain_seconds is None and row.mean == original.mean  # reused: nothing trained


def test_a_sweeps_pre_training_says_in_the_sweep_bar_how_far_it_has_got(sweep_dir, tmp_path, monkeypatch, capsys):
    """A long schedule in a sweep would show nothing for hours: its step goes into the sweep bar's postfix (the
    time left, once timed, is StepNote's doctest)."""
    root, sweep, _ = sweep_dir
    monkeypatch.setenv("GCC_SGCL_CACHE", str(root / "cache"))
    here = Sweep(**{**sweep.__dict__, "methods": ["gcc"], "seeds": [5], "datasets": ["synthetic-graphs"],
                    "output_dir": str(tmp_path / "runs"), "rows": str(tmp_path / "rows.jsonl")})
    run_sweep(here, progress=True)
    err = capsys.readouterr().err
    assert "gcc e2e s5 pre-training, step 1 of 2" in err and "gcc e2e s5 pre-training, step 2 of 2" in err


def test_reuse_takes_an_exported_encoder_as_the_run_of_its_own_training_only(sweep_dir, tmp_path, monkeypatch):
    """``--reuse``: the exported gcc seed-0 encoder becomes that run of a sweep with another worker count (copied
    in, nothing trained, same rows); seed 1 is another training and is pre-trained."""
    from gcc_sgcl.engine.checkpoint import export_encoder

    root, sweep, added = sweep_dir
    monkeypatch.setenv("GCC_SGCL_CACHE", str(root / "cache"))
    cfg = sweep.encoder_config("gcc", "e2e", 0)
    shipped = export_encoder(Path(cfg.train.output_dir) / cfg.run_dir_name(), tmp_path / "shipped")
    again = Sweep(**{**sweep.__dict__, "methods": ["gcc"], "seeds": [0, 1], "datasets": ["synthetic-graphs"],
                     "output_dir": str(tmp_path / "runs"), "rows": str(tmp_path / "rows.jsonl"),
                     "num_workers": 1, "reuse": [str(shipped)]})
    rows = {r.seed: r for r in run_sweep(again, progress=False)}
    original = next(r for r in added if (r.method, r.seed, r.dataset) == ("gcc", 0, "synthetic-graphs"))
    assert rows[0].pretrain_seconds is None and rows[0].mean == original.mean
    assert (tmp_path / "runs" / f"{sweep.steps}x{sweep.batch_size}" / cfg.run_dir_name() / CHECKPOINT_NAME).exists()
    assert rows[1].pretrain_seconds is not None


def test_same_training_ignores_where_and_how_fast_a_run_went():
    cfg = make_config("gcc", {"train": {"steps": 10}})
    assert same_training(cfg, make_config("gcc", {"train": {"steps": 10, "num_workers": 3, "output_dir": "x",
                                                            "threads": 2, "save_freq": 5}}))
    for other in ({"train": {"steps": 10, "lr": 0.01}}, {"train": {"steps": 10, "seed": 1}},
                  {"train": {"steps": 11}}, {"train": {"steps": 10}, "sampling": {"rw_hops": 64}}):
        assert not same_training(cfg, make_config("gcc", other))
    assert not same_training(cfg, make_config("sgcl", {"train": {"steps": 10}}))


def test_jobs_go_seed_by_seed_so_a_cut_off_sweep_has_every_method_at_its_first_seeds():
    sweep = Sweep(methods=["gcc", "sgcl", "structural"], modes=["e2e", "moco"], seeds=[0, 1], datasets=[])
    s = "sgcl[c=0.4]"  # the sgcl preset, named with its c
    assert sweep.jobs() == [("gcc", "e2e", 0), ("gcc", "moco", 0), (s, "e2e", 0), (s, "moco", 0),
                            ("structural", "none", 0), ("gcc", "e2e", 1), ("gcc", "moco", 1),
                            (s, "e2e", 1), (s, "moco", 1), ("structural", "none", 1)]
    assert Sweep(methods=["sgcl", "sgcl[c=0.4]"], seeds=[0], datasets=[]).jobs() == [(s, "e2e", 0)]  # one job


def _row(method: str) -> ResultRow:
    return ResultRow(method=method, mode="e2e", seed=0, dataset="d", task="graph_classification",
                     metric="accuracy", mean=0.5, std=0.0, std_kind="", n=1, protocol="")


def test_a_fine_tuned_row_must_name_its_view_copies_a_frozen_one_none_and_unknown_fields_are_rejected():
    tuned = dict(_row("gcc").to_dict(), task="graph_classification_finetuned", view_copies=30)
    assert ResultRow.from_dict(tuned).view_copies == 30
    with pytest.raises(ValueError, match="fine-tuned row .*view_copies must be given"):
        ResultRow.from_dict(dict(tuned, view_copies=None))
    del tuned["view_copies"]
    with pytest.raises(ValueError, match="view_copies must be given"):
        ResultRow.from_dict(tuned)
    with pytest.raises(ValueError, match="frozen row .*view_copies must be None"):  # checked as built, too
        dataclasses.replace(_row("gcc"), view_copies=2)
    assert ResultRow.from_dict(_row("gcc").to_dict()).view_copies is None
    with pytest.raises(ValueError, match="svc_search"):
        ResultRow.from_dict(dict(_row("gcc").to_dict(), svc_search=True))


def test_row_store_ignores_a_truncated_last_line_but_not_a_corrupt_middle_one(tmp_path):
    store = RowStore(tmp_path / "rows.jsonl")
    store.append([_row("a"), _row("b")])
    with store.path.open("a") as f:
        f.write('{"method": "c", "mea')
    assert [r.method for r in store.load()] == ["a", "b"]
    store.path.write_text(json.dumps(_row("a").to_dict()) + "\nnot json\n" + json.dumps(_row("b").to_dict()) + "\n")
    with pytest.raises(ValueError, match="line 2"):
        store.load()


def test_a_plain_row_store_syncs_its_folder_when_an_append_creates_the_file(tmp_path, monkeypatch):
    folder_syncs, real_fsync = [], os.fsync

    def fsync(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            folder_syncs.append((tmp_path / "rows.jsonl").read_text().count("\n"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store = RowStore(tmp_path / "rows.jsonl")
    store.append([_row("a")])
    store.append([_row("b")])
    assert folder_syncs == [1] and [r.method for r in store.load()] == ["a", "b"]


def test_cached_views_equal_freshly_built_views(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))
    options = ViewOptions(make_config("gcc").sampling, copies=2)  # 2: cheap
    fresh = [list(p) for p in dataset_views("synthetic-similarity", options, progress=False)]
    first = cached_views("synthetic-similarity", options, progress=False)
    again = cached_views("synthetic-similarity", options, progress=False)
    assert len(list((tmp_path / "views").iterdir())) == 1
    assert [len(p) for p in fresh] == [len(p) for p in again] == [len(p) for p in first]
    for fresh_copies, stored_copies in zip(fresh, again):
        assert len(fresh_copies) == len(stored_copies) == 2
        for a, b in zip(fresh_copies, stored_copies):
            assert a.to_arrays().keys() == b.to_arrays().keys()
            assert all(np.array_equal(x, b.to_arrays()[key], equal_nan=key != "pe_sign")
                       for key, x in a.to_arrays().items())


def test_cached_views_are_keyed_by_the_visit_budget_of_node_views_only(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))
    sampling = make_config("gcc").sampling
    for name in ("synthetic-similarity", "synthetic-graphs"):
        for budget in ("pretrain", "gcc"):
            cached_views(name, ViewOptions(sampling, copies=2, visit_budget=budget), progress=False)  # 2: cheap
    stored = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "views").iterdir())
    assert stored == ["synthetic-graphs", "synthetic-similarity", "synthetic-similarity"]  # whole graphs: no walks


def test_views_cached_by_other_view_building_code_are_not_read_back(tmp_path, monkeypatch):
    import gcc_sgcl.engine.views as views_module

    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))
    sampling = make_config("gcc").sampling
    digest = views_module.views_code_digest()
    assert len(digest) == 64 and digest == views_module.views_code_digest()
    cached_views("synthetic-graphs", ViewOptions(sampling), progress=False)
    monkeypatch.setattr(views_module, "views_code_digest", lambda: "f" * 64)  # as if the sampler had changed
    cached_views("synthetic-graphs", ViewOptions(sampling), progress=False)
    assert len(list((tmp_path / "views").iterdir())) == 2


def _normalized_lambda2(g: nx.Graph) -> float:
    return float(np.sort(np.linalg.eigvalsh(nx.normalized_laplacian_matrix(g).toarray()))[1])


def test_lambda2_of_a_view_is_the_second_smallest_normalized_laplacian_eigenvalue():
    g = dgl.from_networkx(nx.path_graph(6))
    got = lambda2(whole_graph_views([g, dgl.from_networkx(nx.path_graph(1))], k=4))
    assert np.isclose(got[0], _normalized_lambda2(nx.path_graph(6)), atol=1e-5) and np.isnan(got[1])


def test_lambda2_of_a_disconnected_view_is_that_of_its_largest_component():
    parts = nx.disjoint_union_all([nx.path_graph(3), nx.cycle_graph(7), nx.complete_graph(4)])
    tiny = nx.disjoint_union(nx.path_graph(3), nx.path_graph(2))
    got = lambda2(whole_graph_views([dgl.from_networkx(parts), dgl.from_networkx(tiny)], k=4))
    assert np.isclose(got[0], _normalized_lambda2(nx.cycle_graph(7)), atol=1e-5) and got[0] > 0.1
    assert np.isnan(got[1])  # the largest part has 3 nodes: too few for a λ2


def test_quintile_scores_split_by_rank_of_lambda2():
    lam = np.array([0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.0])
    correct = np.stack([lam > 0.45, lam > 0.45])  # right exactly on the upper half
    scores, bounds = quintile_scores(lam, correct)
    assert scores == [0.0, 0.0, 0.5, 1.0, 1.0]
    assert bounds[0] == [0.0, 0.1] and bounds[-1] == [0.8, 0.9]


def test_report_has_every_table_and_writes_csvs_and_heatmap(sweep_dir, tmp_path):
    root, sweep, _ = sweep_dir
    out = tmp_path / "results.md"
    text = build_report(sweep.rows, out, heatmap_dataset="synthetic-graphs")
    assert out.read_text() == text
    for heading in ("Sweep progress", "Node and graph classification", "Does pre-training beat structure alone",
                    "SGCL against GCC", "Top-k similarity search", "Ablation", "Pairwise augmentations",
                    "λ2 quintile", "Runtime"):
        assert heading in text
    classification = text.split("## Node and graph classification")[1]
    table = [line for line in classification.splitlines() if line.startswith("| gcc |")]
    assert table and "± " in table[0]
    assert "structural (training-free)" in text
    for name in ("progress.csv", "classification.csv", "statistics.csv", "similarity.csv", "lambda2_quintiles.csv"):
        assert (root / name).stat().st_size > 0
    assert (root / "heatmap_synthetic-graphs.png").stat().st_size > 1000


def test_cli_run_then_report(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    rows = tmp_path / "rows.jsonl"
    experiments_main(["run", "--methods", "gcc", "--seeds", "0", "--datasets", "synthetic-graphs", "--steps", "1",
                      "--batch-size", "4", "--num-workers", "0", "--output-dir", str(tmp_path / "runs"),
                      "--rows", str(rows), "--folds", "2", "--repeats", "1"])
    assert len(RowStore(rows).load()) == 1
    experiments_main(["report", "--rows", str(rows), "--out", str(tmp_path / "r.md"),
                      "--heatmap-dataset", "synthetic-graphs"])
    assert "synthetic-graphs" in (tmp_path / "r.md").read_text()


def test_baseline_presets_run_through_the_runner_into_one_table(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    methods = ["gcc", "graphcl", "grace", "mvgrl", "gca"]
    sweep = Sweep(methods=methods, seeds=[0], datasets=["synthetic-graphs"], steps=1, batch_size=4, num_workers=0,
                  output_dir=str(tmp_path / "runs"), rows=str(tmp_path / "rows.jsonl"), folds=2, repeats=1)
    rows = run_sweep(sweep, progress=False)
    assert [r.method for r in rows] == methods
    assert all(r.config["family"] == ("sgcl" if m == "gcc" else m) for r, m in zip(rows, methods))
    text = build_report(sweep.rows, tmp_path / "r.md", heatmap_dataset="synthetic-graphs")
    table = text.split("## Node and graph classification")[1].split("###")[0]
    assert all(f"| {m} | 1 |" in table for m in methods)


def test_a_finished_run_with_another_model_structure_is_not_reused(tmp_path, monkeypatch):
    from gcc_sgcl.experiments.encoders import ensure_pretrained

    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    sweep = Sweep(methods=["gcc"], seeds=[0], datasets=[], steps=1, batch_size=4, num_workers=0,
                  output_dir=str(tmp_path / "runs"))
    cfg = sweep.encoder_config("gcc", "e2e", 0)
    assert ensure_pretrained(cfg) is not None and ensure_pretrained(cfg) is None  # trained, then reused
    cfg.model.apply_node_func = False
    with pytest.raises(ValueError, match="another method, sampling, model or augmentation"):
        ensure_pretrained(cfg)


def test_the_commit_is_dirty_for_changed_code_not_for_the_sweeps_own_outputs(tmp_path):
    import subprocess

    from gcc_sgcl.experiments.code_version import git_commit

    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rows.jsonl").write_text("")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    head = git("rev-parse", "HEAD").strip()
    (tmp_path / "docs" / "rows.jsonl").write_text("{}\n")
    assert git_commit(tmp_path) == head
    assert git_commit(tmp_path / "docs") == head
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == git_commit(tmp_path / "docs") == head + "-dirty"  # from a subfolder too
    assert git_commit(tmp_path / "docs" / "absent") == "unknown"


def test_the_sweep_pre_trains_on_the_corpus_of_its_data_dir(tmp_path, monkeypatch):
    """``--data-dir`` reaches pre-training, not only evaluation: no environment variable, no ./data."""
    import gzip

    from gcc_sgcl.data.load import ALLOW_MODIFIED_ENV

    root = tmp_path / "root"
    edges = nx.barabasi_albert_graph(60, 3, seed=0).edges()
    path = root / "pretrain" / "CA-HepTh" / "CA-HepTh.txt.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress("".join(f"{u}\t{v}\n" for u, v in edges).encode()))
    monkeypatch.delenv("GCC_SGCL_DATA", raising=False)
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, "1")  # a small stand-in for CA-HepTh
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    sweep = Sweep(methods=["gcc"], seeds=[0], datasets=["synthetic-roles"], corpus=["ca-hepth"], data_dir=str(root),
                  steps=1, batch_size=4, num_workers=0, output_dir=str(tmp_path / "runs"),
                  rows=str(tmp_path / "rows.jsonl"), folds=2, repeats=1)
    (row,) = run_sweep(sweep, progress=False)
    assert row.config["train"]["data_dir"] == str(root) and row.config["train"]["corpus"] == ["ca-hepth"]


def test_a_resumed_encoder_reports_the_pre_training_time_of_all_its_segments(tmp_path, monkeypatch):
    """The runner records a resumed run's whole training time (its checkpoint's ``train_seconds``), not only
    the segment after the resume, so plans estimate from full runs."""
    import time

    from gcc_sgcl.engine.checkpoint import load_checkpoint, save_checkpoint
    from gcc_sgcl.experiments.encoders import ensure_pretrained

    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))
    sweep = Sweep(methods=["gcc"], seeds=[0], datasets=[], steps=2, batch_size=4, num_workers=0,
                  output_dir=str(tmp_path / "runs"))
    cfg = sweep.encoder_config("gcc", "e2e", 0)
    first = ensure_pretrained(cfg)
    ckpt = Path(cfg.train.output_dir) / cfg.run_dir_name() / CHECKPOINT_NAME
    state = load_checkpoint(ckpt)
    assert 0 < state["train_seconds"] <= first
    save_checkpoint({**state, "step": 1, "train_seconds": 1000.0}, ckpt)  # as if killed after 1000 s at step 1
    start = time.time()
    total = ensure_pretrained(cfg)
    assert 1000.0 < total <= 1000.0 + time.time() - start


def test_fine_tuned_rows_are_stored_per_recipe_and_skipped_once_stored(sweep_dir, tmp_path):
    """Rows fine-tuned with other epochs are another recipe: stored beside, never taken for, each other."""
    from gcc_sgcl.tasks.finetune import FinetuneConfig
    from gcc_sgcl.experiments.finetune_sweep import run_finetune

    _, sweep, _ = sweep_dir
    mine = Sweep(**{**sweep.__dict__, "methods": ["gcc"], "seeds": [0], "datasets": ["synthetic-graphs"],
                    "rows": str(tmp_path / "rows.jsonl")})
    two = FinetuneConfig(epochs=2, max_folds=1, view_copies=2)
    (row,) = run_finetune(mine, two, progress=False)
    assert (row.task, row.epochs, row.max_folds, row.repeats) == ("graph_classification_finetuned", 2, 1, 1)
    assert "batch 32" in row.protocol and "2 views cycled over the epochs per example" in row.protocol
    assert run_finetune(mine, two, progress=False) == []
    (other,) = run_finetune(mine, FinetuneConfig(epochs=1, max_folds=1, view_copies=2), progress=False)
    assert other.epochs == 1 and "one fixed view per example" in other.protocol  # copies beyond the epochs unused
    assert len(RowStore(mine.rows).load()) == 2


def test_plan_lists_the_missing_rows_how_each_encoder_is_obtained_and_estimates_from_stored_times(
        sweep_dir, tmp_path):
    """``--plan``: nothing for a complete sweep; for a wider one, the trained encoders only need their new
    (joined) evaluations, a new seed is pre-trained, an interrupted run resumes, an exported one is copied; the
    estimates are the stored rows' median wall times (unknown where no row has one)."""
    from statistics import median

    from gcc_sgcl.engine.checkpoint import export_encoder, load_checkpoint, save_checkpoint
    from gcc_sgcl.experiments.plan import format_plan, plan_sweep

    root, sweep, added = sweep_dir
    assert plan_sweep(sweep) == [] and format_plan([]).startswith("nothing to do")
    wider = Sweep(**{**sweep.__dict__, "methods": ["gcc", "structural"], "seeds": [0, 1, 2],
                     "with_structural": True})
    jobs = {(j.method, j.seed): j for j in plan_sweep(wider)}
    assert set(jobs) == {("gcc", 0), ("gcc", 1), ("gcc", 2), ("structural", 2)}
    assert [jobs["gcc", s].encoder for s in range(3)] == ["trained", "trained", "to pre-train"]
    assert [jobs["gcc", s].evaluations for s in range(3)] == [3, 3, 6]  # joins only; then plain and joins
    assert jobs["gcc", 0].pretrain_minutes == 0.0 and jobs["gcc", 0].eval_minutes is None  # no join timed yet
    trained = [r.pretrain_seconds for r in added if r.method == "gcc" and r.pretrain_seconds is not None]
    assert np.isclose(jobs["gcc", 2].pretrain_minutes, median(trained) / 60)
    assert jobs["structural", 2].encoder == "training-free" and jobs["structural", 2].eval_minutes is not None
    assert "(plus those without an estimate)" in format_plan(list(jobs.values()))
    (untrained,) = plan_sweep(Sweep(**{**sweep.__dict__, "methods": ["gcc"], "seeds": [0], "steps": 0}))
    assert (untrained.encoder, untrained.pretrain_minutes) == ("untrained (0 steps)", 0.0)

    cfg = sweep.encoder_config("gcc", "e2e", 2)
    run = Path(cfg.train.output_dir) / cfg.run_dir_name()
    state = load_checkpoint(Path(cfg.train.output_dir) / sweep.encoder_config("gcc", "e2e", 0).run_dir_name()
                            / CHECKPOINT_NAME)
    state["step"] = 1
    save_checkpoint(state, run / CHECKPOINT_NAME)  # seed 2 stopped half-way (1 of 2 steps)
    (again,) = [j for j in plan_sweep(wider) if (j.method, j.seed) == ("gcc", 2)]
    assert again.encoder == "resumes at step 1" and np.isclose(again.pretrain_minutes, median(trained) / 120)

    shipped = export_encoder(Path(cfg.train.output_dir) / sweep.encoder_config("gcc", "e2e", 1).run_dir_name(),
                             tmp_path / "shipped")
    elsewhere = Sweep(**{**wider.__dict__, "methods": ["gcc"], "output_dir": str(tmp_path / "runs"),
                         "reuse": [str(shipped)]})
    states = {j.seed: j.encoder for j in plan_sweep(elsewhere)}
    assert states == {0: "to pre-train", 1: f"copied from {shipped}", 2: "to pre-train"}


def test_a_study_with_a_store_of_its_own_is_estimated_from_the_tables_rows_per_step(sweep_dir, tmp_path):
    """A longer budget in a store of its own (the long stage): nothing to go on from its own rows; with the
    tables' store in ``--timings`` (read once, however often named), pre-training is the median time per step times
    its steps and the evaluations are the tables' medians."""
    from statistics import median

    from gcc_sgcl.experiments.plan import Timings, plan_sweep, timed_rows

    _, sweep, added = sweep_dir
    longer = Sweep(**{**sweep.__dict__, "methods": ["gcc"], "seeds": [0], "steps": sweep.steps * 4,
                      "output_dir": str(tmp_path / "runs"), "rows": str(tmp_path / "long.jsonl")})
    (alone,) = plan_sweep(longer)
    assert (alone.encoder, alone.pretrain_minutes, alone.eval_minutes) == ("to pre-train", None, None)
    both = Sweep(**{**longer.__dict__, "timings": [sweep.rows, str(Path(sweep.rows).resolve())]})
    assert len(timed_rows(both)) == len(RowStore(sweep.rows).load())
    (timed,) = plan_sweep(both)
    per_step = median(r.pretrain_seconds / r.steps for r in added
                      if r.method == "gcc" and r.pretrain_seconds is not None)
    assert np.isclose(timed.pretrain_minutes, per_step * longer.steps / 60)
    tables = Timings(RowStore(sweep.rows).load(), sweep.budget())
    assert np.isclose(timed.eval_minutes, sum(tables.evaluation(n, "encoder", "gcc") for n in DATASETS) / 60)


def test_plan_credits_the_cv_folds_an_evaluation_cut_off_part_way_has_stored(sweep_dir):
    """An evaluation with folds in the sweep's fold cache is estimated for its missing folds only (the stored rows'
    median times the share missing; with no timed row, the stored folds' mean fit time), and the plan says how many
    folds are stored."""
    from gcc_sgcl.experiments.plan import Timings, evaluation_seconds, format_plan, plan_sweep
    from gcc_sgcl.tasks.cv import forked_jobs
    from gcc_sgcl.tasks.folds import CacheProgress, FoldResult, cache_folder, close_cache, open_cache, save_fold

    _, sweep, _ = sweep_dir
    wider = Sweep(**{**sweep.__dict__, "methods": ["structural"], "seeds": [0, 1, 2]})
    (before,) = plan_sweep(wider)
    assert before.folds == (0, 0)
    job, graphs = ("structural", "none", 2), ("synthetic-graphs", "structural", "structural")
    folder = cache_folder(wider.protocol("structural", "none", 2).fold_cache, "synthetic-graphs")
    open_cache(folder, np.zeros((4, 2)), {"repeats": 2, "folds": 3, "seed": wider.eval_seed})
    for i in range(3):
        save_fold(folder, i, FoldResult(np.zeros(5), 10.0))
    try:
        (after,) = plan_sweep(wider)
        median_s = Timings(RowStore(wider.rows).load(), wider.budget()).evaluation(*graphs[::2], "structural")
        assert after.folds == (3, 6) and "(3 of 6 CV folds stored)" in format_plan([after])
        assert np.isclose(before.eval_minutes - after.eval_minutes, median_s / 2 / 60)
        untimed = Timings([], wider.budget())
        rounds = -(-3 // forked_jobs(wider.eval_jobs, 3))  # 3 missing folds, fitted in parallel
        assert evaluation_seconds(wider, untimed, job, graphs)[0] == 10.0 * rounds
        other = Sweep(**{**wider.__dict__, "repeats": 3})  # its run would empty the folder: no credit
        assert evaluation_seconds(other, untimed, job, graphs) == (None, CacheProgress())
        assert evaluation_seconds(wider, untimed, job, ("synthetic-roles", "structural", "structural"))[0] is None
    finally:
        close_cache(folder)


def test_evaluation_estimates_are_each_methods_own_before_the_pooled_median():
    """GCC's SVC takes longer on some embeddings than on others: a method's estimate is its own median; a method
    never evaluated on the dataset gets the median over every method."""
    from gcc_sgcl.experiments.plan import Timings

    def timed(method: str, seed: int, seconds: float) -> ResultRow:
        return ResultRow(method=method, mode="e2e", seed=seed, dataset="collab", task="graph_classification",
                         metric="accuracy", mean=0.5, std=0.0, std_kind="", n=1, protocol="", repeats=10,
                         folds=10, svc="gcc", eval_seconds=seconds)

    rows = [timed("gcc", 0, 900.0), timed("gcc", 1, 1000.0), timed("sgcl", 0, 300.0), timed("sgcl", 1, 310.0),
            timed("gcc ⊕ structural", 0, 1200.0)]
    timings = Timings(rows, {"repeats": 10, "folds": 10, "svc": "gcc"})
    assert timings.evaluation("collab", "encoder", "gcc") == 950.0
    assert timings.evaluation("collab", "encoder", "sgcl") == 305.0
    assert timings.evaluation("collab", "encoder", "grace") == 605.0  # median of 300, 310, 900, 1000
    assert timings.evaluation("collab", "structural join", "gcc") == 1200.0
    assert timings.evaluation("imdb-binary", "encoder", "gcc") is None


def test_a_deadline_starts_only_the_jobs_whose_estimates_end_before_it(sweep_dir, capsys):
    """``--until``: a job to pre-train starts only if its estimated pre-training + evaluation (the plan's) fit in
    the time left, counting the known parts when some are unknown; a refused job is named and trains nothing;
    fine-tuning under a deadline takes trained encoders only."""
    from datetime import datetime, timedelta, timezone

    from gcc_sgcl.tasks.finetune import FinetuneConfig
    from gcc_sgcl.experiments.plan import Deadline, parse_deadline, plan_sweep

    root, sweep, _ = sweep_dir
    wider = Sweep(**{**sweep.__dict__, "methods": ["gcc"], "seeds": [0, 3]})
    (job,) = plan_sweep(wider)
    needed = job.pretrain_minutes + job.eval_minutes
    now = datetime(2026, 11, 24, 20, 0, tzinfo=timezone.utc)
    names = {n: ["gcc"] for n in DATASETS}

    def deadline(minutes: float, finetune: FinetuneConfig | None = None) -> Deadline:
        return Deadline(wider, now + timedelta(minutes=minutes), finetune, clock=lambda: now)

    assert deadline(needed * 1.01)(("gcc", "e2e", 3), names)
    assert not deadline(needed * 0.99)(("gcc", "e2e", 3), names)
    assert "not started: gcc e2e 3 on synthetic-roles" in capsys.readouterr().err
    joins = {n: ["gcc ⊕ structural"] for n in DATASETS}  # no joined row was ever timed: only pre-training is known
    assert deadline(job.pretrain_minutes * 1.01)(("gcc", "e2e", 3), joins)
    assert not deadline(job.pretrain_minutes * 0.99)(("gcc", "e2e", 3), joins)
    assert "(≥ " in capsys.readouterr().err
    assert deadline(0.0)(("gcc", "e2e", 0), joins)  # trained, nothing known to wait for
    tuned = FinetuneConfig(epochs=1, max_folds=1)
    assert deadline(1e6, tuned)(("gcc", "e2e", 0), {"synthetic-graphs": ["gcc"]})
    assert not deadline(1e6, tuned)(("gcc", "e2e", 3), {"synthetic-graphs": ["gcc"]})
    assert "its encoder is not trained" in capsys.readouterr().err

    cfg = wider.encoder_config("gcc", "e2e", 3)
    flags = ["--corpus", *sweep.corpus, "--steps", str(sweep.steps), "--batch-size", str(sweep.batch_size),
             "--output-dir", sweep.output_dir, "--rows", sweep.rows, "--num-workers", "0", "--folds", "3",
             "--repeats", "2", "--methods", "gcc", "--seeds", "3"]
    experiments_main(["run", *flags, "--datasets", *DATASETS, "--until", "2000-01-01T00:00"])
    assert "0 new rows" in capsys.readouterr().err
    experiments_main(["export", *flags, "--to", str(root / "x"), "--until", "2000-01-01T00:00"])
    assert "gcc e2e 3 on export" in capsys.readouterr().err
    assert not (Path(cfg.train.output_dir) / cfg.run_dir_name()).exists() and not (root / "x").exists()
    for bad in ("soon", "2026-11-24"):
        with pytest.raises(SystemExit, match=f"--until '{bad}': expected HH:MM"):
            experiments_main(["run", *flags, "--datasets", *DATASETS, "--until", bad])
    assert parse_deadline("2026-11-24T23:10+05:00") == parse_deadline("2026-11-24T18:10+00:00")
    assert parse_deadline("2026-11-24T23:10").tzinfo is not None


def test_a_dataset_is_present_when_its_files_are_under_the_data_root(tmp_path):
    from gcc_sgcl.data import dataset_present

    assert dataset_present("synthetic-graphs", tmp_path)  # embedded
    assert not dataset_present("usa_airport", tmp_path)
    assert not dataset_present(tmp_path / "absent.edgelist") and dataset_present(tmp_path)


def test_export_ships_a_sweeps_encoder_without_training_it_again(sweep_dir, tmp_path):
    """``export`` (stage ``ship`` of reproduce.sh) writes the finished run's configuration and weights; a
    training-free method or several encoders at once are refused with the flag named."""
    import gcc_sgcl
    from gcc_sgcl.engine.checkpoint import load_checkpoint

    root, sweep, _ = sweep_dir
    cfg = sweep.encoder_config("sgcl", "e2e", 1)
    run = Path(cfg.train.output_dir) / cfg.run_dir_name() / CHECKPOINT_NAME
    before = run.stat().st_mtime_ns
    flags = ["--corpus", *sweep.corpus, "--steps", str(sweep.steps), "--batch-size", str(sweep.batch_size),
             "--output-dir", sweep.output_dir, "--num-workers", "0"]
    experiments_main(["export", *flags, "--methods", "sgcl", "--seeds", "1", "--to", str(tmp_path / "sgcl_s1")])
    shipped, original = load_checkpoint(tmp_path / "sgcl_s1"), load_checkpoint(run)
    assert run.stat().st_mtime_ns == before and shipped["config"] == original["config"]
    assert all(torch.equal(shipped["model"][k], v) for k, v in original["model"].items())
    assert gcc_sgcl.load_encoder(tmp_path / "sgcl_s1").embed_nodes(nx.path_graph(6)).shape[0] == 6
    for bad, named in ((["--methods", "gcc", "sgcl", "--seeds", "0"], "--methods"),
                       (["--methods", "structural", "--seeds", "0"], "training-free")):
        with pytest.raises(SystemExit, match=named):
            experiments_main(["export", *flags, *bad, "--to", str(tmp_path / "x")])


def test_a_stashed_sweep_continues_on_a_machine_without_its_run_folders(sweep_dir, tmp_path, monkeypatch, capsys):
    """``--stash``: a finished encoder is carried as its weights and one killed mid-training as its whole state;
    given to ``--reuse`` on a machine with empty run folders, the first is used as is and the second resumes from
    its step, ending at the weights and rows of the uninterrupted sweep."""
    import gcc_sgcl.engine.pretrain as pretrain_module
    from gcc_sgcl.engine.checkpoint import load_checkpoint
    from gcc_sgcl.experiments.plan import plan_sweep
    from gcc_sgcl.experiments.encoders import ensure_pretrained

    root, sweep, added = sweep_dir
    monkeypatch.setenv("GCC_SGCL_CACHE", str(root / "cache"))
    here = Sweep(**{**sweep.__dict__, "methods": ["gcc"], "datasets": ["synthetic-graphs"], "save_freq": 1,
                    "output_dir": str(tmp_path / "here"), "rows": str(tmp_path / "rows.jsonl")})
    ensure_pretrained(here.encoder_config("gcc", "e2e", 0))
    original_step = pretrain_module.Trainer.step

    def killed_after_one(self, q, k):
        if self.step_count == 1:  # the checkpoint of step 1 exists; the second step is lost
            raise KeyboardInterrupt
        return original_step(self, q, k)

    monkeypatch.setattr(pretrain_module.Trainer, "step", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        ensure_pretrained(here.encoder_config("gcc", "e2e", 1))
    monkeypatch.setattr(pretrain_module.Trainer, "step", original_step)

    carry = tmp_path / "carry"
    experiments_main(["run", "--methods", "gcc", "--seeds", "0", "1", "--datasets", "synthetic-graphs",
                      "--steps", str(here.steps), "--batch-size", str(here.batch_size), "--num-workers", "0",
                      "--output-dir", here.output_dir, "--rows", here.rows, "--stash", str(carry)])
    budget = f"{here.steps}x{here.batch_size}"
    folders = [carry / budget / here.encoder_config("gcc", "e2e", s).run_dir_name() for s in (0, 1)]
    assert capsys.readouterr().out.split() == [w for f in folders for w in ("stashed", str(f))]
    finished, stopped = (load_checkpoint(f) for f in folders)
    assert (finished["step"], "optimizer" in finished) == (here.steps, False)
    assert (stopped["step"], "optimizer" in stopped) == (1, True)
    assert not Path(here.rows).exists()  # nothing ran

    spare = tmp_path / "spare"
    shutil.copytree(folders[0], spare)
    there = Sweep(**{**here.__dict__, "output_dir": str(tmp_path / "there"),
                     "reuse": [*(str(f) for f in folders), str(spare)]})
    assert [j.encoder for j in plan_sweep(there)] == [f"copied from {folders[0]}",
                                                      f"resumes at step 1 (copied from {folders[1]})"]
    shutil.rmtree(spare)  # removed beside the running sweep (a stash replacing saved/carry): skipped, not fatal
    trained = []

    def counted(self, q, k):
        trained.append(self.step_count)
        return original_step(self, q, k)

    monkeypatch.setattr(pretrain_module.Trainer, "step", counted)
    with pytest.warns(RuntimeWarning, match=f"--reuse {spare} has no {CHECKPOINT_NAME} any more"):
        rows = {r.seed: r for r in run_sweep(there, progress=False)}
    assert trained == list(range(1, here.steps))  # seed 0 not trained again, seed 1 from its carried step on
    straight = {r.seed: r for r in added if (r.method, r.dataset) == ("gcc", "synthetic-graphs")}
    assert rows[0].pretrain_seconds is None and rows[1].pretrain_seconds is not None
    assert [rows[s].mean for s in (0, 1)] == [straight[s].mean for s in (0, 1)]
    resumed = load_checkpoint(Path(there.output_dir) / budget / there.encoder_config("gcc", "e2e", 1).run_dir_name())
    reference = load_checkpoint(Path(sweep.output_dir) / budget / sweep.encoder_config("gcc", "e2e", 1).run_dir_name())
    assert all(torch.equal(resumed["model"][k], v) for k, v in reference["model"].items())


def test_a_stash_leaves_out_the_encoders_the_ship_folder_holds_finished(sweep_dir, tmp_path):
    """The ship folder is committed and reused on the next machine, so a stash does not write its encoders twice;
    a finished encoder not shipped yet is still stashed."""
    from gcc_sgcl.experiments.encoders import is_shipped, ship, stash

    _, sweep, _ = sweep_dir
    shipping = Sweep(**{**sweep.__dict__, "ship": str(tmp_path / "pretrained")})
    shipped, other = (shipping.encoder_config("gcc", "e2e", s) for s in (0, 1))
    ship(shipping, shipped)
    assert (is_shipped(shipping, shipped), is_shipped(shipping, other)) == (True, False)
    written = stash(shipping, [("gcc", "e2e", 0), ("gcc", "e2e", 1)], tmp_path / "carry")
    assert written == [tmp_path / "carry" / f"{sweep.steps}x{sweep.batch_size}" / other.run_dir_name()]


def test_a_carried_state_replaces_a_run_folders_only_when_it_is_further_along(sweep_dir, tmp_path, monkeypatch):
    """A carried state is copied in when the run folder holds none or an earlier state of the same training; an
    older state, one of another training, or unfinished weights without their optimiser never are, and the plan
    agrees with the runner; a --reuse folder missing when a sweep starts is an error naming it."""
    from gcc_sgcl.engine.checkpoint import load_checkpoint, save_checkpoint
    from gcc_sgcl.experiments.plan import encoder_state
    from gcc_sgcl.experiments.encoders import reuse_exported, run_folder

    root, sweep, _ = sweep_dir
    cfg = sweep.encoder_config("gcc", "e2e", 0)
    finished = run_folder(cfg)
    state = load_checkpoint(finished)
    save_checkpoint({**state, "step": 1}, tmp_path / "older" / CHECKPOINT_NAME)
    save_checkpoint({k: state[k] for k in ("config", "model")} | {"step": 1}, tmp_path / "weights" / CHECKPOINT_NAME)
    assert reuse_exported(cfg, [tmp_path / "older"]) is None  # the run folder holds the finished run
    moved = Sweep(**{**sweep.__dict__, "output_dir": str(tmp_path / "runs")}).encoder_config("gcc", "e2e", 0)
    assert reuse_exported(moved, [tmp_path / "weights"]) is None  # no optimiser: nothing to resume
    assert encoder_state(moved, [tmp_path / "older"])[0] == f"resumes at step 1 (copied from {tmp_path / 'older'})"
    assert reuse_exported(moved, [tmp_path / "older"]) == tmp_path / "older"
    assert load_checkpoint(run_folder(moved))["step"] == 1
    assert encoder_state(moved, [finished]) == (f"copied from {finished}", 0.0)
    assert reuse_exported(moved, [finished]) == finished  # further along: replaces the step-1 state
    assert load_checkpoint(run_folder(moved))["step"] == sweep.steps
    other = Sweep(**{**sweep.__dict__, "output_dir": str(tmp_path / "runs")}).encoder_config("gcc", "e2e", 1)
    save_checkpoint({**state, "step": 1}, run_folder(other) / CHECKPOINT_NAME)  # seed 0's training in seed 1's folder
    assert encoder_state(other, [run_folder(sweep.encoder_config("gcc", "e2e", 1))])[0] == "resumes at step 1"
    assert reuse_exported(other, [run_folder(sweep.encoder_config("gcc", "e2e", 1))]) is None
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "absent")):
        reuse_exported(moved, [tmp_path / "absent"])
    with pytest.raises(FileNotFoundError, match=f"--reuse {tmp_path / 'absent'}: no {CHECKPOINT_NAME} there"):
        Sweep(**{**sweep.__dict__, "reuse": [str(tmp_path / "older"), str(tmp_path / "absent")]})


def test_a_sweep_ships_each_encoder_it_uses_and_a_second_sweep_rescores_from_them_without_training(
        sweep_dir, tmp_path, monkeypatch):
    import gcc_sgcl.engine.pretrain as pretrain_module

    _, sweep, _ = sweep_dir
    shipping = dataclasses.replace(sweep, ship=str(tmp_path / "shipped"), ship_tag="syn", copies=4,
                                   rows=str(tmp_path / "views.jsonl"), methods=["gcc"], seeds=[1],
                                   datasets=["synthetic-roles"])
    added = run_sweep(shipping, progress=False)
    folder = tmp_path / "shipped" / "gcc_e2e_syn_2x8_s1"
    assert (folder / CHECKPOINT_NAME).is_file() and {r.copies for r in added} == {4}
    # the same rows at 4 views are stored: nothing to do; at 2 views (another budget key) the rows are new
    assert run_sweep(shipping, progress=False) == []
    monkeypatch.setattr(pretrain_module, "pretrain", lambda *a, **k: pytest.fail("pre-trained again"))
    fresh = dataclasses.replace(shipping, output_dir=str(tmp_path / "elsewhere"), reuse=[str(folder)], copies=2,
                                rows=str(tmp_path / "rescored.jsonl"))
    rescored = run_sweep(fresh, progress=False)
    original = {r.metric: r.mean for r in RowStore(sweep.rows).load()
                if (r.method, r.seed, r.dataset) == ("gcc", 1, "synthetic-roles")}
    assert {r.metric: r.mean for r in rescored} == original  # the shipped encoder scores as its stored rows


def test_leave_one_out_presets_drop_exactly_one_stage_of_sgcl():
    from gcc_sgcl.config import STAGES

    full = make_config("sgcl").augment
    for stage in STAGES:
        cut = make_config(f"sgcl-no-{stage}").augment
        assert [s for s in STAGES if getattr(cut, f"use_{s}") != getattr(full, f"use_{s}")] == [stage]
    with pytest.raises(ValueError, match="no effect"):
        make_config("sgcl-no-filter[c=0.4]")
    assert make_config("sgcl-no-crop[c=0.4]").augment.c == 0.4


def test_a_frozen_encoders_row_names_its_inference_views_and_other_rows_do_not():
    row = dict(method="structural", mode="none", seed=0, dataset="d", task="node_classification", metric="acc",
               mean=1.0, std=0.0, std_kind="", n=1, protocol="", copies=2)
    with pytest.raises(ValueError, match="copies"):
        ResultRow(**row)
    assert ResultRow(**{**row, "mode": "e2e", "method": "gcc"}).key[-1] == 2


def test_a_sweep_stopped_by_sigterm_during_pre_training_ends_with_one_line_and_status_143(tmp_path, monkeypatch, capsys):
    import gcc_sgcl.experiments.__main__ as runner
    from gcc_sgcl.engine.pretrain import Interrupted

    def stopped(*args, **kwargs):
        raise Interrupted(tmp_path / "run", 487, 15)

    monkeypatch.setattr(runner, "run_sweep", stopped)
    with pytest.raises(SystemExit) as exit_:
        runner.main(["run", "--rows", str(tmp_path / "rows.jsonl"), "--output-dir", str(tmp_path), "--methods", "gcc",
                     "--seeds", "0", "--datasets", "synthetic-graphs"])
    assert exit_.value.code == 143  # 128 + SIGTERM's 15
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"[gcc_sgcl] interrupted: {tmp_path / 'run'}: stopped at step 487, checkpoint written; the same command resumes it"
    assert not any("Traceback" in line for line in err)
