"""Random walks with restart (GCC's semantics) for a whole batch of start nodes at once.

GCC (DGL 0.4's ``random_walk_with_restart(max_nodes_per_seed=…)``): walks leave the start node, the first step
is always taken, after each step the walk restarts at the start node with probability ``p`` (and after
``walk_length`` steps in any case), and walking stops once ``max_nodes_per_seed`` nodes have been visited (the
start node is not counted unless a step returns to it). The view is the start node followed by the other
distinct visited nodes in increasing order. DGL 0.4 checks the budget between walks, so its last walk may overrun
it by a few visits (a walk restarts with probability 0.8 after each step); here the visits are cut at exactly the
budget.

Here all walks of all start nodes advance together, one step per iteration, as array operations over the
parent's CSR; every random number comes from the row's :class:`~gcc_sgcl.sampling.keys.KeyedRandom` key at a
counter fixed by (walk, step), so a row's walks depend on its key only.
"""
from __future__ import annotations

import math

import numpy as np

from gcc_sgcl.config import VISIT_BUDGETS
from gcc_sgcl.sampling.batch import distinct, offsets, positions
from gcc_sgcl.sampling.keys import KeyedRandom


def max_nodes_per_seed(degree: np.ndarray | int, rw_hops: int, restart_prob: float,
                       power: float = VISIT_BUDGETS["pretrain"]) -> np.ndarray:
    """GCC's visit budget: ``max(rw_hops, round(deg^power · e/(e−1) / restart_prob))`` (elementwise); ``power``
    0.75 in GCC's pre-training, 1 in its ``generate.py`` (:data:`~gcc_sgcl.config.VISIT_BUDGETS`).

    >>> max_nodes_per_seed(np.array([10, 200, 1000]), 256, 0.8).tolist()
    [256, 256, 352]
    >>> max_nodes_per_seed(np.array([10, 200, 1000]), 256, 0.8, power=1.0).tolist()
    [256, 395, 1977]
    """
    scaled = np.asarray(degree, dtype=np.float64) ** power * math.e / (math.e - 1) / restart_prob
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
    out-neighbours visits nothing, and a walk reaching a node without out-neighbours ends there. The walks of a
    row are independent, so all walks of all rows advance together (``walk_length`` iterations per round); a
    round launches about 1.2 times the walks a row still needs (a walk visits ``1 / restart_prob`` nodes on
    average) and rows short of their budget get another round. Walk ``w`` of row ``r`` draws its numbers at
    counters ``2 (w L + t)`` (neighbour) and ``2 (w L + t) + 1`` (restart) of row ``r``, ``L = walk_length``.
    """
    starts = np.asarray(starts, dtype=np.int64)
    degree = np.diff(indptr)
    counts = np.where(degree[starts] > 0, np.asarray(budgets, dtype=np.int64), 0)
    have = np.zeros(len(starts), dtype=np.int64)
    next_walk = np.zeros(len(starts), dtype=np.int64)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (row, walk * L + step, node)
    restart_at = math.ceil(restart_prob * 2**53)  # a walk goes on when its restart uniform is >= restart_prob
    rows = np.flatnonzero(counts > have)
    while len(rows):
        walks = np.ceil((counts - have)[rows] * restart_prob * 1.2).astype(np.int64) + 1
        walker_row = np.repeat(rows, walks)
        walker = np.repeat(next_walk[rows], walks) + positions(walks)
        next_walk[rows] += walks
        walkers = KeyedRandom(rng.keys[walker_row])
        cur = starts[walker_row]
        for t in range(walk_length):
            if not len(cur):
                break
            counter = (walker * walk_length + t) * 2
            d = degree[cur]
            if not (d > 0).all():  # a walk reaching a node without out-neighbours ends there
                moving = np.flatnonzero(d > 0)
                walker_row, walker, cur, counter, d = (a[moving] for a in (walker_row, walker, cur, counter, d))
                walkers = walkers.take(moving)
            cur = indices[indptr[cur] + (walkers.at(counter) * d).astype(np.int64)]
            found.append((walker_row, walker * walk_length + t, cur))
            have += np.bincount(walker_row, minlength=len(starts))
            going_on = np.flatnonzero(walkers.mantissas(counter + 1) >= restart_at)
            walker_row, walker, cur = walker_row[going_on], walker[going_on], cur[going_on]
            walkers = walkers.take(going_on)
        rows = np.flatnonzero(counts > have)
    if not found:
        return counts, np.zeros(0, dtype=np.int64)
    row, order_key, node = (np.concatenate(parts) for parts in zip(*found))
    # by row, then walk and step: one stable sort of a combined key (the steps' arrays are sorted runs)
    order = np.argsort(row * (int(order_key.max()) + 1) + order_key, kind="stable")
    row, node = row[order], node[order]
    keep = positions(np.bincount(row, minlength=len(starts))) < counts[row]
    return counts, node[keep]


def view_node_sets(starts: np.ndarray, counts: np.ndarray, visits: np.ndarray,
                   num_parent_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(num_nodes, nodes)``: per row its start node, then the other distinct visited nodes in increasing order.

    >>> view_node_sets(np.array([5, 1]), np.array([3, 2]), np.array([2, 5, 2, 4, 0]), 6)
    (array([2, 3]), array([5, 2, 1, 0, 4]))
    """
    row = np.repeat(np.arange(len(starts)), counts)
    code = distinct(row * num_parent_nodes + visits)
    row, node = code // num_parent_nodes, code % num_parent_nodes
    others = node != np.asarray(starts)[row]
    row, node = row[others], node[others]
    num_nodes = np.bincount(row, minlength=len(starts)) + 1
    out = np.empty(int(num_nodes.sum()), dtype=np.int64)
    ptr = offsets(num_nodes)
    out[ptr[:-1]] = starts
    out[ptr[:-1][row] + 1 + positions(num_nodes - 1)] = node
    return num_nodes, out
