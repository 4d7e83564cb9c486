"""``python -m gcc_sgcl.bench``: every performance measurement of the project in one run (see the package doc).

One name, one idea at 2 layers: :mod:`gcc_sgcl.cli` (what every command shares), :mod:`gcc_sgcl.bench.cli` (the
benchmarks' command).
"""
from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from dataclasses import dataclass
from typing import Callable

import dgl
import numpy as np
import psutil
import torch

from gcc_sgcl.cli import PlainHelpParser
from gcc_sgcl import data
from gcc_sgcl.bench.augment import format_effects, measure_effects
from gcc_sgcl.bench.denormal import format_denormal, measure_denormal
from gcc_sgcl.bench.e2e import format_e2e, measure_e2e
from gcc_sgcl.bench.embed import EDGES_PER_NODE, TABLE_HEADER, format_embed, format_row, measure_embed
from gcc_sgcl.bench.memory import format_scale, measure_scale
from gcc_sgcl.bench.pe import format_pe, measure_pe, rwr_subgraphs
from gcc_sgcl.bench.sampler import format_sampler, measure_sampler
from gcc_sgcl.bench.scaling import format_scaling, measure_scaling
from gcc_sgcl.config import InputConfig, SamplingConfig
from gcc_sgcl.experiments import runtime
from gcc_sgcl.experiments.runtime import RuntimeConfig
from gcc_sgcl.sampling.dataset import limit_threads
from gcc_sgcl.settings import NON_NEGATIVE, SEED32, Settings, add_arguments, at_least, default_of, from_args, setting


BENCH_PARTS = ("memory", "pe", "sampler", "e2e", "runtime", "scaling", "augment", "embed", "denormal")
# run unless --only says otherwise; embed and denormal are asked for by name (`python -m gcc_sgcl.bench embed`):
# embed's 1 M-node graph at 32 views takes hours on 2 cores, denormal needs a trained encoder
DEFAULT_PARTS = BENCH_PARTS[:-2]


@dataclass
class BenchConfig(Settings):
    """Every performance measurement (``scripts/bench.sh``), each part scaled by its flags (a test runs them all in
    seconds). Flags are grouped by part in ``--help``."""

    only: list[str] = setting(list(DEFAULT_PARTS), "parts to run (they run in the order listed here)",
                              choices=BENCH_PARTS)
    corpus: list[str] = setting(["ca-hepth"], "pre-training graphs of the pe, sampler, runtime and scaling parts")
    seed: int = setting(0, "seed of every part", valid=SEED32)
    methods: list[str] = setting(default_of(RuntimeConfig, "methods"), "methods of the sampler and runtime parts")
    pe_graphs: int = setting(512, "RWR subgraphs decomposed by each path", valid=at_least(1))
    pe_batch: int = setting(256, "subgraphs per batched call of the fast path", valid=at_least(1))
    pe_repeats: int = setting(3, "timings per chunk and path; the fastest is kept", valid=at_least(1))
    workers: list[int] = setting([0, 1, 2], "DataLoader worker counts", valid=NON_NEGATIVE)
    batch_size: int = setting(256, "pairs per batch", valid=at_least(1))
    sampler_batches: int = setting(4, "batches per (method, path) setting and round", valid=at_least(1))
    reference_pairs: int = setting(128, "pairs of the per-item reference per round", valid=at_least(1))
    sampler_rounds: int = setting(2, "rounds over the settings, order rotating", valid=at_least(1))
    e2e_steps: int = setting(30, "steps of the shorter run (the longer has twice)", valid=at_least(1))
    e2e_batch_size: int = setting(256, "pre-training batch size", valid=at_least(1))
    e2e_workers: int = setting(2, "DataLoader workers", valid=NON_NEGATIVE)
    runtime_batch_size: int = setting(default_of(RuntimeConfig, "batch_size"), "the paper's runtime table uses 16",
                                      valid=at_least(1))
    runtime_batches: int = setting(default_of(RuntimeConfig, "batches"), "mini-batches per method", valid=at_least(1))
    nodes: int = setting(1_000_000, "nodes of the generated graph", valid=at_least(1))
    edges: int = setting(10_000_000, "undirected edges drawn (before removing repeats)", valid=at_least(1))
    steps: int = setting(100, "pre-training steps", valid=NON_NEGATIVE)
    mem_batch_size: int = setting(32, "pre-training batch size", valid=at_least(1))
    mem_workers: int = setting(2, "DataLoader workers", valid=NON_NEGATIVE)
    hops: list[int] = setting([64, 128, 256], "rw_hops values", valid=at_least(1))
    scaling_views: int = setting(128, "views (and pairs) per rw_hops value", valid=at_least(1))
    augment_batches: int = setting(8, "batches (of --batch-size pairs) per method", valid=at_least(1))
    embed_sizes: list[int] = setting([10_000, 100_000, 1_000_000], "nodes of each generated graph (5 edges per node)",
                                     valid=at_least(2))
    embed_views: list[int] = setting([2, 32], "views per node", valid=at_least(1))
    embed_sample: int = setting(0, "embed at most this many evenly spaced nodes of a larger graph (0: every node)",
                                valid=NON_NEGATIVE)
    embed_floor_chunks: int = setting(0, "chunks the floor is timed on, one copy each (0: every chunk)",
                                      valid=NON_NEGATIVE)
    embed_builders: list[int] = setting([-1], "view-building worker processes, one run each (-1: the automatic "
                                        "plan, as generate.sh; 0: views built in the model's process, between "
                                        "forwards)", valid=at_least(-1))
    embed_batch_size: int = setting(256, "views per forward pass", valid=at_least(1))
    embed_encoder: str | None = setting(None, "run folder or checkpoint of the encoder (default: the default "
                                              "configuration's, freshly initialised)")
    denormal_checkpoint: str | None = setting(None, "run folder or checkpoint of a trained encoder (e.g. a long "
                                                    "run's), timed against a fresh one of its configuration")
    denormal_steps: int = setting(10, "pre-built batches (of --e2e-batch-size pairs) per timing", valid=at_least(1))


