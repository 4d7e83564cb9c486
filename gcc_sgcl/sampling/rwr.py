"""Random walk with restart (GCC semantics) on DGL 1.1."""
from __future__ import annotations

import math

import contextlib
from typing import Iterator

import dgl
import numpy as np
import torch
from dgl.utils import get_num_threads, set_num_threads


def max_nodes_per_seed(degree: int, rw_hops: int, restart_prob: float) -> int:
    """GCC's visit budget: ``max(rw_hops, round(deg^0.75 · e/(e−1) / restart_prob))``."""
    return max(rw_hops, int(degree**0.75 * math.e / (math.e - 1) / restart_prob + 0.5))


def restart_schedule(restart_prob: float, walk_length: int) -> torch.Tensor:
    """Per-step restart probabilities ``[0, p, p, …]``.

    A scalar ``restart_prob`` in ``dgl.sampling.random_walk`` may also stop before the first step; GCC's
    walks always take it, so step 0 gets probability 0.
    """
    return torch.tensor([0.0] + [restart_prob] * (walk_length - 1), dtype=torch.float32)


@contextlib.contextmanager
def single_threaded_dgl() -> Iterator[None]:
    """Run DGL kernels on one OpenMP thread.

    ``dgl.seed`` gives every OpenMP thread the same seed, so a multi-threaded ``random_walk`` repeats the
    same random stream in each thread's chunk of walks and its output depends on the thread count.
    """
    previous = get_num_threads()
    set_num_threads(1)
    try:
        yield
    finally:
        set_num_threads(previous)


def rwr_visits(
    g: dgl.DGLGraph,
    start: int,
    max_visits: int,
    restart_prob: float,
    walk_length: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Visited nodes (with repeats, in walk order) of restart walks from ``start``, ``max_visits`` of them.

    Emulates DGL 0.4's ``random_walk_with_restart(max_nodes_per_seed=…)`` used by GCC: walks restart at
    ``start`` with probability ``restart_prob`` after each step, and walking stops once ``max_visits``
    nodes have been visited (the start node itself is not counted). DGL's own RNG is seeded from ``rng``,
    so the result is a function of the generator state. A node without neighbours yields no visits.
    """
    if g.in_degrees(start) == 0:
        return np.empty(0, dtype=np.int64)
    schedule = restart_schedule(restart_prob, walk_length)
    mean_visits = 1.0 / restart_prob  # first step always taken, each further one with prob 1 - p
    chunks, total = [], 0
    while total < max_visits:
        n_walks = int(math.ceil((max_visits - total) / mean_visits * 1.2)) + 1
        with single_threaded_dgl():
            dgl.seed(int(rng.integers(2**31 - 1)))
            traces, _ = dgl.sampling.random_walk(
                g, torch.full((n_walks,), start, dtype=torch.int64), length=walk_length, restart_prob=schedule
            )
        steps = traces[:, 1:].numpy().ravel()
        steps = steps[steps >= 0]
        chunks.append(steps)
        total += steps.size
    return np.concatenate(chunks)[:max_visits]


def rwr_subgraph_nodes(
    g: dgl.DGLGraph,
    start: int,
    rw_hops: int,
    restart_prob: float,
    walk_length: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Node ids of one RWR view: ``start`` first, then the other distinct visited nodes in increasing order."""
    budget = max_nodes_per_seed(int(g.in_degrees(start)), rw_hops, restart_prob)
    visited = np.unique(rwr_visits(g, start, budget, restart_prob, walk_length, rng))
    return np.concatenate([[start], visited[visited != start]]).astype(np.int64)
