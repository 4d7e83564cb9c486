"""The measured steps of ``scripts/gpu_check.sh``: the model step on the device against the CPU, run-to-run
equality, seconds per step split into loader wait and model step, streamed embedding with the model on the device
against the CPU on the same views, and ``eigh`` timings.

    python -m gcc_sgcl.bench.gpu_check --rows rows.tsv --device cuda:0 [--dry-run] …   appends result rows
    python -m gcc_sgcl.bench.gpu_check --table rows.tsv                                prints them, exit 1 on a failure

With ``--dry-run`` (no GPU) the device is the CPU and the candidate is the plain-torch path against DGL's, so every
step but CUDA itself is exercised; the plain path is then held to bit equality. Rows are tab-separated
``step, status (ok / FAILED / skipped), result, detail``; the shell script appends its own (install, pretrain).
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from gcc_sgcl.cli import user_errors
from gcc_sgcl.contrastive import e2e_logits, info_nce
from gcc_sgcl.engine.pretrain import Trainer, build_pipeline
from gcc_sgcl.engine.stream import ViewSource, stream_plan, streamed_rows
from gcc_sgcl.engine.threads import plan_threads
from gcc_sgcl.fileio import open_nofollow, refuse_link
from gcc_sgcl.models import build_encoder, model_path, to_model_input
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.dataset import (
    NodeViewDataset,
    PretrainPairDataset,
    collate_pairs,
    loader_batches,
    sampling_threads,
    worker_init,
)
from gcc_sgcl.settings import NON_NEGATIVE, OneLineParser, add_arguments, at_least, from_args, setting

SNAP = ("ca-grqc", "ca-hepth", "ca-hepph", "ca-condmat", "email-enron")
# CUDA against the CPU, dropout off: unit-norm embeddings and the loss to 1e-4, each gradient tensor to 1e-3 of
# its largest entry (float32 sums in another order); the plain path on the CPU must match DGL's exactly
CUDA_TOLERANCE = {"embeddings": 1e-4, "loss": 1e-4, "gradients": 1e-3}
EXACT = {"embeddings": 0.0, "loss": 0.0, "gradients": 0.0}


@dataclass
class Row:
    """One line of the table."""

    step: str
    status: str
    result: str
    detail: str = ""

    def tsv(self) -> str:
        return "\t".join(x.replace("\t", " ").replace("\n", " ") for x in (self.step, self.status, self.result,
                                                                             self.detail))


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _config(batch_size: int, device: str, **train):
    """sgcl at ``batch_size`` on ``device``, dropout off (so the device and the CPU draw no different noise)."""
    return make_config("sgcl", {"model": {"dropout": 0.0},
                                "train": {"batch_size": batch_size, "device": device, "threads": 1, **train}})


def _dataset(graphs, cfg, batches: int) -> PretrainPairDataset:
    pipeline, embeddings = build_pipeline(cfg, graphs, progress=False)
    return PretrainPairDataset(graphs, cfg.sampling, cfg.train.seed, batches * cfg.train.batch_size, pipeline,
                               embeddings)


def build_batches(graphs, cfg, batches: int) -> list[tuple]:
    """The first ``batches`` (query, key) DGLGraph batches of ``cfg``'s run, built in this process."""
    dataset = _dataset(graphs, cfg, batches)
    b = cfg.train.batch_size
    with sampling_threads():
        return [collate_pairs(dataset.__getitems__(range(s * b, (s + 1) * b))) for s in range(batches)]


def _forward_backward(model, q, k, temperature: float, device: torch.device):
    """Embeddings, E2E loss and gradients of one train-mode pass, and its seconds."""
    model.zero_grad(set_to_none=True)
    _sync(device)
    start = time.perf_counter()
    emb_q, emb_k = model(q), model(k)
    loss, _ = info_nce(*e2e_logits(emb_q, emb_k, temperature))
    loss.backward()
    _sync(device)
    seconds = time.perf_counter() - start
    return emb_q.detach().cpu(), loss.detach().cpu(), {n: p.grad.cpu() for n, p in model.named_parameters()}, seconds


def differences(ref, cand) -> dict[str, float]:
    """Largest difference of embeddings and loss (absolute) and of gradients (relative to each tensor's largest
    entry) between two :func:`_forward_backward` results."""
    grads = [((cand[2][n] - g).abs().max() / g.abs().max().clamp(min=1e-30)).item() for n, g in ref[2].items()]
    return {"embeddings": (cand[0] - ref[0]).abs().max().item(), "loss": (cand[1] - ref[1]).abs().item(),
            "gradients": max(grads)}