RUNTIME_TARGET = 1.10  # sgcl may cost at most 10 % more per mini-batch than gcc
# the --help section of each part: (title, its fields of BenchConfig)
SECTIONS = (
    ("pe", ("pe_graphs", "pe_batch", "pe_repeats")),
    ("sampler", ("workers", "batch_size", "sampler_batches", "reference_pairs", "sampler_rounds")),
    ("e2e (the pre-training loop against the model step)", ("e2e_steps", "e2e_batch_size", "e2e_workers")),
    ("runtime (gcc_sgcl.experiments.runtime)", ("runtime_batch_size", "runtime_batches")),
    ("memory (pre-training gcc on a generated Chung-Lu graph)",
     ("nodes", "edges", "steps", "mem_batch_size", "mem_workers")),
    ("scaling", ("hops", "scaling_views")),
    ("augment (what each stage of a pair pipeline changes; pairs of --batch-size)", ("augment_batches",)),
    ("embed (streamed embedding of generated power-law graphs against its floor)",
     ("embed_sizes", "embed_views", "embed_builders", "embed_sample", "embed_floor_chunks", "embed_batch_size",
      "embed_encoder")),
    ("denormal (a trained encoder's model step with denormals kept and flushed, against a fresh one)",
     ("denormal_checkpoint", "denormal_steps")),
)


def command_line() -> argparse.ArgumentParser:
    """:class:`BenchConfig`: flags choosing the parts and scaling each down, one section per
    part."""
    p = PlainHelpParser(prog="python -m gcc_sgcl.bench", description=__doc__)
    add_arguments(p, BenchConfig, only=("only", "corpus", "seed", "methods"))
    add_arguments(p, InputConfig, only=("data_dir",))
    for title, fields in SECTIONS:
        add_arguments(p, BenchConfig, only=fields, title=title)
    return p


