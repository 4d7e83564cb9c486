"""How the cost of a view grows with the RWR visit budget ``rw_hops`` (and so with the subgraph size)."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Sequence

import dgl

from gcc_sgcl.augment.pipeline import PairPipeline
from gcc_sgcl.bench.pe import PEResult, measure_pe, rwr_subgraphs
from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.sampling.dataset import PretrainPairDataset


@dataclass
class ScalingRow:
    """One ``rw_hops`` setting: positional-embedding cost per view and batched sampler cost per pair."""

    rw_hops: int
    pe: PEResult
    pair_s: float  # one (query, key) pair of gcc, built in batches


def measure_scaling(
    graphs: Sequence[dgl.DGLGraph], hops: Sequence[int], count: int, batch: int, seed: int = 0, repeats: int = 3
) -> list[ScalingRow]:
    """For each ``rw_hops``: :func:`measure_pe` on ``count`` views and the mean time of ``count`` dataset pairs."""
    rows = []
    for h in hops:
        sampling = dataclasses.replace(SamplingConfig(), rw_hops=h)
        pe = measure_pe(rwr_subgraphs(graphs, sampling, count, seed), sampling.positional_embedding_size, batch,
                        seed, repeats)
        dataset = PretrainPairDataset(graphs, sampling, seed, count, PairPipeline())
        start = time.perf_counter()
        for lo in range(0, count, batch):
            dataset.__getitems__(range(lo, min(lo + batch, count)))
        rows.append(ScalingRow(h, pe, (time.perf_counter() - start) / count))
    return rows


def format_scaling(rows: list[ScalingRow]) -> str:
    """Markdown table, one row per ``rw_hops``."""
    lines = ["| rw_hops | nodes/view mean (max) | PE ms/view ARPACK | dense | batched | sampler ms/pair (gcc) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        p = r.pe
        lines.append(f"| {r.rw_hops} | {p.mean_nodes:.1f} ({p.max_nodes}) | {p.arpack_s * 1e3:.3f} | "
                     f"{p.dense_s * 1e3:.3f} | {p.batched_s * 1e3:.3f} | {r.pair_s * 1e3:.2f} |")
    return "\n".join(lines)
