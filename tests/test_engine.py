"""Checkpoints, exact resume, seeded determinism and the pre-train → generate → evaluate chain."""
import dataclasses
import time

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

from gcc_sgcl.config import Config
from gcc_sgcl.presets import PretrainParser, make_config
from gcc_sgcl.engine import pretrain as pretrain_module
from gcc_sgcl.engine.checkpoint import load_checkpoint, save_checkpoint
from gcc_sgcl.engine.inference import embed
from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
from gcc_sgcl.contrastive.builder import lr_factor
from gcc_sgcl.engine.pretrain import pretrain
from gcc_sgcl.sampling.dataset import GraphViewDataset, NodeViewDataset


def _corpus():
    return [dgl.to_bidirected(dgl.from_networkx(g)) for g in
            (nx.barabasi_albert_graph(300, 3, seed=0), nx.watts_strogatz_graph(200, 4, 0.1, seed=1))]


def _cfg(tmp_path, mode="e2e", seed=0, run_name="run", steps=4, **train):
    batch = 8 if mode == "e2e" else 4
    return make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 3, "degree_embedding_size": 4},
        "train": {"mode": mode, "batch_size": batch, "nce_k": 16, "steps": steps, "seed": seed,
                  "save_freq": 2, "log_freq": 1, "output_dir": str(tmp_path), "run_name": run_name, **train},
    })


def _params(run_dir):
    return load_checkpoint(run_dir)["model"]


def test_lr_warmup_and_decay_are_linear():
    factors = [lr_factor(s, 100, 0.1, 0.1) for s in range(100)]
    assert factors[0] == pytest.approx(0.1) and factors[9] == pytest.approx(1.0)
    assert factors[10:90] == [1.0] * 80
    assert factors[90] == pytest.approx(1.0) and factors[99] == pytest.approx(0.1)
    assert np.all(np.diff(factors[:10]) > 0) and np.all(np.diff(factors[90:]) < 0)