def machine_summary() -> str:
    """CPU model and count, memory, library versions and load average."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"machine: {os.cpu_count()} x {cpu}, {psutil.virtual_memory().total / 2**30:.1f} GiB RAM, "
            f"GPU used: no | python {platform.python_version()}, torch {torch.__version__}, dgl {dgl.__version__}, "
            f"numpy {np.__version__} | load average {load}")


def _section(title: str, body: Callable[[], str]) -> None:
    print(f"\n## {title}", flush=True)
    start = time.perf_counter()
    print(body())
    print(f"({time.perf_counter() - start:.1f} s)", flush=True)


def main(argv: list[str] | None = None) -> None:
    """Run the chosen parts and print their reports."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parts = [x for x in argv[:len(BENCH_PARTS)] if x in BENCH_PARTS]  # `python -m gcc_sgcl.bench embed`: --only embed
    if parts and argv[:len(parts)] == parts:
        argv = ["--only", *parts, *argv[len(parts):]]
    args = command_line().parse_args(argv)
    a, data_dir = from_args(BenchConfig, args), from_args(InputConfig, args).data_dir
    if "denormal" in a.only and a.denormal_checkpoint is None:
        raise SystemExit("python -m gcc_sgcl.bench denormal: give --denormal-checkpoint (a trained run folder)")
    given = shlex.join(argv)
    print(f"command: python -m gcc_sgcl.bench {given}".rstrip())
    print(machine_summary(), flush=True)
    if "memory" in a.only:  # first, so the tree's baseline is the bare interpreter and libraries
        _section("memory: pre-training gcc on a generated power-law graph (process tree)", lambda: format_scale(
            measure_scale(a.nodes, a.edges, a.steps, a.mem_batch_size, a.mem_workers, a.seed)))
    limit_threads()  # the sampler's setting: one BLAS/OpenMP thread
    graphs = data.load_pretrain_corpus(a.corpus, data_dir) if set(a.only) - {"memory", "embed"} else []
    corpus = "+".join(a.corpus)
    k = SamplingConfig().positional_embedding_size
    if "pe" in a.only:
        _section(f"positional embeddings on {corpus} (rw_hops {SamplingConfig().rw_hops}, k {k})", lambda: format_pe(
            measure_pe(rwr_subgraphs(graphs, SamplingConfig(), a.pe_graphs, a.seed), k, a.pe_batch, a.seed,
                       a.pe_repeats), a.pe_batch))
    if "sampler" in a.only:
        _section(f"sampler throughput on {corpus} (batched vs per-item reference, one thread)", lambda: format_sampler(
            measure_sampler(graphs, a.methods, a.workers, a.batch_size, a.sampler_batches, a.reference_pairs, a.seed,
                            a.sampler_rounds), a.batch_size, a.sampler_batches, a.reference_pairs, a.sampler_rounds))
    if "e2e" in a.only:
        _section(f"pre-training loop vs model step on {corpus}", lambda: format_e2e(
            measure_e2e(graphs, a.methods, a.e2e_batch_size, a.e2e_steps, a.e2e_workers, a.seed),
            a.e2e_batch_size, a.e2e_steps, a.e2e_workers))
    if "runtime" in a.only:
        _section(f"seconds per mini-batch on {corpus} (gcc_sgcl.experiments.runtime)", lambda: _runtime(a, data_dir))
    if "scaling" in a.only:
        _section(f"cost vs subgraph size on {corpus} ({a.scaling_views} views and pairs per rw_hops)",
                 lambda: format_scaling(measure_scaling(graphs, a.hops, a.scaling_views, a.pe_batch, a.seed,
                                                        a.pe_repeats)))
    if "augment" in a.only:
        _section(f"what each augmentation stage changes on {corpus}", lambda: format_effects(
            measure_effects(graphs, a.methods, a.batch_size, a.augment_batches, a.seed), a.batch_size,
            a.augment_batches))
    if "embed" in a.only:
        _section(f"streamed embedding of power-law graphs ({EDGES_PER_NODE} edges per node) against its floor",
                 lambda: _embed(a))
    if "denormal" in a.only:
        _section(f"denormal weights against the model step on {corpus}", lambda: format_denormal(
            measure_denormal(graphs, a.denormal_checkpoint, a.e2e_batch_size, a.denormal_steps, a.seed),
            a.e2e_batch_size, a.denormal_steps))
    print(f"\nload average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def _embed(a: BenchConfig) -> str:
    print(TABLE_HEADER, flush=True)  # then each row as it is measured: the 1 M-node rows take long
    results = measure_embed(a.embed_sizes, a.embed_views, a.embed_batch_size, a.embed_sample, a.embed_floor_chunks,
                            a.seed, a.embed_encoder, a.embed_builders,
                            report=lambda r: print(format_row(r), flush=True))
    return format_embed(results, table=False)


def _runtime(a: BenchConfig, data_dir: str | None) -> str:
    results = runtime.measure(a.methods, a.corpus, a.runtime_batch_size, a.runtime_batches, data_dir, a.seed)
    base_name, base = next(iter(results.items()))
    ratios = [f"{m}/{base_name} total s/batch {r['total_s'] / base['total_s']:.2f}" for m, r in results.items()
              if m != base_name]
    return (f"batch {a.runtime_batch_size}, {a.runtime_batches} batches per method, methods alternating\n"
            + runtime.format_report(results) + "\n" + "; ".join(ratios) + f" (target <= {RUNTIME_TARGET:.2f})")
