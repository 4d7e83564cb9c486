"""CuCo's curriculum of negatives (Chu et al., IJCAI 2021) on the logits of the contrastive step.

CuCo scores each negative by its similarity to the query and sorts them from easy (least similar) to hard; a pacing
function of the training progress sets how far into that order the negatives are drawn: at step ``t`` of ``T`` the
pool is the easiest ``ceil(g(t) K)`` of the ``K`` negatives, ``g(t) = ((t + 1) / T)^lambda``, and ``count`` ranks
are drawn uniformly with replacement from the pool, the same ranks for every query (BUPT-GAMMA/CuCo
``unsupervised_TU/cuco.py``: ``rank_negative_queue`` sorts the cosines ascending, ``sample_negative_index`` draws
``negative_number = 16`` ranks from ``U(1, (epoch / epochs)^lambda N)``, ``lamda = 1/2``). The drawn negatives
enter InfoNCE with their multiplicity: the loss is the cross-entropy of ``logits + log w``, ``w`` the number of
times a negative was drawn (``-inf``: not drawn; 0 for the positive), i.e. CuCo's
``-log(e^pos / (e^pos + sum_draws e^neg))``.

The encoder's embeddings are unit vectors, so the logits (dot products over the temperature) sort the negatives as
the cosine does. CuCo's pool is over the embeddings of the whole dataset, refreshed each epoch; GCC's setting has no
epochs and a corpus of millions of nodes, so the pool here is the step's own negatives (E2E: the other keys of the
batch; MoCo: the queue) and the pacing runs over steps.
"""
from __future__ import annotations

import math

import numpy as np
import torch


def pacing(step: int, total: int, power: float) -> float:
    """Share ``((step + 1) / total)^power`` of the negatives in the pool at ``step`` (0-based) of ``total``, in (0, 1].

    >>> pacing(0, 4, 0.5), pacing(3, 4, 0.5), pacing(1, 4, 1.0)
    (0.5, 1.0, 0.5)
    """
    if total < 1 or not 0 <= step:
        raise ValueError(f"step must be >= 0 of total >= 1 steps, got step {step} of {total}")
    if power <= 0:
        raise ValueError(f"power must be > 0, got {power}")
    return min(1.0, ((step + 1) / total) ** power)


def pool_size(step: int, total: int, power: float, negatives: int) -> int:
    """The easiest ``ceil(pacing * negatives)`` negatives (at least 1) make the pool at ``step``.

    >>> [pool_size(t, 6000, 0.5, 255) for t in (0, 1499, 5999)]
    [4, 128, 255]
    """
    return max(1, min(negatives, math.ceil(pacing(step, total, power) * negatives - 1e-9)))


def easy_to_hard(scores: torch.Tensor, positive: torch.Tensor) -> torch.Tensor:
    """``(B, C - 1)`` column indices of each row's negatives (every column but ``positive[b]``) by ascending score:
    easiest first (ties by column).

    >>> easy_to_hard(torch.tensor([[0.9, 0.1, 0.5], [0.2, 0.8, 0.3]]), torch.tensor([0, 1])).tolist()
    [[1, 2], [0, 2]]
    """
    ranked = scores.detach().clone()
    ranked[torch.arange(len(ranked), device=ranked.device), positive] = math.inf
    return ranked.argsort(dim=1, stable=True)[:, :-1]


def curriculum_log_weights(logits: torch.Tensor, positive: torch.Tensor, pool: int, ranks: np.ndarray) -> torch.Tensor:
    """``(B, C)`` log-multiplicities of the negatives drawn at easy-to-hard ``ranks`` (each ``< pool``) of every row,
    0 at the positive and ``-inf`` elsewhere; added to ``logits`` they make InfoNCE CuCo's loss.

    >>> logits = torch.tensor([[3.0, 0.1, 0.5, 0.2]])
    >>> curriculum_log_weights(logits, torch.tensor([0]), 2, np.array([0, 0, 1])).exp().tolist()
    [[1.0, 2.0, 0.0, 1.0]]
    """
    ranks = np.asarray(ranks, dtype=np.int64)
    if len(ranks) and not (0 <= ranks.min() and ranks.max() < pool):
        raise ValueError(f"ranks must lie in [0, {pool}), got {ranks.min()} .. {ranks.max()}")
    order = easy_to_hard(logits, positive)
    if pool > order.shape[1]:
        raise ValueError(f"pool {pool} exceeds the {order.shape[1]} negatives of a row")
    counts = torch.from_numpy(np.bincount(ranks, minlength=pool).astype(np.float64)).to(logits)
    weights = torch.zeros_like(logits).scatter_(1, order[:, :pool], counts.expand(len(logits), pool))
    weights[torch.arange(len(logits), device=logits.device), positive] = 1.0
    return weights.log()


def draw_ranks(pool: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` ranks uniform in ``[0, pool)``, with replacement (CuCo's ``stats.uniform(...).rvs`` cast to int)."""
    return rng.integers(0, pool, size=count)
