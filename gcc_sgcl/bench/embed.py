"""Streamed embedding of generated power-law graphs against its floor, measured in the same run.

For each graph size (a Chung-Lu graph of ``n`` nodes and ``5 n`` edges, :mod:`gcc_sgcl.data.powerlaw`) and views
per node: the streamed run of :func:`~gcc_sgcl.engine.stream.streamed_rows` as ``generate.sh`` runs it (its
automatic thread plan), its CPU and wall milliseconds per node, and its memory: the process tree's peak PSS and the
main process's peak RSS, beside the graph (PSS before the run) and the output. The *floor* is what the run cannot
avoid: the bare eigendecompositions of the views (the batched ``eigh`` of their padded Laplacians, and the sparse
solver of the rare view above 512 nodes) plus the bare one-thread model forward on the same batches, timed on a
sample of the run's units (views built beforehand, untimed) and scaled to every view, in CPU seconds of the calling
thread (both are one-threaded), so that a loaded machine stretches it as it stretches the run's CPU seconds, not as
it stretches wall time. A graph larger than ``sample`` nodes embeds ``sample`` evenly spaced nodes of it (the
per-node costs extrapolate; the memory then covers the graph, not a full output).
"""
from __future__ import annotations

import gc
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from gcc_sgcl.bench.memory import TreeMemorySampler, process_memory
from gcc_sgcl.data.powerlaw import powerlaw_graph
from gcc_sgcl.engine.stream import ViewSource, chunk_size, plan_units, stream_plan, streamed_rows
from gcc_sgcl.engine.threads import ThreadPlan, model_threads
from gcc_sgcl.models import GraphEncoder, build_encoder, to_model_input
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.batch import ViewBatch, ranges
from gcc_sgcl.sampling.dataset import NodeViewDataset, sampling_threads
from gcc_sgcl.sampling.spectral import (
    DENSE_MAX_NODES,
    _bucket_chunks,
    _sparse_eigenpairs,
    padded_laplacians,
    valid_columns,
)

MIB = 2**20
EDGES_PER_NODE = 5


@dataclass
class EmbedResult:
    """One (graph, views) measurement; seconds and bytes."""

    nodes: int
    edges: int
    rows: int
    views: int
    plan: ThreadPlan
    wall_s: float
    cpu_s: float
    floor_s: float  # floor per row, extrapolated from the sampled units
    floor_views: int  # views the floor was timed on
    before_pss: int  # the tree before the run: interpreter, libraries, graph and its index
    peak_pss: int
    peak_rss_main: int
    peak_rss_sum: int
    output_bytes: int

    @property
    def growth(self) -> int:
        """Peak tree PSS beyond the graph (and all before the run) and the output."""
        return self.peak_pss - self.before_pss - self.output_bytes


def bench_encoder(load_path: str | None = None, seed: int = 0) -> GraphEncoder:
    """A checkpoint's encoder, or the default configuration's freshly initialised (the cost depends on the
    architecture only)."""
    if load_path:
        from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint

        return load_encoder_checkpoint(load_path)[0]
    torch.manual_seed(seed)
    return build_encoder(make_config("gcc")).eval()


def floor_seconds(model: GraphEncoder, source: ViewSource, batch_size: int, chunks: int = 0) -> tuple[float, int]:
    """CPU seconds of the bare eigendecompositions and one-thread forward of one unit (one copy) of each of
    ``source``'s chunks (0) or of ``chunks`` of them (:func:`floor_chunks`), and their views: the views are built
    first (untimed), then decomposed and encoded as the run decomposes and encodes them. Chunk ``i`` is timed at copy
    ``i mod copies``: views of one chunk cost alike across copies, while chunks differ (a generated graph's first
    chunk holds its hubs, whose views are the largest), so every chunk weighs in."""
    plan = plan_units([len(source)], [source.copies], chunk_size(batch_size))
    starts = sorted({u.start for u in plan})
    by_chunk = {(u.start, u.copy): u for u in plan}
    seconds, views_timed = 0.0, 0
    for i in floor_chunks(len(starts), chunks):
        unit = by_chunk[(starts[i], i % source.copies)]
        with sampling_threads():
            views = source.build(unit.copy, slice(unit.start, unit.stop))
            seconds += bare_eigh_seconds(views)
        seconds += bare_forward_seconds(model, views, batch_size)
        views_timed += len(views)
    return seconds, views_timed


