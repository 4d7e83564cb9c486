"""End-to-end fine-tuning: the learning-rate schedule, seeded folds, what is trained, the CLI and the script."""
import copy
import csv
import dataclasses
import hashlib
import os
import subprocess
from pathlib import Path

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

from gcc_sgcl.presets import make_config
import gcc_sgcl.tasks.finetune as finetune_module
from gcc_sgcl.tasks.finetune import FinetuneConfig, SignCopies, finetune, finetune_cv, finetune_fold, finetune_lr, main
from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
from gcc_sgcl.engine.pretrain import pretrain
from gcc_sgcl.sampling.dataset import GraphViewDataset

ROOT = Path(__file__).resolve().parents[1]
QUIET = FinetuneConfig(progress=False)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A tiny encoder pre-trained for 3 steps on the synthetic corpus."""
    out = tmp_path_factory.mktemp("runs")
    cfg = make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 3, "degree_embedding_size": 4},
        "train": {"batch_size": 8, "steps": 3, "corpus": ["synthetic"], "output_dir": str(out), "run_name": "tiny"},
    })
    return pretrain(cfg, progress=False)


def _toy_graphs() -> tuple[list[dgl.DGLGraph], np.ndarray]:
    """A learnable 3-class task: cycles, stars and cliques of 6–11 nodes, and their labels."""
    builders = (nx.cycle_graph, lambda n: nx.star_graph(n - 1), nx.complete_graph)
    labels = np.tile(np.arange(3), 20)
    sizes = np.random.default_rng(0).integers(6, 12, size=labels.size)
    return [dgl.to_bidirected(dgl.from_networkx(builders[c](int(n)))) for c, n in zip(labels, sizes)], labels


@pytest.fixture(scope="module")
def toy(run):
    """The toy task (:func:`_toy_graphs`) as one copy of views of the tiny encoder."""
    graphs, labels = _toy_graphs()
    encoder, cfg, _ = load_encoder_checkpoint(run)
    dataset = GraphViewDataset(graphs, cfg.sampling)
    return encoder, cfg, [dataset.__getitems__(range(len(dataset)))], labels


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _last_row(run: Path) -> dict[str, str]:
    with open(run / "results.csv", newline="") as f:
        return list(csv.DictReader(f))[-1]


def test_lr_warms_up_linearly_stays_flat_and_ramps_down_to_zero_per_step():
    lr, spe = 0.005, 4
    lrs = np.array([finetune_lr(s, spe, 10, lr) for s in range(40)])
    assert lrs[0] == pytest.approx(lr / 12) and lrs[11] == pytest.approx(lr)
    np.testing.assert_allclose(np.diff(lrs[:12]), lr / 12)  # 0 → lr over 3 epochs, one increment per step
    np.testing.assert_allclose(lrs[11:29], lr)
    np.testing.assert_allclose(np.diff(lrs[28:]), -lr / 12)  # lr → 0 over the last 3 epochs
    assert lrs[-1] == pytest.approx(lr / 12)
    short = [finetune_lr(s, 1, 2, lr) for s in range(2)]  # warm-up and ramp-down overlap: the smaller applies
    assert short == pytest.approx([lr / 3, lr / 3])
    assert finetune_lr(3, 2, 5, lr, warmup_epochs=0, rampdown_epochs=0) == lr
    with pytest.raises(ValueError, match="step must be in"):
        finetune_lr(40, spe, 10, lr)


def test_a_fold_is_a_function_of_seed_and_fold_and_leaves_the_global_rng_alone(toy):
    encoder, cfg, views, labels = toy
    train = np.arange(45)
    rng_state = torch.get_rng_state()
    first, again, other = (
        finetune_fold(encoder, cfg, views, labels, train, FinetuneConfig(epochs=2, batch_size=16, progress=False), f)
        for f in (1, 1, 2)
    )
    assert torch.equal(torch.get_rng_state(), rng_state)
    a, b, c = (m.state_dict() for m in (first, again, other))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)
    settings = FinetuneConfig(folds=3, epochs=2, batch_size=16, seed=4, progress=False, max_folds=2)
    scores = [finetune_cv(encoder, cfg, views, labels, "graph", settings=s).scores
              for s in (settings, settings, dataclasses.replace(settings, jobs=2))]  # folds in 2 processes alike
    np.testing.assert_array_equal(scores[0], scores[1])
    np.testing.assert_array_equal(scores[0], scores[2])


def test_epoch_e_trains_on_view_copy_e_mod_n(toy):
    """Cycling through copies: [v, v] trains exactly as [v]; [v, w] differs from [v] (epoch 1 sees w); [w, v]
    ends otherwise than [v, w] (order matters); over 2 epochs [v, w] equals [v, w, u] (copy 2 unused)."""
    encoder, cfg, (views,), labels = toy
    graphs, _ = _toy_graphs()
    second, third = (GraphViewDataset(graphs, cfg.sampling, 0, c).__getitems__(range(len(graphs))) for c in (1, 2))
    settings = FinetuneConfig(epochs=2, batch_size=16, progress=False)

    def trained(copies):
        return finetune_fold(encoder, cfg, copies, labels, np.arange(45), settings).state_dict()

    def same(a, b):
        return all(torch.equal(a[k], b[k]) for k in a)

    one = trained([views])
    assert same(one, trained([views, views]))
    assert not same(one, trained([views, second]))
    assert not same(trained([views, second]), trained([second, views]))
    assert same(trained([views, second]), trained([views, second, third]))


def test_graph_copies_equal_the_copies_graph_view_dataset_decomposes(toy):
    """Copy c made by flipping copy 0's signs is exactly GraphViewDataset's copy c (another sign draw, same
    edges); canonical-sign views have a single copy."""
    _, cfg, (views,), _ = toy
    graphs, _ = _toy_graphs()
    assert views.pe_sign == "random"
    copies = SignCopies(views, 3, seed=0)  # the toy's views are copy 0 of seed 0
    assert len(copies) == 3 and copies[0] is views
    for c in (1, 2):
        built = GraphViewDataset(graphs, cfg.sampling, 0, c).__getitems__(range(len(graphs)))
        np.testing.assert_array_equal(copies[c].pe, built.pe)
        np.testing.assert_array_equal(copies[c].eigvec, built.eigvec)
    assert not np.array_equal(copies[1].pe, views.pe)
    with pytest.raises(IndexError):
        copies[3]
    assert len(SignCopies(views.replace(pe_sign="canonical"), 3, seed=0)) == 1


def test_the_encoder_is_trained_end_to_end_on_a_copy(toy):
    encoder, cfg, views, labels = toy
    before = {k: v.clone() for k, v in encoder.state_dict().items()}
    model = finetune_fold(encoder, cfg, views, labels, np.arange(45), FinetuneConfig(epochs=2, batch_size=16,
                                                                                     progress=False))
    tuned = dict(model.encoder.named_parameters())
    frozen = [k for k, v in tuned.items() if torch.allclose(before[k], v)]
    assert len(tuned) == 27 and not frozen  # every parameter of every layer (ApplyNodeFunc BNs included) moved
    assert all(torch.equal(v, encoder.state_dict()[k]) for k, v in before.items())  # the original is untouched
    assert model.head.out_features == 3


def test_a_learnable_toy_task_is_learned_well_above_chance(toy):
    encoder, cfg, views, labels = toy
    result = finetune_cv(encoder, cfg, views, labels, "graph", "toy",
                         FinetuneConfig(folds=3, epochs=10, batch_size=16, progress=False))
    assert result.task == "graph_classification_finetuned" and result.metric == "accuracy"
    assert result.scores.shape == (3,) and result.n == 60 and result.std_kind == "sample std over 3 folds"
    assert result.std == pytest.approx(np.std(result.scores, ddof=1))  # as the frozen tasks' ± (sample std)
    assert result.mean >= 0.8  # chance is 1/3


class Killed(Exception):
    """The kill of a run, raised by a fold's training."""


