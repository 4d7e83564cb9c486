"""Random walks with restart (GCC's semantics) for a whole batch of start nodes at once.

GCC (DGL 0.4's ``random_walk_with_restart(max_nodes_per_seed=…)``): walks leave the start node, the first step
is always taken, after each step the walk restarts at the start node with probability ``p`` (and after
``walk_length`` steps in any case), and walking stops once ``max_nodes_per_seed`` nodes have been visited (the
start node is not counted unless a step returns to it). The view is the start node followed by the other
distinct visited nodes in increasing order.

Here every walker of the batch advances one step per iteration as array operations over the parent's CSR;
the random numbers of row ``r`` at iteration ``t`` are those of its :class:`~gcc_sgcl.sampling.keys.KeyedRandom`
row at counters ``2t`` (neighbour) and ``2t + 1`` (restart), so a row's walk depends on its key only.
"""
from __future__ import annotations

import math

import numpy as np

from gcc_sgcl.sampling.batch import offsets, positions
from gcc_sgcl.sampling.keys import KeyedRandom


def max_nodes_per_seed(degree: np.ndarray | int, rw_hops: int, restart_prob: float) -> np.ndarray:
    """GCC's visit budget: ``max(rw_hops, round(deg^0.75 · e/(e−1) / restart_prob))`` (elementwise)."""
    scaled = np.asarray(degree, dtype=np.float64) ** 0.75 * math.e / (math.e - 1) / restart_prob
    return np.maximum(rw_hops, np.floor(scaled + 0.5).astype(np.int64))


def rwr_visits(
    indptr: np.ndarray,
    indices: np.ndarray,
    starts: np.ndarray,
    budgets: np.ndarray,
    restart_prob: float,
    walk_length: int,
    rng: KeyedRandom,
) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, visits)``: the nodes visited (with repeats, in walk order) from each start, concatenated.

    Row ``r`` walks from ``starts[r]`` until ``budgets[r]`` nodes have been visited; a start without
    out-neighbours visits nothing, and a walk reaching a node without out-neighbours restarts.
    """
    starts = np.asarray(starts, dtype=np.int64)
    budgets = np.asarray(budgets, dtype=np.int64)
    degree = np.diff(indptr)
    counts = np.where(degree[starts] > 0, budgets, 0)
    visits = np.empty(int(counts.sum()), dtype=np.int64)
    write = offsets(counts)[:-1].copy()
    rows = np.flatnonzero(counts > 0)
    keys = KeyedRandom(rng.keys[rows])
    cur, left = starts[rows].copy(), counts[rows].copy()
    in_walk = np.zeros(len(rows), dtype=np.int64)
    step = 0
    while len(rows):
        u, v = keys.at(np.broadcast_to(np.array([2 * step, 2 * step + 1]), (len(rows), 2))).T
        d = degree[cur]
        moving = d > 0
        nxt = np.where(moving, indices[np.minimum(indptr[cur] + (u * d).astype(np.int64), len(indices) - 1)], -1)
        visits[write[rows[moving]]] = nxt[moving]
        write[rows[moving]] += 1
        left -= moving
        in_walk += 1
        restart = ~moving | (v < restart_prob) | (in_walk >= walk_length)
        cur = np.where(restart, starts[rows], nxt)
        in_walk[restart] = 0
        step += 1
        alive = left > 0
        if not alive.all():
            rows, keys, cur, left, in_walk = rows[alive], keys.take(alive), cur[alive], left[alive], in_walk[alive]
    return counts, visits


def view_node_sets(starts: np.ndarray, counts: np.ndarray, visits: np.ndarray, num_parent_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(num_nodes, nodes)``: per row its start node, then the other distinct visited nodes in increasing order.

    >>> view_node_sets(np.array([5, 1]), np.array([3, 2]), np.array([2, 5, 2, 4, 0]), 6)
    (array([2, 3]), array([5, 2, 1, 0, 4]))
    """
    row = np.repeat(np.arange(len(starts)), counts)
    code = np.unique(row * num_parent_nodes + visits)
    row, node = code // num_parent_nodes, code % num_parent_nodes
    others = node != np.asarray(starts)[row]
    row, node = row[others], node[others]
    num_nodes = np.bincount(row, minlength=len(starts)) + 1
    out = np.empty(int(num_nodes.sum()), dtype=np.int64)
    ptr = offsets(num_nodes)
    out[ptr[:-1]] = starts
    out[ptr[:-1][row] + 1 + positions(num_nodes - 1)] = node
    return num_nodes, out
