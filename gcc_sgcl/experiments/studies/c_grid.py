"""SGCL's filter threshold ``c``: the grid's scores at the table budget (one seed, E2E) and the rule that chooses
the tables' c from them (:func:`choose_c`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, Rows, c_of, c_variant, score_grid
from gcc_sgcl.experiments.studies.markdown import grid_section
from gcc_sgcl.experiments.tables import BASELINE, SGCL

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


@dataclass(frozen=True)
class CChoice:
    """SGCL's filter threshold chosen on the table's own columns (as the paper grid-searches ``c``): per grid
    point its mean score over ``columns`` (seed ``seed``), the default ``c`` (the plain ``sgcl`` preset) and the
    best."""

    scores: dict[float, float]
    columns: list[str]
    seed: int
    default_c: float
    best_c: float


def choose_c(rows: Rows, default_c: float, mode: str = "e2e", seed: int = 0) -> CChoice | None:
    """The grid point of ``sgcl`` (at ``default_c``) and its ``sgcl[c=…]`` variants with the highest mean
    ``seed`` score over the classification columns where every grid point has a row (ties: the default, then the
    smaller ``c``); ``None`` with fewer than two grid points or no shared column."""
    grid = {default_c: SGCL, **{c: m for m in rows.methods(classical=False) if (c := c_of(m)) is not None}}
    if len(grid) < 2:
        return None
    shared = [(d, t, m) for d, t, m in rows.columns(CLASSIFICATION)
              if all(seed in rows.seeds(name, mode, d, t, m) for name in grid.values())]
    if not shared:
        return None
    scores = {c: float(np.mean([rows.seeds(name, mode, d, t, m)[seed] for d, t, m in shared]))
              for c, name in sorted(grid.items())}
    best = max(scores, key=lambda c: (scores[c], c == default_c, -c))
    return CChoice(scores, [f"{d} {m}" for d, _, m in shared], seed, default_c, best)


def grid_gaps(rows: Rows, grid: Sequence[float], default_c: float, mode: str = "e2e",
              seed: int = 0) -> dict[float, list[str]]:
    """Per grid point (``default_c``: plain ``sgcl``), the classification columns (``"<dataset> <metric>"``)
    where ``gcc`` has a ``seed`` row and the point has none: the c grid is complete when every list is empty."""
    names = {c: SGCL if c == default_c else c_variant(c) for c in sorted({default_c, *grid})}
    return {c: [f"{d} {m}" for d, t, m in rows.columns(CLASSIFICATION)
                if seed in rows.seeds(BASELINE, mode, d, t, m) and seed not in rows.seeds(name, mode, d, t, m)]
            for c, name in names.items()}


def missing_grid_points(rows: Rows, grid: Sequence[float], default_c: float, mode: str = "e2e",
                        seed: int = 0) -> list[str]:
    """``"<method> on <dataset> <metric>"`` for every gap of :func:`grid_gaps`."""
    return [f"{SGCL if c == default_c else c_variant(c)} on {column}"
            for c, columns in grid_gaps(rows, grid, default_c, mode, seed).items() for column in columns]


def missing_c(rows: Rows, grid: Sequence[float], default_c: float, mode: str = "e2e", seed: int = 0) -> list[float]:
    """The grid points (``default_c`` among them) with a gap of :func:`grid_gaps`."""
    return [c for c, columns in grid_gaps(rows, grid, default_c, mode, seed).items() if columns]


def c_choice_text(choice: CChoice, missing: Sequence[float] = ()) -> str:
    """Which ``c`` the tables' ``sgcl`` row uses, and why (the default while grid points ``missing`` lack rows)."""
    scores = ", ".join(f"c = {c:g}: {100 * v:.2f}" for c, v in choice.scores.items())
    if missing:
        return (f"**The c grid is incomplete** (c = {', '.join(f'{c:g}' for c in missing)} without seed-"
                f"{choice.seed} rows on every column yet): the tables' `sgcl` row stays at the default c = "
                f"{choice.default_c:g} until it is complete. Among the points run, c = {choice.best_c:g} has the best "
                f"mean seed-{choice.seed} score over {len(choice.columns)} classification columns ({scores}).")
    kept = (f"The default-c row `sgcl[c={choice.default_c:g}]` is kept beside it."
            if choice.best_c != choice.default_c else "It is the default c.")
    return (f"**The tables' `sgcl` row uses c = {choice.best_c:g}**, the grid point with the best mean seed-"
            f"{choice.seed} score over {len(choice.columns)} classification columns ({scores}). As in the paper, "
            f"c is chosen on the table's own columns, so the `sgcl` row is optimistically selected; only its seed-"
            f"{choice.seed} encoder took part in the choice, its other seeds are fresh draws at that c (the "
            f"seed-by-seed tables show each seed's difference to GCC). {kept}")


def sections(t: Tables) -> list[str]:
    """The grid over SGCL's filter threshold ``c`` (the stored rows of the seed and columns ``t.choice`` used, every
    point named by its c) and which ``c`` the tables use (the default while the grid points ``t.missing`` lack
    rows); empty without a choice."""
    stored, spec, choice, folder, missing = t.stored, t.spec, t.choice, t.folder, t.missing
    if choice is None:
        return []
    used = Rows([r for r in spec.at_sgcl_c(None).select(stored)
                 if r.seed == choice.seed and f"{r.dataset} {r.metric}" in choice.columns])
    methods = [c_variant(c) for c in choice.scores]
    return ["## SGCL's filter threshold c (grid, E2E)",
            grid_section(*score_grid(used, ["e2e"], CLASSIFICATION, methods), folder / "c_grid.csv"),
            c_choice_text(choice, missing)]