def test_a_fine_tuning_killed_part_way_resumes_at_its_missing_folds_with_the_same_scores(toy, tmp_path, monkeypatch):
    encoder, cfg, views, labels = toy
    settings = FinetuneConfig(folds=4, epochs=2, batch_size=16, progress=False)
    fresh = finetune_cv(encoder, cfg, views, labels, "graph", "toy", settings)
    real, trained, kill_at = finetune_module.finetune_fold, [], [3]

    def counted(*args):
        trained.append(args[-1])  # the fold
        if len(trained) in kill_at:
            raise Killed
        return real(*args)

    monkeypatch.setattr(finetune_module, "finetune_fold", counted)
    root = tmp_path / "folds"

    def tune(model=encoder, ft=settings):
        trained.clear()
        return finetune_cv(model, cfg, views, labels, "graph", "toy", ft, cache=root)

    with pytest.raises(Killed):
        tune()
    (folder,) = root.iterdir()  # one folder per dataset and settings
    assert folder.name.startswith("toy-") and sorted(p.name for p in folder.glob("*.npz")) == ["0.npz", "1.npz"]
    kill_at.clear()
    resumed = tune()
    assert trained == [2, 3]  # only the missing folds were trained
    assert np.array_equal(resumed.scores, fresh.scores) and resumed.resumed_seconds > 0 and fresh.resumed_seconds == 0
    assert not root.exists()  # removed once every fold is in
    other = copy.deepcopy(encoder)
    with torch.no_grad():
        next(other.parameters()).add_(0.5)
    kill_at[:] = [3]
    with pytest.raises(Killed):
        tune()
    kill_at.clear()
    tune(ft=dataclasses.replace(settings, lr=0.001))
    assert trained == [0, 1, 2, 3]  # other settings: their own folder, beside the killed run's
    assert [p.name for p in root.iterdir()] == [folder.name] and len(list(folder.glob("*.npz"))) == 2
    tune(model=other)
    assert trained == [0, 1, 2, 3] and not root.exists()  # another encoder's folds are not reused