def test_decay_over_90_percent_is_gccs_warmup_linear_and_halves_the_mean_rate():
    total = 1000
    gcc = [x / 0.1 if x < 0.1 else max((x - 1) / (0.1 - 1), 0.0) for x in np.arange(total) / total]  # GCC's formula
    ours = [lr_factor(s, total, 0.1, 0.9) for s in range(total)]
    np.testing.assert_allclose(ours[100:], gcc[100:], rtol=1e-12)  # warm-up: ours starts at 1/warmup steps, not 0
    assert np.mean(ours) == pytest.approx(0.5, abs=0.01)  # the README's 0.5 of the peak, against 0.9 by default
    assert np.mean([lr_factor(s, total, 0.1, 0.1) for s in range(total)]) == pytest.approx(0.9, abs=0.01)


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint({"config": {}, "model": {}, "step": 1}, path)

    def crash(obj, f):
        f.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint({"config": {}, "model": {}, "step": 2}, path)
    monkeypatch.undo()
    assert load_checkpoint(path)["step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]


@pytest.mark.parametrize("mode", ["e2e", "moco"])
def test_resume_after_kill_continues_exactly(tmp_path, monkeypatch, mode):
    straight = pretrain(_cfg(tmp_path, mode, run_name="straight"), progress=False, graphs=_corpus())

    original_step = pretrain_module.Trainer.step

    def killed_after_two(self, q, k):
        if self.step_count == 3:  # the checkpoint of step 2 exists; step 3 is lost
            raise KeyboardInterrupt
        return original_step(self, q, k)

    monkeypatch.setattr(pretrain_module.Trainer, "step", killed_after_two)
    cfg = _cfg(tmp_path, mode, run_name="killed")
    with pytest.raises(KeyboardInterrupt):
        pretrain(cfg, progress=False, graphs=_corpus())
    monkeypatch.undo()
    assert load_checkpoint(tmp_path / "killed")["step"] == 2
    resumed = pretrain(cfg, resume=True, progress=False, graphs=_corpus())
    state_a, state_b = load_checkpoint(straight), load_checkpoint(resumed)
    assert state_b["step"] == 4
    for key, value in state_a["model"].items():
        assert torch.equal(value, state_b["model"][key]), key
    if mode == "moco":
        assert torch.equal(state_a["queue"]["keys"], state_b["queue"]["keys"])
        assert torch.equal(state_a["queue"]["ptr"], state_b["queue"]["ptr"])


def test_a_resume_checks_the_corpus_graphs_not_how_the_corpus_is_named(tmp_path, monkeypatch):
    corpus = tmp_path / "corp.edgelist"
    nx.write_edgelist(nx.barabasi_albert_graph(300, 3, seed=0), corpus, data=False)
    original_step = pretrain_module.Trainer.step

    def killed_after_two(self, q, k):
        if self.step_count == 3:
            raise KeyboardInterrupt
        return original_step(self, q, k)

    monkeypatch.setattr(pretrain_module.Trainer, "step", killed_after_two)
    cfg = _cfg(tmp_path, run_name="killed", corpus=[str(corpus)])
    with pytest.raises(KeyboardInterrupt):
        pretrain(cfg, progress=False)
    monkeypatch.undo()
    kept = corpus.read_bytes()
    nx.write_edgelist(nx.cycle_graph(3), corpus, data=False)
    with pytest.raises(ValueError, match="the corpus graphs differ from those .*killed/checkpoint.pt was trained on"):
        pretrain(cfg, resume=True, progress=False)
    assert load_checkpoint(tmp_path / "killed")["step"] == 2
    corpus.write_bytes(kept)
    monkeypatch.chdir(tmp_path)  # the same file named by a relative path
    resumed = pretrain(_cfg(tmp_path, run_name="killed", corpus=["corp.edgelist"]), resume=True, progress=False)
    assert load_checkpoint(resumed)["step"] == 4
    other = tmp_path / "other.edgelist"
    nx.write_edgelist(nx.cycle_graph(5), other, data=False)
    with pytest.raises(ValueError, match="train.corpus: checkpoint"):  # a finished run is not loaded, so named
        pretrain(_cfg(tmp_path, run_name="killed", corpus=[str(other)]), resume=True, progress=False)


def test_a_resumed_run_counts_the_wall_time_of_every_segment(tmp_path, monkeypatch):
    """The checkpoint's train_seconds adds the resumed segment to the killed one's (each step sleeps 0.2 s)."""
    original_step = pretrain_module.Trainer.step

    def slow(self, q, k):
        if self.step_count == 3 and not resumed:  # the checkpoint of step 2 exists; step 3 is lost
            raise KeyboardInterrupt
        time.sleep(0.2)
        return original_step(self, q, k)

    resumed = False
    monkeypatch.setattr(pretrain_module.Trainer, "step", slow)
    cfg = _cfg(tmp_path, run_name="killed")
    with pytest.raises(KeyboardInterrupt):
        pretrain(cfg, progress=False, graphs=_corpus())
    first = load_checkpoint(tmp_path / "killed")["train_seconds"]
    assert first >= 0.4  # the two steps its checkpoint covers
    resumed, start = True, time.time()
    pretrain(cfg, resume=True, progress=False, graphs=_corpus())
    segment = time.time() - start
    total = load_checkpoint(tmp_path / "killed")["train_seconds"]
    assert segment < total <= first + segment and total - first >= 0.4


def test_existing_run_needs_resume_and_matching_config(tmp_path, capsys):
    pretrain(_cfg(tmp_path, steps=2), progress=False, graphs=_corpus())
    with pytest.raises(FileExistsError, match="--resume"):
        pretrain(_cfg(tmp_path, steps=2), progress=False, graphs=_corpus())
    with pytest.raises(ValueError, match="train.lr"):
        pretrain(_cfg(tmp_path, steps=2, lr=0.1), resume=True, progress=False, graphs=_corpus())
    capsys.readouterr()
    pretrain(_cfg(tmp_path, steps=2, save_freq=1), resume=True, progress=False, graphs=_corpus())
    assert "float rounding" not in capsys.readouterr().err
    pretrain(_cfg(tmp_path, steps=2, threads=3), resume=True, progress=False, graphs=_corpus())
    assert "resuming with --threads 0 -> 3: float rounding may differ" in capsys.readouterr().err


def test_flushing_denormals_changes_where_a_run_goes_not_what_it_learns(tmp_path, capsys, monkeypatch):
    """--flush-denormal: a run resumes with it, said as for --threads; its summary says so; a CPU run without it
    that finds denormal weights at a checkpoint says once what they cost and which flag removes them."""
    from gcc_sgcl.engine.pretrain import denormal_parameters

    pretrain(_cfg(tmp_path, steps=1), progress=False, graphs=_corpus())
    capsys.readouterr()
    pretrain(_cfg(tmp_path, steps=1, flush_denormal=True), resume=True, progress=False, graphs=_corpus())
    assert "resuming with --flush-denormal False -> True: float rounding may differ" in capsys.readouterr().err
    model = torch.nn.BatchNorm1d(4)
    with torch.no_grad():
        model.weight[1], model.bias[2] = 1e-39, 1e-30  # one denormal, one tiny but normal
    assert denormal_parameters(model) == 1
    monkeypatch.setattr(pretrain_module, "denormal_parameters", lambda model: 3)
    pretrain(_cfg(tmp_path, steps=3, save_freq=1, run_name="kept"), progress=True, graphs=_corpus())
    assert capsys.readouterr().err.count("[gcc_sgcl] 3 weights are denormal") == 1
    pretrain(_cfg(tmp_path, steps=3, save_freq=1, run_name="flushed", flush_denormal=True), progress=True,
             graphs=_corpus())
    err = capsys.readouterr().err
    assert "denormals flushed to zero" in err and "weights are denormal" not in err
    assert (torch.tensor([1e-39]) * 2).item() > 0  # kept again after the run: evaluation computes as ever


def test_same_seed_gives_identical_embeddings(tmp_path):
    runs = [pretrain(_cfg(tmp_path, seed=s, run_name=f"r{i}"), progress=False, graphs=_corpus())
            for i, s in enumerate((5, 5, 6))]
    graph = _corpus()[0]
    embs = []
    for run in runs:
        model, cfg, _ = load_encoder_checkpoint(run)
        embs.append(embed(model, NodeViewDataset(graph, cfg.sampling, seed=0).__getitems__(range(300)), batch_size=64,
                          progress=False))
    assert embs[0].shape == (300, 16)
    assert np.array_equal(embs[0], embs[1])
    assert not np.allclose(embs[0], embs[2])


def test_unknown_method_lists_valid_methods(capsys):
    with pytest.raises(SystemExit):
        PretrainParser().parse_args(["--method", "nope"])
    assert "argument --method: unknown method 'nope'; valid methods: gcc" in capsys.readouterr().err


def test_graph_embeddings_are_unit_rows(tmp_path):
    run = pretrain(_cfg(tmp_path, steps=2), progress=False, graphs=_corpus())
    model, cfg, _ = load_encoder_checkpoint(run)
    graphs = [dgl.to_bidirected(dgl.from_networkx(nx.cycle_graph(n))) for n in (3, 5, 40)]
    emb = embed(model, GraphViewDataset(graphs, cfg.sampling).__getitems__(range(3)), progress=False)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)


