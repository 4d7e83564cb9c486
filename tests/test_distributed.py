"""Two gloo processes train like one process with the same global batch, stay in lock-step and resume exactly."""
import os
import socket
import time

import pytest
import torch
import torch.multiprocessing as mp
from torch import nn

from gcc_sgcl.presets import make_config
from gcc_sgcl.contrastive import e2e_logits
from gcc_sgcl.data import load_pretrain_corpus
from gcc_sgcl.engine import pretrain as pretrain_module
from gcc_sgcl.engine.checkpoint import load_checkpoint
from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
from gcc_sgcl.engine.distributed import (
    GlobalBatchNorm,
    cleanup_distributed,
    init_distributed,
    launched_by_torchrun,
    rank_batches,
)
from gcc_sgcl.contrastive.builder import dropout_seed
from gcc_sgcl.engine.pretrain import pretrain

WORLD = 2
SPAWN_TIMEOUT_S = 120


def _cfg(out, mode, run_name, steps, dropout=0.0, save_freq=100):
    # Adam's eps well above rounding noise: the Linear biases feeding batch norm have an exact gradient of
    # zero, and with eps = 1e-8 their first steps are ±lr·sign(noise), which would differ between runs.
    return make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 3, "degree_embedding_size": 4, "dropout": dropout},
        "train": {"mode": mode, "batch_size": 8, "nce_k": 16, "steps": steps, "save_freq": save_freq,
                  "log_freq": 1, "output_dir": str(out), "run_name": run_name, "eps": 1e-4},
    })


# (run name, mode, steps, dropout): the runs every rank trains; "killed" stops at step 3 and is resumed
RUNS = [("e2e", "e2e", 2, 0.0), ("moco", "moco", 3, 0.0), ("straight", "e2e", 4, 0.5)]


class _KeepLast(pretrain_module.Trainer):
    """The trainer of the latest run (so each rank can write its own final state), optionally killed."""

    last = None
    kill_at = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _KeepLast.last = self

    def step(self, graph_q, graph_k):
        if self.step_count == _KeepLast.kill_at:
            raise KeyboardInterrupt
        return super().step(graph_q, graph_k)