def test_fine_tuning_keeps_its_folds_under_the_run_or_fold_cache_until_all_are_in(run, tmp_path, monkeypatch):
    (tmp_path / "checkpoint.pt").write_bytes((run / "checkpoint.pt").read_bytes())
    real, trained = finetune_module.finetune_fold, []

    def killed_at_second(*args):
        trained.append(args[-1])
        if len(trained) == 2:
            raise Killed
        return real(*args)

    monkeypatch.setattr(finetune_module, "finetune_fold", killed_at_second)
    quick = FinetuneConfig(folds=3, epochs=1, view_copies=1, progress=False)
    for settings, root in ((quick, tmp_path / "finetune-folds"),
                           (dataclasses.replace(quick, fold_cache=str(tmp_path / "elsewhere")), tmp_path / "elsewhere")):
        trained.clear()
        with pytest.raises(Killed):
            finetune(tmp_path, "synthetic-graphs", settings)
        assert [p.name for p in root.glob("synthetic-graphs-*/*.npz")] == ["0.npz"]
        finetune(tmp_path, "synthetic-graphs", settings)
        assert trained == [0, 1, 1, 2] and not root.exists()


def test_cli_appends_a_node_classification_row_and_leaves_the_checkpoint_unchanged(run, capsys):
    checkpoint = _sha256(run / "checkpoint.pt")
    results = main(["--load-path", str(run), "--dataset", "synthetic-roles", "--folds", "3", "--max-folds", "1",
                    "--epochs", "1", "--view-copies", "1", "--no-progress"])
    assert _sha256(run / "checkpoint.pt") == checkpoint
    assert "synthetic-roles" in capsys.readouterr().out
    row = _last_row(run)
    assert row["task"] == "node_classification_finetuned" and row["metric"] == "micro_f1"
    assert row["n"] == "540" and row["n_scores"] == "1"  # one test fold of the 1620 nodes
    assert row["std_kind"] == "sample std over the first 1 of 3 folds"
    assert float(row["mean"]) == pytest.approx(results[0].mean, abs=5e-7)  # the CSV keeps 6 decimals


def test_a_foreign_results_csv_is_refused_before_fine_tuning(run, tmp_path, monkeypatch):
    (tmp_path / "checkpoint.pt").write_bytes((run / "checkpoint.pt").read_bytes())
    (tmp_path / "results.csv").write_text("dataset,score\nx,1\n")
    monkeypatch.setattr(finetune_module, "finetune", lambda *args: pytest.fail("fine-tuned despite the log"))
    with pytest.raises(SystemExit, match="exists with header"):
        main(["--load-path", str(tmp_path), "--dataset", "synthetic-graphs", "--no-progress"])
    assert (tmp_path / "results.csv").read_text() == "dataset,score\nx,1\n"


def test_datasets_without_labels_a_missing_checkpoint_and_bad_folds_are_refused(run, tmp_path):
    with pytest.raises(ValueError, match="similarity dataset"):
        finetune(run, "synthetic-similarity", QUIET)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        finetune(tmp_path, "synthetic-graphs", QUIET)
    with pytest.raises(ValueError, match="--max-folds must be <= --folds"):
        finetune(run, "synthetic-graphs", FinetuneConfig(folds=3, max_folds=4, progress=False))


def _gin_cycles(path: Path) -> Path:
    """A GIN-format collection of 8 cycles of 3..10 nodes, labelled by size parity."""
    lines = ["8"]
    for n in range(3, 11):
        lines.append(f"{n} {n % 2}")
        lines += [f"0 2 {(i - 1) % n} {(i + 1) % n}" for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_file_dataset_is_named_by_its_stem_and_an_unlabelled_one_is_refused(run, tmp_path):
    edges = tmp_path / "plain.edgelist"
    edges.write_text("1 2\n2 3\n3 1\n3 4\n")
    with pytest.raises(ValueError, match=r"plain.edgelist: fine-tuning needs every one of its 4 nodes labelled, 0 are"):
        finetune(run, str(edges), QUIET)
    results = main(["--load-path", str(run), "--dataset", str(_gin_cycles(tmp_path / "cycles.txt")), "--folds", "2",
                    "--max-folds", "1", "--epochs", "1", "--view-copies", "1", "--no-progress"])
    assert results[0].dataset == "cycles" and _last_row(run)["dataset"] == "cycles"


def test_the_shell_script_fine_tunes_with_load_path_first(run, tmp_path):
    env = {**os.environ, "CI": "true"}
    out = subprocess.run(
        ["bash", str(ROOT / "scripts/finetune.sh"), str(run), "-1", "synthetic-graphs", "--epochs", "1", "--folds",
         "3", "--max-folds", "1", "--view-copies", "2", "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "synthetic-graphs" in out.stdout and "accuracy" in out.stdout and "±" in out.stdout
    row = _last_row(run)
    assert row["task"] == "graph_classification_finetuned" and row["n"] == "100"  # one test fold of 300 graphs
    usage = subprocess.run(["bash", str(ROOT / "scripts/finetune.sh"), str(run)], env=env, capture_output=True,
                           text=True, timeout=600)
    assert usage.returncode == 2 and "usage" in usage.stderr