def check_model_step(batches, cfg, device: str, path: str, tolerance: dict[str, float]) -> Row:
    """The model step on ``device`` by ``path`` against DGL on the CPU, on the same batches and weights."""
    dev = torch.device(device)
    torch.manual_seed(cfg.train.seed)
    reference = build_encoder(cfg).train()
    candidate = copy.deepcopy(reference).to(dev).train()
    worst = dict.fromkeys(tolerance, 0.0)
    seconds = {"ref": 0.0, "cand": 0.0}
    for q, k in batches:
        ref = _forward_backward(reference, q, k, cfg.train.nce_t, torch.device("cpu"))
        cand = _forward_backward(candidate, to_model_input(q, dev, path), to_model_input(k, dev, path),
                                 cfg.train.nce_t, dev)
        seconds["ref"] += ref[3]
        seconds["cand"] += cand[3]
        worst = {n: max(worst[n], d) for n, d in differences(ref, cand).items()}
    ok = all(worst[n] <= tolerance[n] for n in tolerance)
    stated = "bit-equal required" if not any(tolerance.values()) else ", ".join(
        f"{n} <= {t:g}" for n, t in tolerance.items())
    return Row(f"model step {device} ({path}) vs cpu (dgl)", "ok" if ok else "FAILED",
               ", ".join(f"{n} {d:.1e}" for n, d in worst.items()),
               f"{stated}; {len(batches)} batches of {cfg.train.batch_size}; fwd+bwd {seconds['cand']:.2f} s vs "
               f"{seconds['ref']:.2f} s (ratio {seconds['cand'] / seconds['ref']:.1f})")


def check_run_to_run(batches, cfg, device: str, path: str) -> Row:
    """Two trainings on ``device`` from the same seed, same batches, deterministic algorithms on: equal bits."""
    dev = torch.device(device)
    torch.use_deterministic_algorithms(True)
    try:
        runs = []
        for _ in range(2):
            trainer = Trainer(cfg)
            losses = [trainer.step(to_model_input(q, dev, path), to_model_input(k, dev, path))["loss"]
                      for q, k in batches]
            runs.append((losses, {n: p.detach().cpu() for n, p in trainer.model.named_parameters()}))
    finally:
        torch.use_deterministic_algorithms(False)
    (losses_a, params_a), (losses_b, params_b) = runs
    same = losses_a == losses_b and all(torch.equal(p, params_b[n]) for n, p in params_a.items())
    return Row(f"run-to-run {device} ({path})", "ok" if same else "FAILED",
               "bit-identical" if same else "runs differ",
               f"{len(batches)} steps of {cfg.train.batch_size}, torch.use_deterministic_algorithms(True); "
               f"losses {', '.join(f'{x:.4f}' for x in losses_a)}")


def check_step_split(graphs, batch_size: int, steps: int, workers: int, device: str, path: str) -> Row:
    """Seconds per step of the DataLoader-fed loop, split into the wait for the next batch and the model step
    (input conversion and transfer included); the first step (worker start-up) is left out."""
    dev = torch.device(device)
    cfg = _config(batch_size, device, num_workers=workers, steps=steps + 1)
    dataset = _dataset(graphs, cfg, steps + 1)
    loader = torch.utils.data.DataLoader(
        dataset, batch_sampler=[range(s * batch_size, (s + 1) * batch_size) for s in range(steps + 1)],
        collate_fn=collate_pairs, num_workers=workers, worker_init_fn=worker_init,
    )
    trainer = Trainer(cfg)
    wait = model = 0.0
    batches = loader_batches(loader)
    for s in range(steps + 1):
        start = time.perf_counter()
        q, k = next(batches)
        waited = time.perf_counter() - start
        trainer.step(to_model_input(q, dev, path), to_model_input(k, dev, path))
        _sync(dev)
        if s:
            wait += waited
            model += time.perf_counter() - start - waited
    return Row(f"s/step batch {batch_size} ({device}, {path})", "ok",
               f"{(wait + model) / steps:.3f} s/step = wait {wait / steps:.3f} + model {model / steps:.3f}",
               f"{steps} steps after the first, {workers} DataLoader workers, {torch.get_num_threads()} model thread(s)")