def test_training_curves_are_plotted_from_tensorboard_events(tmp_path):
    from gcc_sgcl.experiments.plot_training import plot_runs, read_scalars

    run = pretrain(_cfg(tmp_path, steps=3), progress=False, graphs=_corpus())
    steps, values = read_scalars(run)["train/loss"]
    assert steps == [1, 2, 3] and all(np.isfinite(values))
    out = plot_runs([run], tmp_path / "curves.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(FileNotFoundError, match="no TensorBoard scalars"):
        read_scalars(tmp_path / "empty")


def test_worker_count_does_not_change_training_nor_a_resume(tmp_path, monkeypatch):
    """The model step's threads are fixed by --threads whatever the loader does (issue: 0 vs 2 workers
    used to end with different parameters), so 0 and 2 workers give bit-identical checkpoints, and a run
    resumed with another worker count, data root and save / log frequency ends where the straight run does."""
    runs = {w: pretrain(_cfg(tmp_path, run_name=f"w{w}", steps=6, num_workers=w, threads=2), progress=False,
                        graphs=_corpus()) for w in (0, 2)}
    a, b = _params(runs[0]), _params(runs[2])
    assert all(torch.equal(a[key], b[key]) for key in a)

    original_step = pretrain_module.Trainer.step

    def killed_after_four(self, q, k):
        if self.step_count == 5:  # the checkpoint of step 4 exists
            raise KeyboardInterrupt
        return original_step(self, q, k)

    monkeypatch.setattr(pretrain_module.Trainer, "step", killed_after_four)
    with pytest.raises(KeyboardInterrupt):
        pretrain(_cfg(tmp_path, run_name="mixed", steps=6, num_workers=0, threads=2), progress=False, graphs=_corpus())
    monkeypatch.undo()
    resumed = pretrain(_cfg(tmp_path, run_name="mixed", steps=6, num_workers=2, threads=2, save_freq=3, log_freq=2,
                            data_dir=str(tmp_path / "moved")), resume=True, progress=False, graphs=_corpus())
    c = _params(resumed)
    assert all(torch.equal(a[key], c[key]) for key in a)


def test_pe_sign_is_recorded_and_old_checkpoints_keep_canonical_signs(tmp_path):
    cfg = _cfg(tmp_path, steps=1)
    assert cfg.sampling.pe_sign == "random"  # GCC's behaviour (ARPACK's random start vector) by default
    run = pretrain(cfg, progress=False, graphs=_corpus())
    assert load_checkpoint(run)["config"]["sampling"]["pe_sign"] == "random"
    old = cfg.to_dict()
    del old["sampling"]["pe_sign"]  # a checkpoint written before the field existed
    assert Config.from_dict(old).sampling.pe_sign == "canonical"
    with pytest.raises(ValueError, match="--pe-sign"):
        make_config("gcc", {"sampling": {"pe_sign": "sometimes"}})


def test_pretraining_uses_every_core_by_default_and_splits_them_among_a_nodes_processes(monkeypatch):
    from types import SimpleNamespace

    from gcc_sgcl.config import Config
    from gcc_sgcl.engine.pretrain import training_plan

    cfg = Config()
    for cores, model, workers in ((1, 1, 0), (2, 1, 1), (4, 2, 2), (16, 8, 8)):
        plan = training_plan(cfg, cores=cores)
        assert (plan.model, plan.builders, plan.chosen) == (model, workers, "auto")
        assert plan.model + plan.builders == max(cores, 1)  # no core idle, none oversubscribed
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")  # torchrun: two processes share this node's 16 cores
    plan = training_plan(cfg, SimpleNamespace(world_size=4), cores=16)
    assert (plan.cores, plan.model, plan.builders) == (8, 4, 4)
    given = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, num_workers=3))
    assert training_plan(given, cores=2).builders == 3 and training_plan(given, cores=2).oversubscribed


