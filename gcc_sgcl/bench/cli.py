"""``python -m gcc_sgcl.bench``: every performance measurement of the project in one run (see the package doc)."""
from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from typing import Callable

import dgl
import numpy as np
import psutil
import torch

from gcc_sgcl import data
from gcc_sgcl.bench.e2e import format_e2e, measure_e2e
from gcc_sgcl.bench.memory import format_scale, measure_scale
from gcc_sgcl.bench.pe import format_pe, measure_pe, rwr_subgraphs
from gcc_sgcl.bench.sampler import format_sampler, measure_sampler
from gcc_sgcl.bench.scaling import format_scaling, measure_scaling
from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.experiments import runtime
from gcc_sgcl.sampling.dataset import limit_threads

PARTS = ("memory", "pe", "sampler", "e2e", "runtime", "scaling")
RUNTIME_TARGET = 1.10  # sgcl may cost at most 10 % more per mini-batch than gcc


def build_parser() -> argparse.ArgumentParser:
    """Flags choosing the parts and scaling each down (a test runs them all in seconds)."""
    p = argparse.ArgumentParser(prog="python -m gcc_sgcl.bench", description=__doc__,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS),
                   help="parts to run (they run in the order listed here)")
    p.add_argument("--corpus", nargs="+", default=["ca-hepth"],
                   help="pre-training graphs of the pe, sampler, runtime and scaling parts")
    p.add_argument("--data-dir", default=None, help="data root (default: $GCC_SGCL_DATA, else ./data)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--methods", nargs="+", default=["gcc", "sgcl"], help="methods of the sampler and runtime parts")
    g = p.add_argument_group("pe")
    g.add_argument("--pe-graphs", type=int, default=512, help="RWR subgraphs decomposed by each path")
    g.add_argument("--pe-batch", type=int, default=256, help="subgraphs per batched call of the fast path")
    g.add_argument("--pe-repeats", type=int, default=3, help="timings per chunk and path; the fastest is kept")
    g = p.add_argument_group("sampler")
    g.add_argument("--workers", nargs="+", type=int, default=[0, 1, 2], help="DataLoader worker counts")
    g.add_argument("--batch-size", type=int, default=256, help="pairs per batch")
    g.add_argument("--sampler-batches", type=int, default=4, help="batches per (method, path) setting and round")
    g.add_argument("--reference-pairs", type=int, default=128, help="pairs of the per-item reference per round")
    g.add_argument("--sampler-rounds", type=int, default=2, help="rounds over the settings, order rotating")
    g = p.add_argument_group("e2e (the pre-training loop against the model step)")
    g.add_argument("--e2e-steps", type=int, default=30, help="steps of the shorter run (the longer has twice)")
    g.add_argument("--e2e-batch-size", type=int, default=256)
    g.add_argument("--e2e-workers", type=int, default=2)
    g = p.add_argument_group("runtime (gcc_sgcl.experiments.runtime)")
    g.add_argument("--runtime-batch-size", type=int, default=16, help="the paper's runtime table uses 16")
    g.add_argument("--runtime-batches", type=int, default=60, help="mini-batches per method")
    g = p.add_argument_group("memory (pre-training gcc on a generated Chung-Lu graph)")
    g.add_argument("--nodes", type=int, default=1_000_000)
    g.add_argument("--edges", type=int, default=10_000_000, help="undirected edges drawn (before removing repeats)")
    g.add_argument("--steps", type=int, default=100)
    g.add_argument("--mem-batch-size", type=int, default=32)
    g.add_argument("--mem-workers", type=int, default=2)
    g = p.add_argument_group("scaling")
    g.add_argument("--hops", nargs="+", type=int, default=[64, 128, 256], help="rw_hops values")
    g.add_argument("--scaling-views", type=int, default=128, help="views (and pairs) per rw_hops value")
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
    a = build_parser().parse_args(argv)
    given = shlex.join(sys.argv[1:] if argv is None else argv)
    print(f"command: python -m gcc_sgcl.bench {given}".rstrip())
    print(machine_summary(), flush=True)
    if "memory" in a.only:  # first, so the tree's baseline is the bare interpreter and libraries
        _section("memory: pre-training gcc on a generated power-law graph (process tree)", lambda: format_scale(
            measure_scale(a.nodes, a.edges, a.steps, a.mem_batch_size, a.mem_workers, a.seed)))
    limit_threads()  # the sampler's setting: one BLAS/OpenMP thread
    graphs = data.load_pretrain_corpus(a.corpus, a.data_dir) if set(a.only) - {"memory"} else []
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
        _section(f"seconds per mini-batch on {corpus} (gcc_sgcl.experiments.runtime)", lambda: _runtime(a))
    if "scaling" in a.only:
        _section(f"cost vs subgraph size on {corpus} ({a.scaling_views} views and pairs per rw_hops)",
                 lambda: format_scaling(measure_scaling(graphs, a.hops, a.scaling_views, a.pe_batch, a.seed,
                                                        a.pe_repeats)))
    print(f"\nload average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def _runtime(a: argparse.Namespace) -> str:
    results = runtime.measure(a.methods, a.corpus, a.runtime_batch_size, a.runtime_batches, a.data_dir, a.seed)
    base_name, base = next(iter(results.items()))
    ratios = [f"{m}/{base_name} total s/batch {r['total_s'] / base['total_s']:.2f}" for m, r in results.items()
              if m != base_name]
    return (f"batch {a.runtime_batch_size}, {a.runtime_batches} batches per method, methods alternating\n"
            + runtime.format_report(results) + "\n" + "; ".join(ratios) + f" (target <= {RUNTIME_TARGET:.2f})")
