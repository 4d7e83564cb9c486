"""Sampler throughput: pairs per second of ``PretrainPairDataset`` through a DataLoader, per method and worker count.

Every (method, workers) setting draws the same items ``0..batches·batch_size-1``, so they do the same work; the
time runs from creating the loader iterator (worker start-up included) to the last batch. Settings take turns
over several rounds, the order rotating, so a machine whose speed drifts affects all of them alike.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import dgl
import numpy as np
import torch

from gcc_sgcl.presets import make_config
from gcc_sgcl.engine.pretrain import build_pipeline
from gcc_sgcl.sampling.dataset import PretrainPairDataset, collate_pairs, worker_init


def pair_dataset(graphs: Sequence[dgl.DGLGraph], method: str, length: int, seed: int) -> PretrainPairDataset:
    """The pre-training dataset of ``method`` (its SGCL pipeline and global embeddings included)."""
    cfg = make_config(method, {"train": {"seed": seed}})
    pipeline, embeddings = build_pipeline(cfg, list(graphs), progress=False)
    return PretrainPairDataset(graphs, cfg.sampling, seed, length, pipeline, embeddings)


def time_loader(dataset: PretrainPairDataset, batch_size: int, batches: int, workers: int) -> tuple[float, float]:
    """``(seconds to the first batch, seconds to the last)`` of a DataLoader over ``batches`` batches of ``dataset``."""
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=range(batches * batch_size),
        collate_fn=collate_pairs,
        num_workers=workers,
        worker_init_fn=worker_init,
    )
    start = time.perf_counter()
    arrivals = [time.perf_counter() - start for _ in loader]
    return arrivals[0], arrivals[-1]


def start_draw_seconds(dataset: PretrainPairDataset, count: int = 10_000, seed: int = 0) -> float:
    """Mean seconds of one :meth:`PretrainPairDataset.draw_start` (generators made beforehand, not timed)."""
    rngs = [np.random.default_rng([seed, i]) for i in range(count)]
    start = time.perf_counter()
    for rng in rngs:
        dataset.draw_start(rng)
    return (time.perf_counter() - start) / count


@dataclass
class SamplerResult:
    """Throughput of one (method, workers) setting, summed over rounds."""

    pairs: int = 0
    seconds: float = 0.0
    first_batch_s: float = 0.0  # mean over rounds (worker start-up plus one batch)

    @property
    def pairs_per_s(self) -> float:
        """Pairs per second, worker start-up included."""
        return self.pairs / self.seconds


def measure_sampler(
    graphs: Sequence[dgl.DGLGraph],
    methods: Sequence[str],
    workers: Sequence[int],
    batch_size: int,
    batches: int,
    seed: int = 0,
    rounds: int = 2,
) -> tuple[dict[str, dict[int, SamplerResult]], float]:
    """``{method: {workers: result}}`` and the seconds of one start-node draw.

    Global embeddings are computed (or read from the cache) before timing.
    """
    datasets = {m: pair_dataset(graphs, m, batch_size * batches, seed) for m in methods}
    settings = [(m, w) for m in methods for w in workers]
    results = {m: {w: SamplerResult() for w in workers} for m in methods}
    for r in range(rounds):
        for i in np.roll(np.arange(len(settings)), -r):
            method, w = settings[i]
            first, total = time_loader(datasets[method], batch_size, batches, w)
            res = results[method][w]
            res.pairs += batch_size * batches
            res.seconds += total
            res.first_batch_s += first / rounds
    return results, start_draw_seconds(next(iter(datasets.values())), seed=seed)


def format_sampler(results: dict[str, dict[int, SamplerResult]], draw_s: float, batch_size: int, batches: int,
                   rounds: int) -> str:
    """Markdown table: one row per method, one column per worker count (speed-up over the first count)."""
    workers = list(next(iter(results.values())))
    lines = [f"{rounds} rounds x {batches} batches of {batch_size} pairs per setting; pairs/s include worker "
             "start-up, (first batch after s)",
             "| method | " + " | ".join(f"{w} workers pairs/s" for w in workers) + " |",
             "|---|" + "---|" * len(workers)]
    for method, by_workers in results.items():
        base = by_workers[workers[0]].pairs_per_s
        cells = [f"{res.pairs_per_s:.1f} ({res.first_batch_s:.2f} s)"
                 + ("" if w == workers[0] else f" {res.pairs_per_s / base:.2f}x") for w, res in by_workers.items()]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    slowest = min(res.pairs_per_s for by_workers in results.values() for res in by_workers.values())
    lines.append(f"start-node draw (draw_start, one per pair): {draw_s * 1e6:.1f} µs, "
                 f"{100 * draw_s * slowest:.2f} % of a pair at the slowest setting")
    return "\n".join(lines)
