"""Peak memory of a process tree (RSS and PSS), and pre-training on a generated graph at the paper's scale.

RSS counts a page once per process that maps it, so summing it over DataLoader workers forked from the main
process counts the shared graph arrays once per worker; PSS splits each shared page between the processes
mapping it, so its sum over the tree is the tree's actual footprint.
"""
from __future__ import annotations

import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType

import dgl
import numpy as np
import psutil

from gcc_sgcl.presets import make_config
from gcc_sgcl.data.powerlaw import powerlaw_graph
from gcc_sgcl.engine.pretrain import pretrain

_FIELDS = {"Rss:": "rss", "Pss:": "pss", "Private_Clean:": "private", "Private_Dirty:": "private"}


def process_memory(pid: int) -> dict[str, int]:
    """``{"rss", "pss", "private"}`` bytes of process ``pid`` from ``/proc/<pid>/smaps_rollup``."""
    totals = {"rss": 0, "pss": 0, "private": 0}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] in _FIELDS:
                totals[_FIELDS[parts[0]]] += int(parts[1]) * 1024  # reported in kB
    return totals


def tree_memory(pid: int) -> dict[int, dict[str, int]]:
    """:func:`process_memory` of ``pid`` and each of its live descendants, by pid."""
    root = psutil.Process(pid)
    usage = {}
    for proc in [root, *root.children(recursive=True)]:
        try:
            usage[proc.pid] = process_memory(proc.pid)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass  # a worker that exited between listing and reading
    return usage


@dataclass
class MemoryPeak:
    """Peaks over the samples of a :class:`TreeMemorySampler`, in bytes."""

    pss: int = 0  # peak of the tree's summed PSS
    rss: int = 0  # peak of the tree's summed RSS
    processes: int = 0  # processes alive at the PSS peak
    at_peak: dict[int, dict[str, int]] = field(default_factory=dict)  # per-process usage at the PSS peak
    samples: int = 0


class TreeMemorySampler:
    """Context manager sampling :func:`tree_memory` of ``pid`` from a background thread every ``interval`` s.

    >>> with TreeMemorySampler(os.getpid(), interval=0.05) as sampler:
    ...     block = np.ones(2**23)  # 64 MiB, written so it is resident
    >>> sampler.peak.samples >= 2 and sampler.peak.pss > block.nbytes
    True
    """

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval}")
        self.pid = pid
        self.interval = interval
        self.peak = MemoryPeak()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tree-memory-sampler", daemon=True)

    def sample(self) -> None:
        """Take one sample now and update the peaks."""
        usage = tree_memory(self.pid)
        pss = sum(u["pss"] for u in usage.values())
        rss = sum(u["rss"] for u in usage.values())
        p = self.peak
        p.samples += 1
        p.rss = max(p.rss, rss)
        if pss > p.pss:
            p.pss, p.processes, p.at_peak = pss, len(usage), usage

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> "TreeMemorySampler":
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


@dataclass
class ScaleResult:
    """What :func:`measure_scale` reports (bytes and seconds)."""

    nodes: int
    edges: int  # undirected edges after removing self-loops and repeats
    max_degree: int
    graph_bytes: int  # the graph's sparse formats (COO, CSR, CSC) after training
    formats: list[str]
    generate_s: float
    train_s: float
    steps: int
    baseline_pss: int  # the tree before generating the graph (interpreter and libraries)
    peak: MemoryPeak


def format_bytes(g: dgl.DGLGraph, fmt: str) -> int:
    """Bytes of ``g``'s ``fmt`` arrays (COO: src, dst; CSR/CSC: indptr, indices, edge ids), computed from the
    counts because ``adj_tensors("coo")`` returns fresh copies."""
    if fmt not in ("coo", "csr", "csc"):
        raise ValueError(f"fmt must be coo, csr or csc, got {fmt!r}")
    entries = 2 * g.num_edges() + (0 if fmt == "coo" else g.num_nodes() + 1)
    return entries * g.idtype.itemsize


def measure_scale(
    nodes: int,
    edges: int,
    steps: int,
    batch_size: int = 32,
    workers: int = 2,
    seed: int = 0,
    exponent: float = 2.5,
    interval: float = 0.2,
) -> ScaleResult:
    """Generate a Chung–Lu graph, pre-train ``gcc`` on it for ``steps`` steps, and track this process tree.

    The memory sampler watches the calling process and its DataLoader workers from before generation to the
    end of training; the run folder goes to a temporary directory.
    """
    with TreeMemorySampler(os.getpid(), interval) as sampler, tempfile.TemporaryDirectory() as out:
        baseline = sampler.peak.pss
        start = time.perf_counter()
        g = powerlaw_graph(nodes, edges, np.random.default_rng(seed), exponent)
        generated = time.perf_counter()
        cfg = make_config("gcc", {"train": {"steps": steps, "batch_size": batch_size, "num_workers": workers,
                                            "seed": seed, "output_dir": out, "save_freq": steps}})
        pretrain(cfg, progress=False, graphs=[g])
        trained = time.perf_counter()
        formats = g.formats()["created"]
        graph_bytes = sum(format_bytes(g, fmt) for fmt in formats)
        result = ScaleResult(nodes, g.num_edges() // 2, int(g.in_degrees().max()), graph_bytes, formats,
                             generated - start, trained - generated, steps, baseline, sampler.peak)
    return result


def format_scale(r: ScaleResult) -> str:
    """A few lines: graph, times, peak tree PSS and RSS, and the per-process split at the PSS peak."""
    mb = 2**20
    lines = [
        f"graph: {r.nodes:,} nodes, {r.edges:,} undirected edges (max degree {r.max_degree}); "
        f"generated in {r.generate_s:.1f} s; {r.steps} steps of gcc in {r.train_s:.1f} s "
        f"(load + steps {r.generate_s + r.train_s:.1f} s)",
        f"graph arrays ({', '.join(r.formats)}): {r.graph_bytes / mb:,.0f} MiB, built before the DataLoader forks "
        "its workers",
        f"peak tree PSS {r.peak.pss / mb:,.0f} MiB | peak tree RSS (sum, double-counts shared pages) "
        f"{r.peak.rss / mb:,.0f} MiB | before generation PSS {r.baseline_pss / mb:,.0f} MiB | "
        f"{r.peak.samples} samples",
        "at the PSS peak, per process (MiB): "
        + "; ".join(f"pid {pid}: RSS {u['rss'] / mb:,.0f} PSS {u['pss'] / mb:,.0f} private {u['private'] / mb:,.0f}"
                    for pid, u in r.peak.at_peak.items()),
    ]
    return "\n".join(lines)
