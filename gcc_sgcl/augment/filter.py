"""Similar / diverse filtering of candidate view pairs (SGCL's augmentation filter).

Runs *before* views are built: the sampler passes a ``draw()`` that returns the parent-graph node ids of two
candidate random-walk views, so a rejected candidate costs no eigendecomposition. The pair is scored by
:func:`~gcc_sgcl.augment.functional.view_similarity` (cosine of the summed global-embedding rows).

On rejection a new pair is drawn; after ``t_max`` tries the last pair is used anyway (the appendix: "If
``G'_i, G''_i`` do not pass in ``t_max`` tries, we proceed to the next step").
"""
from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from gcc_sgcl.augment import functional as F
from gcc_sgcl.augment.base import check_probability

# similar: cos > 1 - c (avoid noisy pairs); diverse: cos < 1 - c (the ablation's alternative).
_ACCEPTS: dict[str, Callable[[float, float], bool]] = {"similar": operator.gt, "diverse": operator.lt}


class ViewFilter:
    """Accept a candidate pair when its similarity passes the ``1 - c`` threshold.

    Args:
        mode: ``"similar"`` (accept ``cos > 1 - c``) or ``"diverse"`` (accept ``cos < 1 - c``).
        c: threshold constant in ``[0, 1]``.
        t_max: most candidate pairs drawn per call of :meth:`select`.
        p: probability of filtering at all; otherwise the first candidate is used.

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

    def accept(self, emb_q_rows: np.ndarray, emb_k_rows: np.ndarray) -> bool:
        """Whether the views with these global-embedding rows pass the threshold."""
        return _ACCEPTS[self.mode](F.view_similarity(emb_q_rows, emb_k_rows), 1.0 - self.c)

    def select(
        self,
        draw: Callable[[], tuple[np.ndarray, np.ndarray]],
        global_emb: np.ndarray,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """``(nodes_q, nodes_k, tries)``: the first accepted candidate, or the last of ``t_max`` tries.

        With probability ``1 - p`` (one draw from ``rng``, taken before any candidate) the first candidate is
        returned unscored. ``tries`` counts the calls of ``draw``.
        """
        filtering = rng.random() < self.p
        nodes_q, nodes_k = draw()
        tries = 1
        while filtering and tries < self.t_max and not self.accept(global_emb[nodes_q], global_emb[nodes_k]):
            nodes_q, nodes_k = draw()
            tries += 1
        return nodes_q, nodes_k, tries

    def __repr__(self) -> str:
        return f"ViewFilter(mode={self.mode!r}, c={self.c}, t_max={self.t_max}, p={self.p})"
