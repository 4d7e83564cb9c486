"""The budget study, computed from result rows: learning curves (score against pre-training steps), the rule
that finds where GCC's curve flattens (the tables' budget, the curve's last point, is checked against it), and the
fidelity check of GCC at that budget against GCC's published E2E numbers.

Curves come from rows of encoders pre-trained for different ``steps`` with one batch size and corpus (the
family with the most distinct step counts, unless given); 0 steps is the untrained encoder.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow
from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, Rows, cv_settings, seed_means
from gcc_sgcl.experiments.studies.markdown import pyplot, save_panels, count, label, markdown_table, write_csv
from gcc_sgcl.experiments.tables import BASELINE, Budget, table_budget

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


def curves_section(curves: list[Curve], png: Path, csv_path: Path) -> str:
    """The learning curves as a Markdown table (method × column, one cell per step count), CSV and PNG."""
    steps = sorted({s for c in curves for s in c.steps})
    write_csv(csv_path, ["method", "dataset", "metric", "steps", "mean", "spread", "spread_kind", "seeds"],
              [[c.method, c.dataset, c.metric, s, m, spread, "std over seeds" if len(c.seeds) > 1 else
                "std over CV repetitions", " ".join(map(str, c.seeds)) or ""]
               for c in curves for s, m, spread in zip(c.steps, c.means, c.spreads or [None] * len(c.steps))])
    plot_curves(curves, png)
    body = [[c.method, f"{label(c.dataset)} {c.metric}", len(c.seeds)]
            + [f"{100 * dict(zip(c.steps, c.means))[s]:.2f}" if s in c.steps else "–" for s in steps]
            for c in curves]
    return markdown_table(["method", "column", "seeds"] + [f"{s} steps" for s in steps], body)


def plot_curves(curves: list[Curve], png: Path) -> None:
    """Score against pre-training steps (symmetric-log x axis, so 0 steps shows), one panel per column; bars are
    the curves' spreads (std over seeds, or one seed's std over its CV repetitions)."""
    plt = pyplot()
    columns = list(dict.fromkeys((c.dataset, c.metric) for c in curves))
    fig, axes = plt.subplots(1, len(columns), figsize=(3.2 * len(columns), 3.2), squeeze=False)
    for ax, (dataset, metric) in zip(axes[0], columns):
        for c in curves:
            if (c.dataset, c.metric) == (dataset, metric):
                ax.errorbar(c.steps, [100 * m for m in c.means], yerr=[100 * e for e in c.spreads] or None,
                            marker="o", capsize=2, label=c.method)
        ax.set_xscale("symlog", linthresh=max(1, min((s for c in curves for s in c.steps if s > 0), default=1)))
        ax.set_title(f"{label(dataset)} {metric}", fontsize=9)
        ax.set_xlabel("pre-training steps")
    save_panels(fig, axes, png)


def budget_text(choice: BudgetChoice, changes: dict[int, Sequence[tuple[Curve, float]]], method: str = "gcc") -> str:
    """Where the rule finds ``method``'s curve flat and whether it holds at the tables' budget (the curve's last
    point), as prose, then each curve's change per doubling (``changes`` per step count,
    :func:`~gcc_sgcl.experiments.studies.budget.changes_at`) and how many columns each method is flat on there."""
    counts = ", ".join(f"{s} steps: {choice.flat_columns[s]} of {choice.measured_columns[s]}"
                       for s in choice.flat_columns)
    rule = (f"the smallest step count at which `{method}`'s score changes by less than "
            f"{100 * choice.tolerance:.1f} pt per doubling of the steps (change from the previous measured count "
            f"divided by log2 of their ratio) on most columns")
    last = choice.last
    tables = f"the tables are at the curve's last point, {last} steps, the budget every table encoder is trained at"
    if not choice.flat:
        text = f"**No step count meets the rule yet** ({rule}); {tables}."
    elif choice.steps == last:
        text = (f"**The curve flattens at {last} steps** — {rule}; {tables}. No longer run was measured, so "
                "flatness beyond it is not shown.")
    else:
        holds = "the rule holds there too" if choice.flat_at(last) else "the rule does not hold there"
        text = (f"**The curve flattens at {choice.steps} steps** — {rule}; {tables}, and {holds} "
                f"({choice.flat_columns[last]} of {choice.measured_columns[last]} columns flat).")
    text += f" Flat columns per step count: {counts}. The rule reads `{method}`'s curve only."
    found = [c for at in changes.values() for c, _ in at]
    if not found:
        return text
    methods = list(dict.fromkeys(c.method for c in found))
    columns = list(dict.fromkeys((c.dataset, c.metric) for c in found))
    body = []
    for s, at in changes.items():
        for m in methods:
            mine = {(c.dataset, c.metric): v for c, v in at if c.method == m}
            if mine:
                body.append([f"`{m}`", str(s), *("–" if col not in mine else f"{100 * mine[col]:+.3f}" for col in columns),
                             f"{sum(abs(v) < choice.tolerance for v in mine.values())} of {len(mine)}"])
    return (text + f" Change per doubling (pt; flat: |change| < {100 * choice.tolerance:.1f}):\n\n"
            + markdown_table(["method", "steps", *(f"{label(d)} {metric}" for d, metric in columns),
                              "flat columns"], body))


def fidelity_section(table: list[Fidelity], csv_path: Path, corpus: str, cv: list[tuple[int, int]]) -> str:
    """The fidelity table (header ``| dataset | published | gcc | difference |``), the bar's verdict and, per miss,
    the setting's differences from GCC's (``corpus`` and the rows' CV ``(repetitions, folds)``) and the
    training-free evidence."""
    write_csv(csv_path, ["dataset", "published", "gcc", "difference", "seeds", "best_training_free", "floor"],
              [[f.dataset, f.published, f.measured, f.difference, f.seeds, f.floor_method, f.floor] for f in table])
    body = [[label(f.dataset), f"{f.published:.1f}",
             "–" if f.measured is None else f"{f.measured:.2f} ({count(f.seeds, 'seed')})",
             "–" if f.difference is None else f"{f.difference:+.2f}"] for f in table]
    within = [label(f.dataset) for f in table if f.within]
    measured = sum(f.measured is not None for f in table)
    verdict = (f"Within {FIDELITY_TOLERANCE:g} pt of the published number on {len(within)} of {len(table)} columns "
               f"({', '.join(within) or 'none'}; {measured} measured); the bar is {FIDELITY_MIN_COLUMNS} of "
               f"{len(table)}: **{'met' if fidelity_passes(table) else 'not met'}**.")
    misses = [f for f in table if f.measured is not None and not f.within]
    if misses:
        verdict += (" Where the difference is larger, the setting differs from GCC's in ways the numbers cannot "
                    f"separate: the corpus (`{corpus}` here, GCC's six larger graphs there), the budget, the "
                    f"seeds run (see the gcc column), and the protocol ("
                    + " / ".join(f"{r} repetitions of {f}-fold CV" for r, f in cv)
                    + " with bootstrapped test folds here; GCC reported one 10-fold CV). The training-free rows, "
                    "scored under this report's protocol, "
                    "show how generous the evaluation is on each such column:\n\n" + "\n".join(
                        f"- {label(f.dataset)}: gcc {f.measured:.2f}, published {f.published:.1f} "
                        f"({f.difference:+.2f} pt); "
                        + (f"best training-free row `{f.floor_method}` {f.floor:.2f} "
                           f"({f.floor - f.published:+.2f} pt against GCC's published score)."
                           if f.floor is not None else "no training-free row under this protocol yet.")
                        for f in misses))
    return markdown_table(["dataset", "published", "gcc", "difference"], body) + "\n\n" + verdict


def sections(t: Tables) -> list[str]:
    """The budget study of ``t.study`` (:func:`budget_study`: learning curve, the rule's verdict) and the fidelity of
    ``t.table`` (the rows at the tables' budget) to GCC's published numbers; empty without a curve. SGCL's curve is
    the plain preset's, at ``t.default_c``."""
    study, table, folder, default_c = t.study, t.table, t.folder, t.default_c
    family, curves, choice, _ = study
    if choice is None or family is None:
        return []
    png = folder / "learning_curve.png"
    parts = [
        "## Budget study: score against pre-training steps (E2E, frozen encoders)",
        f"Batch {family[0]}, corpus `{family[1]}`; SGCL's curve is at c = {default_c:g}, the default when it ran (the "
        "c grid ran afterwards, at the table budget, and chose the tables' c). Each point is the mean over the seeds run at every step count "
        "of its curve (0 steps: the untrained encoder); the figure's bars are the std over those seeds, or with one "
        "seed the std over its CV repetitions (the table's cells' ± elsewhere in this report).",
        f"![learning curve]({t.link(png)})",
        curves_section(curves, png, folder / "learning_curve.csv"),
        budget_text(choice, {s: changes_at(curves, s) for s in dict.fromkeys((choice.steps, choice.last))}),
    ]
    rows = Rows(table)
    for mode in PUBLISHED_GCC:
        checked = fidelity(rows, mode)
        if any(f.measured is not None for f in checked):
            name = MODE_NAMES[mode]
            parts += [f"### Fidelity: GCC {name} at the table budget against GCC's published {name} numbers",
                      fidelity_section(checked, folder / f"fidelity{'' if mode == 'e2e' else '_' + mode}.csv",
                                       family[1], cv_settings(rows, CLASSIFICATION)),
                      offset_line(checked)]
    if any(f.measured is not None for f in fidelity(rows)):
        parts.append("Which differences from GCC's protocol could lift every column, and the test of the main one: "
                     "[fidelity.md](fidelity.md).")
    return parts


def offset_line(table: Sequence[Fidelity]) -> str:
    """Whether the measured columns sit on one side of the published ones: a one-sided offset is not a match,
    whatever the tolerance says.

    >>> offset_line([Fidelity("a", 70.0, 71.0, 8), Fidelity("b", 60.0, 63.5, 8), Fidelity("c", 50.0, None, 0)])
    'Measured − published: +1.00 to +3.50 pp, mean +2.25 pp; 2 of 2 measured columns above the published number, 0 below: a one-sided offset, not a match.'
    """
    diffs = [f.difference for f in table if f.difference is not None]
    if not diffs:
        return ""
    above, below = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    side = (": a one-sided offset, not a match." if len(diffs) >= 2 and (above == len(diffs) or below == len(diffs))
            else ".")
    return (f"Measured − published: {min(diffs):+.2f} to {max(diffs):+.2f} pp, mean {float(np.mean(diffs)):+.2f} pp; "
            f"{above} of {len(diffs)} measured columns above the published number, {below} below{side}")


def budget_study(rows: Sequence[ResultRow]) -> tuple[tuple | None, list[Curve], BudgetChoice | None, Budget | None]:
    """The learning curves' family and curves, the budget rule's verdict, and the tables' budget: the curve's
    last step count (the sweep trains the table encoders there), else the one budget of the trained rows."""
    family = curve_family(rows)
    curves = learning_curves(rows, family=family)
    choice = choose_budget(curves)
    if choice is None or family is None:
        return family, curves, choice, table_budget(rows)
    return family, curves, choice, (choice.last, *family)


# GCC's paper, frozen encoder (Tables 2 and 3, repeated in the SGCL paper's tables), in %
PUBLISHED_GCC_E2E = {"usa_airport": 64.8, "h-index": 78.3, "imdb-binary": 71.7, "imdb-multi": 49.3,
                     "collab": 74.7, "rdt-b": 87.5}
PUBLISHED_GCC_MOCO = {"usa_airport": 65.6, "h-index": 75.2, "imdb-binary": 72.0, "imdb-multi": 49.4,
                      "collab": 78.9, "rdt-b": 89.8}
PUBLISHED_GCC = {"e2e": PUBLISHED_GCC_E2E, "moco": PUBLISHED_GCC_MOCO}
MODE_NAMES = {"e2e": "E2E", "moco": "MoCo"}


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
    """GCC (``gcc``, ``mode``, frozen encoder) against its published numbers of that mode (:data:`PUBLISHED_GCC`),
    per column, with the best
    training-free method there (mean over its seeds); ``table`` holds the rows of one budget and protocol
    (:meth:`~gcc_sgcl.experiments.tables.TableSpec.select`)."""
    columns = {d: (d, t, m) for d, t, m in table.columns(CLASSIFICATION)}
    out = []
    for dataset, published in PUBLISHED_GCC[mode].items():
        column = columns.get(dataset)
        means = table.seeds(BASELINE, mode, *column) if column else {}
        floors = seed_means(table, table.methods(classical=True), CLASSICAL_MODE, *column) if column else {}
        best = max(floors, key=floors.get) if floors else None
        out.append(Fidelity(dataset, published, 100 * float(np.mean(list(means.values()))) if means else None,
                            len(means), best, 100 * floors[best] if best else None))
    return out


def fidelity_passes(table: Sequence[Fidelity]) -> bool:
    """The fidelity bar: within :data:`FIDELITY_TOLERANCE` on at least :data:`FIDELITY_MIN_COLUMNS` columns."""
    return sum(f.within for f in table) >= FIDELITY_MIN_COLUMNS