def _worker(rank, port, out, graphs):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist = init_distributed("cpu")
    pretrain_module.Trainer = _KeepLast
    try:
        for name, mode, steps, dropout in RUNS:
            pretrain(_cfg(out, mode, name, steps, dropout, save_freq=2), progress=False, graphs=graphs, dist=dist)
            torch.save(_KeepLast.last.state_dict(), out / f"{name}.rank{rank}.pt")
        killed = _cfg(out, "e2e", "killed", 4, 0.5, save_freq=2)
        _KeepLast.kill_at = 3  # the checkpoint of step 2 exists; step 3 is lost
        with pytest.raises(KeyboardInterrupt):
            pretrain(killed, progress=False, graphs=graphs, dist=dist)
        _KeepLast.kill_at = None
        pretrain(killed, resume=True, progress=False, graphs=graphs, dist=dist)
        torch.save(_KeepLast.last.state_dict(), out / f"killed.rank{rank}.pt")
    finally:
        cleanup_distributed()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Output folder of the two-process runs and of the single-process references (trained here)."""
    out = tmp_path_factory.mktemp("ddp")
    graphs = load_pretrain_corpus(["synthetic"])
    single = out / "single"
    for name, mode, steps, dropout in RUNS[:2]:
        pretrain(_cfg(single, mode, name, steps, dropout), progress=False, graphs=graphs)
    # forked, the ranks start with everything imported (spawning them costs ~15 s of imports each)
    procs = mp.start_processes(_worker, args=(_free_port(), out, graphs), nprocs=WORLD, join=False,
                               start_method="fork")
    deadline = time.monotonic() + SPAWN_TIMEOUT_S
    try:
        while not procs.join(timeout=1):
            if time.monotonic() > deadline:
                pytest.fail(f"two-process training did not finish in {SPAWN_TIMEOUT_S} s")
    finally:
        for p in procs.processes:
            if p.is_alive():
                p.kill()
    return out


def _rank_states(out, name):
    return [torch.load(out / f"{name}.rank{r}.pt", weights_only=True) for r in range(WORLD)]


def _tensors(state):
    """Model, key model and queue tensors of a trainer state, by qualified name."""
    return {f"{part}.{k}": v for part in ("model", "key_model", "queue") for k, v in (state[part] or {}).items()}


@pytest.mark.parametrize("name", ["e2e", "moco", "straight", "killed"])
def test_ranks_end_with_identical_weights_buffers_and_queue(runs, name):
    states = _rank_states(runs, name)
    first, second = (_tensors(s) for s in states)
    assert first.keys() == second.keys() and len(first) > 10
    if name == "moco":
        assert "queue.keys" in first and "key_model.gnn.norms.0.running_mean" in first
    for key, value in first.items():
        assert torch.equal(value, second[key]), key
    steps = {run: steps for run, _, steps, _ in RUNS}.get(name, 4)  # "killed" resumes to the 4 of "straight"
    assert states[0]["step"] == states[1]["step"] == steps


@pytest.mark.parametrize("name", ["e2e", "moco"])
def test_two_processes_match_one_process_with_the_global_batch(runs, name):
    ddp = load_checkpoint(runs / name)
    single = load_checkpoint(runs / "single" / name)
    for key, value in _tensors(single).items():
        torch.testing.assert_close(_tensors(ddp)[key], value, rtol=1e-4, atol=1e-5, msg=key)
    # Adam's first moment is a running mean of the (clipped) gradients: the gradients agree, not just the steps
    for pid, moments in single["optimizer"]["state"].items():
        torch.testing.assert_close(ddp["optimizer"]["state"][pid]["exp_avg"], moments["exp_avg"],
                                   rtol=1e-3, atol=1e-6, msg=f"parameter {pid}")


def test_moco_queue_holds_the_keys_of_both_ranks_in_global_order(runs):
    ddp, single = load_checkpoint(runs / "moco")["queue"], load_checkpoint(runs / "single" / "moco")["queue"]
    assert int(ddp["ptr"]) == int(single["ptr"]) == (3 * 8) % 16
    torch.testing.assert_close(ddp["keys"], single["keys"], rtol=1e-4, atol=1e-5)


def test_killed_run_resumes_exactly_across_processes(runs):
    straight, resumed = load_checkpoint(runs / "straight"), load_checkpoint(runs / "killed")
    assert straight["step"] == resumed["step"] == 4
    for key, value in straight["model"].items():
        assert torch.equal(value, resumed["model"][key]), key


def test_only_rank_zero_writes_and_the_checkpoint_loads_as_a_plain_encoder(runs):
    run = runs / "e2e"
    assert sorted(p.name for p in run.iterdir() if not p.name.startswith("events.")) == ["checkpoint.pt", "config.json"]
    assert len(list(run.glob("events.out.tfevents.*"))) == 1
    model, _, _ = load_encoder_checkpoint(run)
    assert {type(m) for m in model.modules()} & {nn.BatchNorm1d, GlobalBatchNorm} == {nn.BatchNorm1d}


def test_rank_slices_partition_each_global_batch_in_order():
    per_rank = [rank_batches(1, 4, 12, rank, 3) for rank in range(3)]
    for step in range(3):
        joined = [i for rank in range(3) for i in per_rank[rank][step]]
        assert joined == list(range((step + 1) * 12, (step + 2) * 12))
    assert rank_batches(2, 5, 8) == [range(16, 24), range(24, 32), range(32, 40)]


def test_global_batch_not_divisible_by_processes_is_rejected():
    with pytest.raises(ValueError, match="--batch-size 10 .* divisible by the number of processes 4"):
        rank_batches(0, 3, 10, 0, 4)


def test_e2e_positives_sit_at_the_local_slice_of_the_gathered_keys():
    q, k = torch.randn(3, 4), torch.randn(9, 4)
    logits, target = e2e_logits(q, k, 0.5, positive_offset=6)
    assert logits.shape == (3, 9) and target.tolist() == [6, 7, 8]
    with pytest.raises(ValueError, match="positive_offset 7"):
        e2e_logits(q, k, 0.5, positive_offset=7)


def test_dropout_seed_is_unchanged_for_one_process_and_distinct_per_rank():
    assert dropout_seed(3, 17) == 3 * 1_000_003 + 17
    seeds = {dropout_seed(s, step, r) for s in range(3) for step in range(50) for r in range(4)}
    assert len(seeds) == 3 * 50 * 4


def test_global_batch_norm_shares_the_converted_parameters_and_evaluates_like_batch_norm():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    with torch.no_grad():
        model[1].running_mean.fill_(0.5)
    weight = model[1].weight
    converted = GlobalBatchNorm.convert(model)
    assert type(converted[1]) is GlobalBatchNorm and converted[1].weight is weight
    x = torch.randn(5, 3)
    reference = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    reference.load_state_dict(converted.state_dict())
    torch.testing.assert_close(converted.eval()(x), reference.eval()(x))


def test_partial_torchrun_environment_is_an_error(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert not launched_by_torchrun()
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(RuntimeError, match=r"\['RANK'\] set but \['LOCAL_RANK', 'WORLD_SIZE'\] missing"):
        launched_by_torchrun()