def floor_chunks(planned: int, chunks: int) -> list[int]:
    """The chunks the floor is timed on: all ``planned`` when ``chunks`` is 0 or at least that many, else the middle
    chunk of each of ``chunks`` equal runs of them (a systematic sample).

    >>> floor_chunks(98, 4), floor_chunks(3, 6), floor_chunks(3, 0)
    ([12, 36, 61, 85], [0, 1, 2], [0, 1, 2])
    """
    if not chunks or chunks >= planned:
        return list(range(planned))
    return sorted({int((j + 0.5) * planned / chunks) for j in range(chunks)})


def bare_eigh_seconds(views: ViewBatch) -> float:
    """CPU seconds of the views' eigendecompositions as :func:`~gcc_sgcl.sampling.spectral.eigen_arrays` runs them:
    the batched float32 ``torch.linalg.eigh`` calls of the padded Laplacians, grouped as it groups them (the
    Laplacians built untimed), and the sparse solver of each view above ``DENSE_MAX_NODES`` nodes (a hub's view on
    a large graph; its call timed whole)."""
    from gcc_sgcl.sampling.spectral import BUCKET

    valid = valid_columns(views.num_nodes, views.k)
    sizes = -(-views.num_nodes // BUCKET) * BUCKET
    dense = (valid > 0) & (views.num_nodes <= DENSE_MAX_NODES)
    edge_ptr = views.edge_ptr
    seconds = 0.0
    for rows, size in _bucket_chunks(sizes, dense):
        edges = ranges(edge_ptr, rows)
        lap = torch.from_numpy(padded_laplacians(views.num_nodes[rows], views.num_edges[rows], views.src[edges],
                                                 views.dst[edges], size))
        start = time.thread_time()
        torch.linalg.eigh(lap)
        seconds += time.thread_time() - start
    for row in np.flatnonzero((valid > 0) & ~dense):
        lo, hi = edge_ptr[row], edge_ptr[row + 1]
        start = time.thread_time()
        _sparse_eigenpairs(views.src[lo:hi], views.dst[lo:hi], int(views.num_nodes[row]), int(valid[row]))
        seconds += time.thread_time() - start
    return seconds


@torch.no_grad()
def bare_forward_seconds(model: GraphEncoder, views: ViewBatch, batch_size: int) -> float:
    """CPU seconds of the one-thread forward passes of ``views``' batches (inputs converted untimed)."""
    device = next(model.parameters()).device
    batches = [to_model_input(views.select(np.arange(a, min(a + batch_size, len(views)))), device)
               for a in range(0, len(views), batch_size)]
    seconds = 0.0
    with model_threads(1):
        for batch in batches:
            start = time.thread_time()
            model(batch)
            seconds += time.thread_time() - start
    return seconds


def _cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _reset_peak_rss() -> None:
    """Reset this process's peak RSS (``VmHWM``), so that each measurement has its own (Linux 4.0+)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _peak_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measure_run(model: GraphEncoder, source: ViewSource, batch_size: int, plan: ThreadPlan,
                interval: float = 0.5) -> tuple[float, float, dict[str, int], np.ndarray]:
    """Wall and CPU seconds (view builders included), memory (``before_pss``, ``peak_pss``, ``peak_rss_main``,
    ``peak_rss_sum``) and rows of one streamed run."""
    gc.collect()
    _reset_peak_rss()
    before = process_memory(os.getpid())["pss"]
    cpu, wall = _cpu_seconds(), time.perf_counter()
    with TreeMemorySampler(os.getpid(), interval) as sampler:
        rows = streamed_rows(model, [source], batch_size, plan, progress=False)
    wall, cpu = time.perf_counter() - wall, _cpu_seconds() - cpu
    memory = {"before_pss": before, "peak_pss": sampler.peak.pss, "peak_rss_main": _peak_rss(),
              "peak_rss_sum": sampler.peak.rss}
    return wall, cpu, memory, rows


def measure_embed(sizes: Sequence[int], views: Sequence[int], batch_size: int = 256, sample: int | None = None,
                  floor_chunks: int = 0, seed: int = 0, load_path: str | None = None, builders: Sequence[int] = (-1,),
                  report: Callable[[EmbedResult], None] | None = None) -> list[EmbedResult]:
    """:class:`EmbedResult` of each graph size, view count and number of view builders (``-1``: the automatic
    plan; see the module docstring), each passed to ``report`` as soon as it is measured (a 1 M-node graph at 32
    views takes hours on 2 cores). The floor is timed once per graph and view count, after its runs."""
    model = bench_encoder(load_path, seed)
    sampling = make_config("gcc").sampling
    results = []
    for n in sizes:
        graph = powerlaw_graph(n, EDGES_PER_NODE * n, np.random.default_rng(seed))
        items = np.arange(n) if not sample or sample >= n else np.linspace(0, n - 1, sample).round().astype(np.int64)
        for v in views:
            source = ViewSource(NodeViewDataset(graph, sampling, seed), items, v)
            runs = []
            for b in builders:
                plan = stream_plan(model, [source], builders=None if b < 0 else b)
                wall, cpu, memory, rows = measure_run(model, source, batch_size, plan)
                runs.append((plan, wall, cpu, memory, rows.nbytes))
                del rows
            floor, timed = floor_seconds(model, source, batch_size, floor_chunks)
            for plan, wall, cpu, memory, output_bytes in runs:
                results.append(EmbedResult(n, graph.num_edges() // 2, len(items), v, plan, wall, cpu,
                                           floor / timed * v, timed, output_bytes=output_bytes, **memory))
                if report is not None:
                    report(results[-1])
            del source
        del graph
    return results


TABLE_HEADER = ("| nodes | edges | rows | views | threads | CPU ms/node | wall ms/node | floor ms/node | CPU/floor | "
                "wall/floor | peak tree PSS MiB | peak RSS main MiB | before MiB | output MiB | growth B/node |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def format_row(r: EmbedResult) -> str:
    """One line of the table of :data:`TABLE_HEADER`."""
    ms = 1e3 / r.rows
    return (f"| {r.nodes:,} | {r.edges:,} | {r.rows:,} | {r.views} | {r.plan.model}+{r.plan.builders} | "
            f"{r.cpu_s * ms:.3f} | {r.wall_s * ms:.3f} | {r.floor_s * 1e3:.3f} | "
            f"{r.cpu_s / r.rows / r.floor_s:.2f} | {r.wall_s / r.rows / r.floor_s:.2f} | "
            f"{r.peak_pss / MIB:,.0f} | {r.peak_rss_main / MIB:,.0f} | {r.before_pss / MIB:,.0f} | "
            f"{r.output_bytes / MIB:,.1f} | {r.growth / r.rows:,.0f} |")


def format_embed(results: Sequence[EmbedResult], table: bool = True) -> str:
    """:func:`measure_embed`'s results as a Markdown table (without it when ``table`` is False: rows printed as
    measured), then the legend and the per-view cost of more views against the fewest."""
    lines = [TABLE_HEADER, *map(format_row, results)] if table else []
    lines.append("threads: model + view builders; floor: bare eigendecompositions + bare one-thread forward of "
                 "sampled units, per node; growth: peak tree PSS - PSS before the run - output, per row")
    by_key = {(r.nodes, r.plan.builders, r.views): r for r in results}
    for r in results:
        fewest = min(v for n, b, v in by_key if (n, b) == (r.nodes, r.plan.builders))
        low = by_key[r.nodes, r.plan.builders, fewest]
        if low.views < r.views:
            per_view = (r.cpu_s / r.rows / r.views) / (low.cpu_s / low.rows / low.views)
            lines.append(f"{r.nodes:,} nodes, {r.plan.model}+{r.plan.builders} threads: CPU per view at {r.views} "
                         f"views / at {low.views} views = {per_view:.2f} (goal <= 1)")
    return "\n".join(lines)
