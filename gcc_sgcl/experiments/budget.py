"""The budget study, computed from result rows: learning curves (score against pre-training steps), the rule
that finds where GCC's curve flattens (the tables' budget, the curve's last point, is checked against it), the
fidelity check of GCC at that budget against GCC's published E2E numbers, and the fine-tuned rows beside the SGCL
paper's published fine-tuned ones.

Curves come from rows of encoders pre-trained for different ``steps`` with one batch size and corpus (the
family with the most distinct step counts, unless given); 0 steps is the untrained encoder.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from gcc_sgcl.experiments.analysis import BASELINE, CLASSICAL_MODE, CLASSIFICATION, FINETUNED, Rows, seed_means
from gcc_sgcl.experiments.rows import ResultRow

# GCC's paper, E2E, frozen encoder (Tables 2 and 3), in %
PUBLISHED_GCC_E2E = {"usa_airport": 64.8, "h-index": 78.3, "imdb-binary": 71.7, "imdb-multi": 49.3,
                     "collab": 74.7, "rdt-b": 87.5}
# The SGCL paper's appendix, E2E, fine-tuned encoders (its Tables "nl_fine_tune" and "gl_fine_tune"), in %
PUBLISHED_FINETUNED_E2E = {
    "gcc": {"usa_airport": 68.3, "h-index": 80.5, "imdb-binary": 70.8, "imdb-multi": 48.5, "collab": 79.0,
            "rdt-b": 86.4},
    "sgcl": {"usa_airport": 68.6, "h-index": 80.7, "imdb-binary": 72.8, "imdb-multi": 50.1, "collab": 79.8,
             "rdt-b": 87.4},
}
FIDELITY_TOLERANCE = 2.0  # percentage points
FIDELITY_MIN_COLUMNS = 4  # of the six published columns
FLAT_TOLERANCE = 0.005  # 0.5 pt, scores are fractions


@dataclass(frozen=True)
class Curve:
    """``method``'s score on (dataset, metric) after each number of pre-training ``steps``: the mean over
    ``seeds`` (the seeds present at every step count of this curve, so points compare the same encoders) and its
    spread: the std over those seeds' scores, or with one seed that encoder's std over its CV repetitions."""

    method: str
    dataset: str
    metric: str
    steps: tuple[int, ...]
    means: tuple[float, ...]
    seeds: tuple[int, ...]
    spreads: tuple[float, ...] = ()


def curve_family(rows: Sequence[ResultRow], mode: str = "e2e") -> tuple[int | None, str | None] | None:
    """The (batch size, corpus) whose pre-trained ``mode`` rows span the most distinct step counts (at least
    two), or ``None``."""
    steps: dict[tuple, set] = defaultdict(set)
    for r in rows:
        if r.mode == mode and r.steps is not None and r.task in CLASSIFICATION:
            steps[(r.batch_size, r.corpus)].add(r.steps)
    best = max(steps, key=lambda k: (len(steps[k]), str(k)), default=None)
    return best if best is not None and len(steps[best]) >= 2 else None


CURVE_METHODS = ("gcc", "sgcl[c=0.3]")
"""The methods of the learning curve: ``gcc`` and SGCL at the filter threshold it had when the curve ran (0.3, the
default before the c grid, which ran afterwards at the table budget and chose 0.4)."""


def learning_curves(rows: Sequence[ResultRow], methods: Sequence[str] = CURVE_METHODS, mode: str = "e2e",
                    family: tuple[int | None, str | None] | None = None) -> list[Curve]:
    """One :class:`Curve` per (method, classification column) with at least two step counts sharing a seed."""
    family = family or curve_family(rows, mode)
    if family is None:
        return []
    found: dict[tuple, dict[int, dict[int, ResultRow]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if (r.method in methods and r.mode == mode and r.task in CLASSIFICATION and r.steps is not None
                and (r.batch_size, r.corpus) == family):
            found[(r.method, r.dataset, r.metric)][r.steps][r.seed] = r
    out = []
    for (method, dataset, metric), by_steps in found.items():
        common = sorted(set.intersection(*(set(s) for s in by_steps.values())))
        if len(by_steps) >= 2 and common:
            steps = tuple(sorted(by_steps))
            points = [[by_steps[s][seed] for seed in common] for s in steps]
            out.append(Curve(method, dataset, metric, steps, tuple(float(np.mean([r.mean for r in p])) for p in points),
                             tuple(common), tuple(float(np.std([r.mean for r in p], ddof=1)) if len(p) > 1
                                                  else float(p[0].std) for p in points)))
    return sorted(out, key=lambda c: (methods.index(c.method), c.dataset))


def change_per_doubling(curve: Curve) -> dict[int, float]:
    """Per step count ``s`` after the first non-zero one: the score change from the previous measured count
    ``p`` divided by the doublings between them, ``(score(s) − score(p)) / log2(s / p)`` — the change over the
    last doubling when the curve is linear in log(steps) between the two."""
    points = [(s, m) for s, m in zip(curve.steps, curve.means) if s > 0]
    return {s: (m - pm) / np.log2(s / p) for (p, pm), (s, m) in zip(points, points[1:])}


def changes_at(curves: Sequence[Curve], steps: int) -> list[tuple[Curve, float]]:
    """Each curve that reaches ``steps`` from an earlier non-zero count, with its change per doubling there
    (:func:`change_per_doubling`)."""
    return [(c, ch[steps]) for c in curves if steps in (ch := change_per_doubling(c))]


@dataclass(frozen=True)
class BudgetChoice:
    """The rule's step count (the smallest flat one, else the largest measured), whether GCC's curve is flat
    there (``flat``: on more than half of the columns the change per doubling is below the tolerance), and per
    candidate step count the flat and measured column counts."""

    steps: int
    flat: bool
    flat_columns: dict[int, int]
    measured_columns: dict[int, int]
    tolerance: float

    @property
    def last(self) -> int:
        """The curve's largest measured step count."""
        return max(self.flat_columns)

    def flat_at(self, steps: int) -> bool:
        """Whether the rule holds at ``steps``: flat on more than half of the columns measured there."""
        return 2 * self.flat_columns[steps] > self.measured_columns[steps]


