"""End to end: seconds per step of the real pre-training loop against the model step alone, in one run.

(a) ``pretrain()`` as ``pretrain.sh`` runs it (DataLoader workers building batches while the model trains),
per step from two runs of different lengths, so set-up (corpus index, global embeddings, worker start-up)
cancels out; (b) :class:`~gcc_sgcl.engine.pretrain.Trainer` steps on batches built beforehand, with the same
threads (the faster of two passes). If the data side were hidden behind the model, (a) would equal (b).
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import dgl
import torch

from gcc_sgcl.engine.pretrain import Trainer, build_pipeline, pretrain, training_plan
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.dataset import PretrainPairDataset, collate_pairs, sampling_threads


@dataclass
class E2EResult:
    """Seconds per step of the full loop and of the model step alone, and the mean view size."""

    full_s: float
    model_s: float
    nodes: float


def _config(method: str, batch_size: int, steps: int, workers: int, seed: int, out: Path, name: str):
    return make_config(method, {"train": {"batch_size": batch_size, "steps": steps, "num_workers": workers,
                                          "seed": seed, "output_dir": str(out), "run_name": name,
                                          "save_freq": steps, "log_freq": steps}})


def measure_e2e(graphs: Sequence[dgl.DGLGraph], methods: Sequence[str], batch_size: int = 256, steps: int = 40,
                workers: int = 2, seed: int = 0) -> dict[str, E2EResult]:
    """``{method: E2EResult}``: (a) from runs of ``steps`` and ``2 * steps`` steps, (b) on ``steps`` batches."""
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for method in methods:
            wall = {}
            for n in (steps, 2 * steps):
                start = time.perf_counter()
                pretrain(_config(method, batch_size, n, workers, seed, Path(tmp), f"{method}-{n}"), progress=False,
                         graphs=list(graphs))
                wall[n] = time.perf_counter() - start
            cfg = _config(method, batch_size, steps, workers, seed, Path(tmp), f"{method}-model")
            batches = prebuilt_batches(cfg, graphs, batch_size, steps, seed)
            torch.set_num_threads(training_plan(cfg).model)
            model_s = model_step_seconds(Trainer(cfg), batches)
            nodes = sum(q.num_nodes() for q, _ in batches) / (steps * batch_size)
            results[method] = E2EResult((wall[2 * steps] - wall[steps]) / steps, model_s, nodes)
    return results


def prebuilt_batches(cfg, graphs: Sequence[dgl.DGLGraph], batch_size: int, steps: int, seed: int) -> list:
    """``steps`` collated batches of ``cfg``'s pairs (its pipeline and global embeddings), built on one thread."""
    pipeline, embs = build_pipeline(cfg, list(graphs), progress=False)
    dataset = PretrainPairDataset(graphs, cfg.sampling, seed, steps * batch_size, pipeline, embs)
    with sampling_threads():
        return [collate_pairs(dataset.__getitems__(range(b * batch_size, (b + 1) * batch_size))) for b in range(steps)]


def model_step_seconds(trainer: Trainer, batches: list) -> float:
    """Seconds per ``trainer.step`` over ``batches``, the faster of two passes (the first includes the allocator's
    warm-up, which the loop's difference cancels; the model moves on, as in training)."""
    passes = []
    for _ in range(2):
        start = time.perf_counter()
        for q, k in batches:
            trainer.step(q, k)
        passes.append((time.perf_counter() - start) / len(batches))
    return min(passes)


def format_e2e(results: dict[str, E2EResult], batch_size: int, steps: int, workers: int) -> str:
    """Markdown table: s/step of the loop and of the model, their ratio, and each method against the first."""
    base_name, base = next(iter(results.items()))
    lines = [f"batch {batch_size}, {workers} DataLoader workers; loop s/step = (wall({2 * steps} steps) - "
             f"wall({steps} steps)) / {steps}; model s/step over {steps} pre-built batches (faster of 2 passes)",
             f"| method | nodes/view | full loop s/step | model step s/step | loop / model | loop / {base_name} loop |",
             "|---|---|---|---|---|---|"]
    for method, r in results.items():
        lines.append(f"| {method} | {r.nodes:.1f} | {r.full_s:.3f} | {r.model_s:.3f} | {r.full_s / r.model_s:.2f} | "
                     f"{r.full_s / base.full_s:.2f} |")
    return "\n".join(lines)