def check_streamed_embedding(graph, device: str, path: str, nodes: int, copies: int,
                             tolerance: float) -> Row:
    """Streamed embedding (:func:`~gcc_sgcl.engine.stream.streamed_rows`) of ``nodes`` nodes of ``graph`` at
    ``copies`` views each, the model on ``device`` by ``path`` against DGL's one-thread CPU model, on the same views
    (a view is a function of the seed, node and copy): rows to ``tolerance``, and each run's seconds."""
    cfg = _config(256, "cpu")
    torch.manual_seed(cfg.train.seed)
    reference = build_encoder(cfg).eval()
    candidate = copy.deepcopy(reference).to(torch.device(device)).eval()
    source = ViewSource(NodeViewDataset(graph, cfg.sampling, cfg.train.seed),
                        np.arange(min(nodes, graph.num_nodes())), copies)
    runs = {}
    for name, model, plan, model_path_ in (("cpu", reference, plan_threads(1), "dgl"),
                                           (device, candidate, stream_plan(candidate, [source], 1 if device == "cpu"
                                                                           else None), path)):
        _sync(torch.device(device))
        start = time.perf_counter()
        rows = streamed_rows(model, [source], 256, plan, progress=False, path=model_path_)
        _sync(torch.device(device))
        runs[name] = (rows, time.perf_counter() - start, plan)
    (ref, ref_s, ref_plan), (cand, cand_s, cand_plan) = runs["cpu"], runs[device]
    worst = float(np.abs(cand - ref).max())
    views = len(source) * copies
    return Row(f"streamed embedding {device} ({path}) vs cpu (dgl)", "ok" if worst <= tolerance else "FAILED",
               f"rows max diff {worst:.1e} (<= {tolerance:g}); {views / cand_s:.0f} vs {views / ref_s:.0f} views/s",
               f"{len(source)} nodes x {copies} views of {graph.num_nodes()}-node graph; {cand_s:.1f} s "
               f"({cand_plan.describe()}) vs {ref_s:.1f} s ({ref_plan.describe()})")


def check_eigh(sizes: Sequence[int], count: int, cuda: str | None) -> list[Row]:
    """``torch.linalg.eigh`` of ``count`` seeded symmetric float64 matrices per size: one CPU thread (a sampling
    worker's setting) against the CUDA device when there is one."""
    gen = torch.Generator().manual_seed(0)
    rows = []
    threads = torch.get_num_threads()
    for n in sizes:
        a = torch.randn(count, n, n, dtype=torch.float64, generator=gen)
        a = a + a.mT
        torch.set_num_threads(1)
        torch.linalg.eigh(a[:1])  # warm-up: LAPACK's first call initialises it
        start = time.perf_counter()
        torch.linalg.eigh(a)
        cpu_ms = (time.perf_counter() - start) / count * 1e3
        torch.set_num_threads(threads)
        result = f"cpu {cpu_ms:.3f} ms/matrix"
        if cuda is not None:
            dev = torch.device(cuda)
            on_gpu = a.to(dev)
            torch.linalg.eigh(on_gpu)  # warm-up: solver handles and workspace
            _sync(dev)
            start = time.perf_counter()
            torch.linalg.eigh(on_gpu)
            _sync(dev)
            gpu_ms = (time.perf_counter() - start) / count * 1e3
            result += f", cuda {gpu_ms:.3f} ms/matrix (cpu/cuda {cpu_ms / gpu_ms:.1f})"
        rows.append(Row(f"eigh n={n}", "ok", result, f"{count} matrices, batched call"))
    return rows


def _failure(name: str, error: Exception) -> Row:
    """A FAILED row naming the exception (its traceback goes to stderr)."""
    traceback.print_exception(error, file=sys.stderr)
    first = str(error).splitlines()[0] if str(error) else ""
    return Row(name, "FAILED", f"{type(error).__name__}: {first}")


def _guarded(name: str, check: Callable[[], Row | list[Row]]) -> list[Row]:
    """The rows of ``check``, or one FAILED row: a failed check is a row of the report, the others still run."""
    try:
        rows = check()
    except Exception as error:  # noqa: BLE001
        return [_failure(name, error)]
    return rows if isinstance(rows, list) else [rows]


