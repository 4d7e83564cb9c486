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
from gcc_sgcl.bench.augment import format_effects, measure_effects
from gcc_sgcl.bench.e2e import format_e2e, measure_e2e
from gcc_sgcl.bench.memory import format_scale, measure_scale
from gcc_sgcl.bench.pe import format_pe, measure_pe, rwr_subgraphs
from gcc_sgcl.bench.sampler import format_sampler, measure_sampler
from gcc_sgcl.bench.scaling import format_scaling, measure_scaling
from gcc_sgcl.config import BenchConfig, InputConfig, SamplingConfig, add_arguments, from_args
from gcc_sgcl.experiments import runtime
from gcc_sgcl.sampling.dataset import limit_threads

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
)


def command_line() -> argparse.ArgumentParser:
    """:class:`~gcc_sgcl.config.BenchConfig`: flags choosing the parts and scaling each down, one section per
    part."""
    p = argparse.ArgumentParser(prog="python -m gcc_sgcl.bench", description=__doc__)
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
    args = command_line().parse_args(argv)
    a, data_dir = from_args(BenchConfig, args), from_args(InputConfig, args).data_dir
    given = shlex.join(sys.argv[1:] if argv is None else argv)
    print(f"command: python -m gcc_sgcl.bench {given}".rstrip())
    print(machine_summary(), flush=True)
    if "memory" in a.only:  # first, so the tree's baseline is the bare interpreter and libraries
        _section("memory: pre-training gcc on a generated power-law graph (process tree)", lambda: format_scale(
            measure_scale(a.nodes, a.edges, a.steps, a.mem_batch_size, a.mem_workers, a.seed)))
    limit_threads()  # the sampler's setting: one BLAS/OpenMP thread
    graphs = data.load_pretrain_corpus(a.corpus, data_dir) if set(a.only) - {"memory"} else []
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
    print(f"\nload average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def _runtime(a: BenchConfig, data_dir: str | None) -> str:
    results = runtime.measure(a.methods, a.corpus, a.runtime_batch_size, a.runtime_batches, data_dir, a.seed)
    base_name, base = next(iter(results.items()))
    ratios = [f"{m}/{base_name} total s/batch {r['total_s'] / base['total_s']:.2f}" for m, r in results.items()
              if m != base_name]
    return (f"batch {a.runtime_batch_size}, {a.runtime_batches} batches per method, methods alternating\n"
            + runtime.format_report(results) + "\n" + "; ".join(ratios) + f" (target <= {RUNTIME_TARGET:.2f})")