def test_steps_0_is_refused_on_the_command_line_with_what_to_do_instead(tmp_path):
    with pytest.raises(SystemExit) as info:
        pretrain_module.main(["--method", "gcc", "--steps", "0", "--output-dir", str(tmp_path)])
    message = str(info.value.code)
    assert message.startswith("error: --steps 0 trains nothing") and "\n" not in message
    assert "python -m gcc_sgcl.experiments run --methods gcc --steps 0" in message
    assert list(tmp_path.iterdir()) == []  # no run folder, no untrained checkpoint


def test_a_0_step_run_through_the_api_is_the_untrained_random_init_encoder(tmp_path):
    run = pretrain(_cfg(tmp_path, steps=0), progress=False, graphs=_corpus())
    assert load_checkpoint(run)["step"] == 0


def test_thread_and_worker_counts_far_beyond_the_cores_are_refused_unless_asked_for(monkeypatch):
    from gcc_sgcl.engine.threads import OVERSUBSCRIBE_ENV, plan_threads

    with pytest.raises(ValueError, match=r"threads \(1000000\) \+ workers \(0\) exceed 8x the 2 cores"):
        plan_threads(model=1_000_000, cores=2)
    with pytest.raises(ValueError, match=r"workers \(1000\) exceed 8x the 2 cores .*GCC_SGCL_OVERSUBSCRIBE=1"):
        plan_threads(builders=1000, cores=2)
    assert plan_threads(builders=15, cores=2).oversubscribed  # a few beyond the cores: allowed, and said
    monkeypatch.setenv(OVERSUBSCRIBE_ENV, "1")
    assert plan_threads(builders=1000, cores=2).builders == 1000