def run_checks(a: GpuCheckConfig) -> list[Row]:
    """Every Python check, each guarded, on the SNAP corpus."""
    from gcc_sgcl.data import load_pretrain_corpus

    if a.dry_run:
        device, path, tolerance, cuda = "cpu", "plain", EXACT, None
    else:
        device, cuda = a.device, a.device
        path, tolerance = model_path(device), CUDA_TOLERANCE
        torch.backends.cuda.matmul.allow_tf32 = False  # the comparison is with float32 on the CPU
        torch.backends.cudnn.allow_tf32 = False
    torch.set_num_threads(a.threads)
    graphs = load_pretrain_corpus(a.corpus, a.data_dir)
    cfg = _config(a.compare_batch, device)
    rows = []
    try:
        batches = build_batches(graphs, cfg, a.compare_batches)
    except Exception as error:  # noqa: BLE001
        rows.append(_failure("comparison batches", error))
    else:
        rows += _guarded("model step", lambda: check_model_step(batches, cfg, device, path, tolerance))
        rows += _guarded("run-to-run", lambda: check_run_to_run(batches, cfg, device, path))
    for b in a.split_batches:
        rows += _guarded(f"s/step batch {b}", lambda b=b: check_step_split(graphs, b, a.split_steps, a.workers,
                                                                           device, path))
    rows += _guarded("streamed embedding", lambda: check_streamed_embedding(
        graphs[0], device, path, a.embed_nodes, a.embed_copies, tolerance["embeddings"]))
    rows += _guarded("eigh", lambda: check_eigh(a.eigh_sizes, a.eigh_count, cuda))
    return rows


def read_rows(path: Path) -> list[Row]:
    return [Row(*(line.split("\t") + [""] * 4)[:4]) for line in path.read_text().splitlines() if line.strip()]


def format_table(rows: Sequence[Row]) -> str:
    """The rows as one Markdown table, then which steps failed."""
    lines = ["| step | status | result | detail |", "|---|---|---|---|"]
    lines += [f"| {r.step} | {r.status} | {r.result} | {r.detail} |" for r in rows]
    failed = [r.step for r in rows if r.status == "FAILED"]
    lines.append(f"\nFAILED: {', '.join(failed)}" if failed else f"\nall {len(rows)} rows ok")
    return "\n".join(lines)


@dataclass
class GpuCheckConfig:
    """The flags of ``python -m gcc_sgcl.bench.gpu_check`` (``scripts/gpu_check.sh`` sets them)."""

    rows: str | None = setting(None, "append the rows of the checks to this file")
    table: str | None = setting(None, "print the rows of this file as one table and exit (status 1 when a row FAILED)")
    device: str = setting("cuda:0", "the CUDA device (not used with --dry-run)")
    dry_run: bool = setting(False, "no GPU: the plain-torch path on the CPU against DGL's, held to bit equality")
    corpus: list[str] = setting(list(SNAP), "pre-training graphs the batches are drawn from")
    data_dir: str | None = setting(None, "data root (default $GCC_SGCL_DATA, else ./data)")
    threads: int = setting(1, "torch threads of the model step", valid=at_least(1))
    compare_batch: int = setting(256, "pairs per batch of the model-step comparison", valid=at_least(2))
    compare_batches: int = setting(3, "batches compared (and steps of each run-to-run training)", valid=at_least(1))
    split_batches: list[int] = setting([256, 1024], "batch sizes of the s/step split", valid=at_least(2))
    split_steps: int = setting(10, "steps timed per batch size, after one untimed", valid=at_least(1))
    workers: int = setting(12, "DataLoader workers of the s/step split", valid=NON_NEGATIVE)
    embed_nodes: int = setting(8192, "nodes of the first corpus graph embedded by the streamed-embedding step",
                               valid=at_least(1))
    embed_copies: int = setting(4, "views per node of the streamed-embedding step", valid=at_least(1))
    eigh_sizes: list[int] = setting([16, 32, 33, 64, 96, 128, 256, 512], "matrix sizes of the eigh timing",
                                    valid=at_least(1))
    eigh_count: int = setting(64, "matrices per size", valid=at_least(1))


def command_line() -> OneLineParser:
    """The parser of :class:`GpuCheckConfig`."""
    parser = OneLineParser(prog="python -m gcc_sgcl.bench.gpu_check", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, GpuCheckConfig)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Append the checks' rows to ``--rows``, or print ``--table``."""
    a = from_args(GpuCheckConfig, command_line().parse_args(argv))
    if a.table:
        text = format_table(read_rows(Path(a.table)))
        print(text)
        sys.exit(1 if "\nFAILED: " in text else 0)
    if not a.rows:
        sys.exit("give --rows FILE (append the checks' rows) or --table FILE (print them)")
    with user_errors():  # a symbolic link at --rows: refused before the checks run, and when appending
        refuse_link(a.rows)
    rows = run_checks(a)
    with user_errors():
        fd = open_nofollow(a.rows, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with open(fd, "a") as f:
        f.writelines(r.tsv() + "\n" for r in rows)


if __name__ == "__main__":
    main()
