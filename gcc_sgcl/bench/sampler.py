"""Sampler throughput: pairs per second of the batched ``PretrainPairDataset`` against the per-item reference
(GCC's path, :class:`~gcc_sgcl.bench.reference.ReferencePairs`) in one process and thread, and through a
DataLoader with several worker counts.

Settings take turns over several rounds, the order rotating, so a machine whose speed drifts affects all of them
alike. Both paths draw items ``0, 1, …`` of the same run (the reference draws fewer: it is much slower).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import dgl
import numpy as np
import torch

from gcc_sgcl.bench.reference import ReferencePairs
from gcc_sgcl.engine.pretrain import build_pipeline
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.dataset import PretrainPairDataset, collate_pairs, sampling_threads, worker_init
from gcc_sgcl.sampling.spectral import eigen_arrays


def pair_dataset(graphs: Sequence[dgl.DGLGraph], method: str, length: int, seed: int) -> PretrainPairDataset:
    """The pre-training dataset of ``method`` (its pair pipeline and global embeddings included)."""
    cfg = make_config(method, {"train": {"seed": seed}})
    pipeline, embeddings = build_pipeline(cfg, list(graphs), progress=False)
    return PretrainPairDataset(graphs, cfg.sampling, seed, length, pipeline, embeddings)


def reference_pairs(graphs: Sequence[dgl.DGLGraph], method: str, seed: int) -> ReferencePairs:
    """The per-item reference of ``method``'s pairs."""
    cfg = make_config(method, {"train": {"seed": seed}})
    pipeline, embeddings = build_pipeline(cfg, list(graphs), progress=False)
    return ReferencePairs(graphs, cfg, pipeline, embeddings)


def time_loader(dataset: PretrainPairDataset, batch_size: int, batches: int, workers: int) -> float:
    """Seconds from creating a DataLoader iterator (worker start-up included) to its last batch."""
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, sampler=range(batches * batch_size), collate_fn=collate_pairs,
        num_workers=workers, worker_init_fn=worker_init,
    )
    start = time.perf_counter()
    for _ in loader:
        pass
    return time.perf_counter() - start


@dataclass
class SamplerResult:
    """Pairs and seconds of each path of one method, summed over rounds."""

    batched: list[float] = field(default_factory=lambda: [0.0, 0.0])  # [pairs, seconds]
    reference: list[float] = field(default_factory=lambda: [0.0, 0.0])
    eigen: list[float] = field(default_factory=lambda: [0.0, 0.0])  # eigen-features of the final views alone
    loader: dict[int, list[float]] = field(default_factory=dict)

    @staticmethod
    def rate(pairs_seconds: list[float]) -> float:
        return pairs_seconds[0] / pairs_seconds[1]


def measure_sampler(
    graphs: Sequence[dgl.DGLGraph],
    methods: Sequence[str],
    workers: Sequence[int],
    batch_size: int,
    batches: int,
    reference_items: int,
    seed: int = 0,
    rounds: int = 2,
) -> dict[str, SamplerResult]:
    """``{method: result}``; global embeddings are computed (or read from the cache) before timing.

    Path ``"eigen"`` times only :func:`~gcc_sgcl.sampling.spectral.eigen_arrays` on the query and key views the
    batched path returns (built once before timing): a part of the batched path's own work, so reference time /
    eigen time bounds what any batched sampler with these decompositions can reach against the reference.
    """
    datasets = {m: pair_dataset(graphs, m, batch_size * batches, seed) for m in methods}
    references = {m: reference_pairs(graphs, m, seed) for m in methods}
    results = {m: SamplerResult(loader={w: [0.0, 0.0] for w in workers}) for m in methods}
    with sampling_threads():
        final_views = {m: [view for b in range(batches)
                           for view in datasets[m].__getitems__(range(b * batch_size, (b + 1) * batch_size))]
                       for m in methods}
    settings = [(m, path) for m in methods for path in ["batched", "reference", "eigen", *workers]]
    for r in range(rounds):
        for i in np.roll(np.arange(len(settings)), -r):
            method, path = settings[i]
            res = results[method]
            start = time.perf_counter()
            if path == "batched":
                for b in range(batches):
                    datasets[method].__getitems__(range(b * batch_size, (b + 1) * batch_size))
                res.batched[0] += batch_size * batches
                res.batched[1] += time.perf_counter() - start
            elif path == "reference":
                for item in range(reference_items):
                    references[method].pair(item)
                res.reference[0] += reference_items
                res.reference[1] += time.perf_counter() - start
            elif path == "eigen":
                for v in final_views[method]:
                    eigen_arrays(v.num_nodes, v.num_edges, v.src, v.dst, v.k)
                res.eigen[0] += batch_size * batches
                res.eigen[1] += time.perf_counter() - start
            else:
                res.loader[path][1] += time_loader(datasets[method], batch_size, batches, path)
                res.loader[path][0] += batch_size * batches
    return results


def format_sampler(results: dict[str, SamplerResult], batch_size: int, batches: int, reference_items: int,
                   rounds: int) -> str:
    """Markdown table: one row per method; batched vs reference in this process, then per worker count."""
    workers = list(next(iter(results.values())).loader)
    lines = [f"{rounds} rounds; batched: {batches} batches of {batch_size} pairs, reference: {reference_items} "
             "pairs one at a time, both in this process on one thread; DataLoader: the batched dataset, worker "
             "start-up included; eigen alone: the eigen-features of the batched path's final query and key views "
             "(for sgcl, not the decompositions of views later cropped), so eigen alone / reference is a ceiling "
             "on batched / reference",
             "| method | batched pairs/s | per-item reference pairs/s | batched / reference | eigen alone pairs/s | "
             "eigen alone / reference | "
             + " | ".join(f"DataLoader {w} workers pairs/s" for w in workers) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(workers)]
    for method, res in results.items():
        batched, reference = SamplerResult.rate(res.batched), SamplerResult.rate(res.reference)
        eigen = SamplerResult.rate(res.eigen)
        cells = [f"{SamplerResult.rate(res.loader[w]):.0f}" for w in workers]
        lines.append(f"| {method} | {batched:.0f} | {reference:.0f} | {batched / reference:.1f}x | {eigen:.0f} | "
                     f"{eigen / reference:.1f}x | " + " | ".join(cells) + " |")
    return "\n".join(lines)
