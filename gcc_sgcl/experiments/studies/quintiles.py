"""SGCL − GCC by λ2 quintile of the test examples: does SGCL's advantage depend on how well connected a graph
(or a node's view) is?
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, Rows
from gcc_sgcl.experiments.studies.markdown import label, markdown_table, write_csv
from gcc_sgcl.experiments.tables import BASELINE

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


@dataclass(frozen=True)
class Quintiles:
    """On one dataset, over ``seeds`` paired seeds: per λ2 quintile, ``method``'s and ``gcc``'s mean out-of-fold
    accuracy and the quintile's λ2 range (from ``gcc``'s first paired row)."""

    dataset: str
    seeds: int
    mine: np.ndarray
    baseline: np.ndarray
    bounds: list[list[float]]


def lambda2_quintiles(rows: Rows, method: str, mode: str) -> list[Quintiles]:
    """:class:`Quintiles` of every classification dataset where both have quintile scores on a shared seed."""
    out = []
    for d, task, metric in rows.columns(CLASSIFICATION):
        mine = rows.by_key.get((method, mode, d, task, metric), {})
        base = rows.by_key.get((BASELINE, mode, d, task, metric), {})
        common = sorted(s for s in set(mine) & set(base) if mine[s].lambda2_quintiles and base[s].lambda2_quintiles)
        if common:
            out.append(Quintiles(d, len(common), np.array([mine[s].lambda2_quintiles for s in common]).mean(axis=0),
                                 np.array([base[s].lambda2_quintiles for s in common]).mean(axis=0),
                                 base[common[0]].lambda2_bounds))
    return out


def quintiles_section(items: list[Quintiles], method: str, csv_path: Path) -> str:
    """Per λ2 quintile: ``method`` − ``gcc`` (pp), GCC in brackets, the λ2 range; Markdown and CSV."""
    flat = [[q.dataset, i + 1, lo, hi, q.mine[i], q.baseline[i], q.seeds]
            for q in items for i, (lo, hi) in enumerate(q.bounds)]
    write_csv(csv_path, ["dataset", "quintile", "lambda2_min", "lambda2_max", method, "gcc", "seeds"], flat)
    if not items:
        return "_no quintile rows_"
    header = ["λ2 quintile"] + [f"{label(q.dataset)} (n seeds {q.seeds})" for q in items]
    body = [[f"Q{i + 1}"] + [f"{100 * (q.mine[i] - q.baseline[i]):+.2f} ({100 * q.baseline[i]:.1f}) "
                             f"[{q.bounds[i][0]:.3f}–{q.bounds[i][1]:.3f}]" for q in items]
            for i in range(len(items[0].bounds))]
    return markdown_table(header, body)


def sections(t: Tables) -> list[str]:
    """SGCL − GCC per λ2 quintile of the test examples (E2E)."""
    rows, folder = t.rows, t.folder
    return [
        "## SGCL − GCC by λ2 quintile of the test graphs (E2E)",
        "Test examples (graphs; for node datasets the node's RWR view) split into rank quintiles of the "
        "second-smallest normalised-Laplacian eigenvalue; cell = SGCL − GCC out-of-fold accuracy in pp, GCC's "
        "accuracy in brackets, the quintile's λ2 range in square brackets, averaged over paired seeds.",
        quintiles_section(lambda2_quintiles(rows, "sgcl", "e2e"), "sgcl", folder / "lambda2_quintiles.csv"),
    ]


