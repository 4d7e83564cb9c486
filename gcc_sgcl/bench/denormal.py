"""Denormal weights against the model step: seconds per step of a trained encoder and of a fresh one, with
denormal floats kept (the default) and flushed to zero (``--flush-denormal``), on the same pre-built batches.

Weight decay drives the weights of channels that no longer get a gradient (their linear rows, batch-norm scales and
shifts) towards 0, through the denormal range (below 1.2e-38) where x86 arithmetic takes a slow path; a fresh model
has none, so the difference between the two encoders' rows is what the denormals cost.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import dgl
import torch

from gcc_sgcl.config import Config
from gcc_sgcl.engine.checkpoint import CHECKPOINT_NAME, load_checkpoint
from gcc_sgcl.bench.e2e import model_step_seconds, prebuilt_batches
from gcc_sgcl.engine.pretrain import Trainer, denormal_parameters, flushed_denormals


@dataclass
class DenormalResult:
    """Seconds per model step with denormals kept and flushed, and the model's denormal parameters."""

    model: str
    denormal: int
    kept_s: float
    flushed_s: float


def _seconds_per_step(cfg: Config, weights: dict | None, batches: list, flush: bool) -> tuple[float, int]:
    trainer = Trainer(cfg)
    if weights is not None:
        trainer.model.load_state_dict(weights)
    tiny = denormal_parameters(trainer.model)
    with flushed_denormals(flush):
        return model_step_seconds(trainer, batches), tiny


def measure_denormal(graphs: Sequence[dgl.DGLGraph], checkpoint: str | Path, batch_size: int = 256,
                     steps: int = 10, seed: int = 0) -> list[DenormalResult]:
    """The trained encoder of ``checkpoint`` (a run folder or its ``checkpoint.pt``; its configuration, at
    ``batch_size`` and one model thread) and a fresh one of the same configuration, each timed on ``steps`` batches
    with denormals kept and flushed."""
    path = Path(checkpoint)
    state = load_checkpoint(path / CHECKPOINT_NAME if path.is_dir() else path)
    cfg = Config.from_dict(state["config"])
    cfg.train.batch_size, cfg.train.num_workers, cfg.train.device = batch_size, 0, "cpu"
    batches = prebuilt_batches(cfg, graphs, batch_size, steps, seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        results = []
        for name, weights in ((f"trained ({state['step']} steps)", state["model"]), ("fresh", None)):
            kept, tiny = _seconds_per_step(cfg, weights, batches, False)
            flushed, _ = _seconds_per_step(cfg, weights, batches, True)
            results.append(DenormalResult(name, tiny, kept, flushed))
        return results
    finally:
        torch.set_num_threads(threads)


def format_denormal(results: Sequence[DenormalResult], batch_size: int, steps: int) -> str:
    """Markdown table: s/step kept and flushed, their ratio, and each row's kept time against the fresh model's."""
    fresh = results[-1]
    lines = [f"batch {batch_size}, one model thread, {steps} pre-built batches (faster of 2 passes)",
             "| encoder | denormal weights | kept s/step | flushed s/step | kept / flushed | kept / fresh kept |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r.model} | {r.denormal} | {r.kept_s:.3f} | {r.flushed_s:.3f} | {r.kept_s / r.flushed_s:.2f} | "
              f"{r.kept_s / fresh.kept_s:.2f} |" for r in results]
    return "\n".join(lines)
