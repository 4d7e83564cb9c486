"""Similar / diverse filtering of candidate view pairs (SGCL's augmentation filter).

Runs *before* views are built, on the node sets of candidate random-walk pairs, so a rejected candidate costs
no eigendecomposition. A pair is scored by the cosine of its views' summed global-embedding rows
(:func:`~gcc_sgcl.augment.functional.view_similarity`). Rejected pairs -- only those -- are redrawn; after
``t_max`` tries the last pair is used anyway (the appendix: "If ``G'_i, G''_i`` do not pass in ``t_max`` tries,
we proceed to the next step").
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import check_probability
from gcc_sgcl.sampling.batch import NodeSets
from gcc_sgcl.sampling.keys import KeyedRandom

# similar: cos > 1 - c (avoid noisy pairs); diverse: cos < 1 - c (the ablation's alternative).
_ACCEPTS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {"similar": operator.gt, "diverse": operator.lt}
FILTER_MODES = tuple(_ACCEPTS)
"""The filter's modes (``AugmentConfig.filter_mode``)."""

Walk = Callable[[np.ndarray, KeyedRandom], NodeSets]
"""``walk(rows, rng) -> node sets`` of candidate views for the pairs ``rows`` (``rng`` rows align with ``rows``)."""


@dataclass(frozen=True)
class FilterOutcome:
    """Per pair: whether it was filtered at all (probability ``p``), how many candidates were drawn, and whether
    the one kept passes the threshold (``False`` for a filtered pair that used up its ``t_max`` tries; ``True``
    for pairs not filtered)."""

    filtered: np.ndarray
    tries: np.ndarray
    passed: np.ndarray


class ViewFilter:
    """Accept a candidate pair when its similarity passes the ``1 - c`` threshold.

    Args:
        mode: ``"similar"`` (accept ``cos > 1 - c``) or ``"diverse"`` (accept ``cos < 1 - c``).
        c: threshold constant in ``[0, 1]``.
        t_max: most candidate pairs drawn per pair.
        p: probability of filtering a pair at all; otherwise its first candidate is used.

    >>> ViewFilter("similar", c=0.3, t_max=5, p=0.5)
    ViewFilter(mode='similar', c=0.3, t_max=5, p=0.5)
    """

    def __init__(self, mode: str = "similar", c: float = 0.3, t_max: int = 5, p: float = 1.0):
        if mode not in _ACCEPTS:
            raise ValueError(f"mode must be one of {sorted(_ACCEPTS)}, got {mode!r}")
        if not 0.0 <= c <= 1.0:
            raise ValueError(f"c must be in [0, 1], got {c}")
        if t_max < 1:
            raise ValueError(f"t_max must be >= 1, got {t_max}")
        self.mode = mode
        self.c = float(c)
        self.t_max = int(t_max)
        self.p = check_probability("p", p)

    def accept(self, q: NodeSets, k: NodeSets, global_emb: np.ndarray) -> np.ndarray:
        """Whether each pair's views, with these global-embedding rows, pass the threshold."""
        sims = F.view_similarity(F.segment_sums(global_emb[q.nodes], q.num_nodes),
                                 F.segment_sums(global_emb[k.nodes], k.num_nodes))
        return _ACCEPTS[self.mode](sims, 1.0 - self.c)

    def select(self, walk: Walk, rows: int, global_emb: np.ndarray,
               rng: KeyedRandom) -> tuple[NodeSets, NodeSets, FilterOutcome]:
        """``(q, k, outcome)``: each pair's first accepted candidate, or its last of ``t_max`` tries.

        Pair ``r`` is filtered with probability ``p`` (stream ``"filter"``); try ``t`` of pair ``r`` draws its
        query / key walks from streams ``("try t", "q" / "k")``. ``outcome.tries`` counts the candidates drawn per
        pair.
        """
        everyone = np.arange(rows)
        q, k = (walk(everyone, rng.child("try0").child(side)) for side in ("q", "k"))
        tries = np.ones(rows, dtype=np.int64)
        filtered = rng.child("filter").uniform() < self.p
        pending = np.flatnonzero(filtered)
        pending = pending[~self.accept(q.select(pending), k.select(pending), global_emb)]
        for t in range(1, self.t_max):
            if len(pending) == 0:
                break
            sub = rng.take(pending).child(f"try{t}")
            new_q, new_k = walk(pending, sub.child("q")), walk(pending, sub.child("k"))
            q, k = q.update(pending, new_q), k.update(pending, new_k)
            tries[pending] += 1
            pending = pending[~self.accept(new_q, new_k, global_emb)]
        passed = np.ones(rows, dtype=bool)
        passed[pending] = False
        return q, k, FilterOutcome(filtered, tries, passed)

    def __repr__(self) -> str:
        return f"ViewFilter(mode={self.mode!r}, c={self.c}, t_max={self.t_max}, p={self.p})"