def choose_budget(curves: Sequence[Curve], method: str = BASELINE,
                  tolerance: float = FLAT_TOLERANCE) -> BudgetChoice | None:
    """The smallest step count where ``method``'s curve has flattened: |change per doubling| < ``tolerance``
    on most (more than half) of its columns; the largest measured count (``flat=False``) if none qualifies;
    ``None`` without two non-zero step counts."""
    changes = [change_per_doubling(c) for c in curves if c.method == method]
    candidates = sorted({s for ch in changes for s in ch})
    if not candidates:
        return None
    flat = {s: sum(abs(ch[s]) < tolerance for ch in changes if s in ch) for s in candidates}
    measured = {s: sum(s in ch for ch in changes) for s in candidates}
    largest = BudgetChoice(candidates[-1], False, flat, measured, tolerance)
    chosen = next((s for s in candidates if largest.flat_at(s)), None)
    return largest if chosen is None else replace(largest, steps=chosen, flat=True)


@dataclass(frozen=True)
class Fidelity:
    """One published column: GCC's published E2E score and this project's (mean over ``seeds``), both in %;
    ``measured`` is ``None`` without rows; ``floor`` the best training-free score among the rows given (in %), the
    evidence of how generous the evaluation is on that column."""

    dataset: str
    published: float
    measured: float | None
    seeds: int
    floor_method: str | None = None
    floor: float | None = None

    @property
    def difference(self) -> float | None:
        """Measured − published, in percentage points."""
        return None if self.measured is None else self.measured - self.published

    @property
    def within(self) -> bool:
        """Whether the measured score is within :data:`FIDELITY_TOLERANCE` of the published one."""
        return self.difference is not None and abs(self.difference) <= FIDELITY_TOLERANCE


def fidelity(table: Rows, mode: str = "e2e") -> list[Fidelity]:
    """GCC (``gcc``, ``mode``, frozen encoder) against :data:`PUBLISHED_GCC_E2E`, per column, with the best
    training-free method there (mean over its seeds); ``table`` holds the rows of one budget and protocol
    (:meth:`~gcc_sgcl.experiments.tables.TableSpec.select`)."""
    columns = {d: (d, t, m) for d, t, m in table.columns(CLASSIFICATION)}
    out = []
    for dataset, published in PUBLISHED_GCC_E2E.items():
        column = columns.get(dataset)
        means = table.seeds(BASELINE, mode, *column) if column else {}
        floors = seed_means(table, table.methods(classical=True), CLASSICAL_MODE, *column) if column else {}
        best = max(floors, key=floors.get) if floors else None
        out.append(Fidelity(dataset, published, 100 * float(np.mean(list(means.values()))) if means else None,
                            len(means), best, 100 * floors[best] if best else None))
    return out


@dataclass(frozen=True)
class Published:
    """A published score of ``method`` on ``dataset`` beside this project's (mean over ``seeds``), both in %;
    ``measured`` is ``None`` without rows."""

    method: str
    dataset: str
    published: float
    measured: float | None
    seeds: int

    @property
    def difference(self) -> float | None:
        """Measured − published, in percentage points."""
        return None if self.measured is None else self.measured - self.published


def published_finetuned(table: Rows, mode: str = "e2e") -> list[Published]:
    """Each fine-tuned column of ``table`` against :data:`PUBLISHED_FINETUNED_E2E`, per published method (the
    table's ``sgcl`` row is the one the report shows under that name), mean over the method's seeds."""
    out = []
    for dataset, task, metric in table.columns(FINETUNED):
        for method, published in PUBLISHED_FINETUNED_E2E.items():
            if dataset in published:
                means = table.seeds(method, mode, dataset, task, metric)
                out.append(Published(method, dataset, published[dataset],
                                     100 * float(np.mean(list(means.values()))) if means else None, len(means)))
    return out


def fidelity_passes(table: Sequence[Fidelity]) -> bool:
    """The fidelity bar: within :data:`FIDELITY_TOLERANCE` on at least :data:`FIDELITY_MIN_COLUMNS` columns."""
    return sum(f.within for f in table) >= FIDELITY_MIN_COLUMNS
