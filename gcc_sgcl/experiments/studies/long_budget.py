"""SGCL − GCC against the pre-training budget: does a longer budget change a verdict of the tables?

``bash scripts/reproduce.sh long`` pre-trains ``gcc`` and the tables' ``sgcl`` (E2E, the tables' batch and corpus)
at 2× and 4× the table budget for seeds 0–2, each a complete schedule of its own (the learning rate's warm-up and
decay depend on the total steps, so a checkpoint half-way through a long run is not the encoder a run of that
length gives), and stores their rows apart (``long_budget.jsonl.gz`` beside the tables' rows). Per frozen column
and budget: the mean SGCL − GCC over paired seeds with its 90 % Student-t interval, the table budget read on the
seeds paired at a longer budget.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from gcc_sgcl.experiments.rows import ResultRow, RowStore
from gcc_sgcl.experiments.studies.cells import (
    CLASSIFICATION, SIMILARITY, Column, Rows, SeedDifferences, seed_differences,
)
from gcc_sgcl.experiments.studies.markdown import (
    READINGS, pyplot, and_joined, count, interval_cell, interval_side, label, markdown_table, save_figure, write_csv,
)
from gcc_sgcl.experiments.tables import SGCL, TableSpec

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

MODE = "e2e"


def long_store(rows_path: Path) -> Path:
    """The long-budget row store beside the tables' (``long_budget.jsonl.gz`` beside ``rows.jsonl.gz``)."""
    return rows_path.with_name("long_budget.jsonl" + "".join(rows_path.suffixes[1:]))


@dataclass(frozen=True)
class BudgetDifference:
    """SGCL − GCC on one frozen ``column`` at each pre-training budget (steps → seed differences)."""

    column: Column
    by_steps: dict[int, SeedDifferences]

    def reading(self, steps: int) -> str | None:
        """The verdict at ``steps`` (:data:`~gcc_sgcl.experiments.studies.markdown.READINGS`), ``None`` without rows."""
        d = self.by_steps.get(steps)
        return READINGS[interval_side(d.summary)] if d else None


def budget_differences(table: Sequence[ResultRow], long: Sequence[ResultRow], spec: TableSpec,
                       tasks: Sequence[str] = CLASSIFICATION + SIMILARITY) -> list[BudgetDifference]:
    """SGCL − GCC per column of ``tasks`` at the table budget (``table``: the tables' rows) and at every budget of
    the ``long`` rows (read by ``spec`` at their steps); on each column the table budget keeps the seeds paired at
    a longer budget (a seed only one method has there so far does not count).

    >>> from gcc_sgcl.experiments.rows import ResultRow
    >>> def row(method, steps, seed, mean):
    ...     return ResultRow(method=method, mode="e2e", dataset="imdb-binary", task="graph_classification",
    ...                      metric="accuracy", seed=seed, mean=mean, std=0.0, std_kind="cv", n=1, protocol="p",
    ...                      steps=steps, batch_size=256, corpus="snap")
    >>> spec = TableSpec(100, "snap", {"e2e": 256}, default_c=0.3, sgcl_c=0.4)
    >>> table = [row(m, 100, s, v) for s in range(4) for m, v in (("gcc", 0.70), ("sgcl", 0.69 + 0.001 * s))]
    >>> long = [row(m, 400, s, v) for s in range(3) for m, v in (("gcc", 0.70), ("sgcl[c=0.4]", 0.72 + 0.001 * s))]
    >>> [(d.column.dataset, sorted(d.by_steps), d.reading(100), d.reading(400))
    ...  for d in budget_differences(table, long, spec)]
    [('imdb-binary', [100, 400], 'GCC ahead', 'SGCL ahead')]
    >>> [d.by_steps[100].seeds for d in budget_differences(table, long + [row("gcc", 400, 3, 0.7)], spec)]
    [(0, 1, 2)]
    """
    found: dict[Column, dict[int, SeedDifferences]] = {}
    for s in sorted({r.steps for r in long if r.mode == MODE and r.steps != spec.steps}):
        for d in seed_differences(Rows(dataclasses.replace(spec, steps=s).select(long)), SGCL, [MODE], tasks):
            found.setdefault(d.column, {})[s] = d
    paired = {(column, seed) for column, by in found.items() for d in by.values() for seed in d.seeds}
    base = Rows([r for r in table if (Column(r.dataset, r.task, r.metric, r.mode), r.seed) in paired])
    for d in seed_differences(base, SGCL, [MODE], tasks):
        found[d.column] = {spec.steps: d, **found[d.column]}
    return [BudgetDifference(c, by) for c, by in found.items() if spec.steps in by]


def changes(items: Sequence[BudgetDifference], base: int, longest: int) -> tuple[list[str], list[str]]:
    """The columns (labels) whose mean SGCL − GCC changes sign between ``base`` and ``longest`` steps, and those whose
    verdict (interval above 0, below 0 or containing it) changes."""
    both = [d for d in items if base in d.by_steps and longest in d.by_steps]
    sign = [_name(d.column) for d in both
            if (d.by_steps[base].summary.mean > 0) != (d.by_steps[longest].summary.mean > 0)]
    verdict = [_name(d.column) for d in both if d.reading(base) != d.reading(longest)]
    return sign, verdict


def _name(c: Column) -> str:
    return label(c.dataset) + ("" if c.metric == "accuracy" else f" {c.metric}")


def budget_sentence(items: Sequence[BudgetDifference], base: int) -> str:
    """One sentence: at the longest budget against ``base``, the columns whose sign and verdict change ('' without
    longer budgets); with one paired seed, which has no interval and so no verdict, the sign alone.

    >>> from gcc_sgcl.experiments.stats import summarize
    >>> from gcc_sgcl.experiments.studies.cells import Column, SeedDifferences
    >>> def at(*values):
    ...     return SeedDifferences(column, tuple(range(len(values))), values, summarize(list(values), interval="t"))
    >>> column = Column("imdb-binary", "graph_classification", "accuracy", "e2e")
    >>> one_seed = [BudgetDifference(column, {100: at(-0.01), 400: at(0.02)})]
    >>> print(budget_sentence(one_seed, 100))  # doctest: +NORMALIZE_WHITESPACE
    At 4× the table budget (400 steps), against 100 steps on the same seed (one so far: no verdict yet),
    SGCL − GCC changes sign on IMDB-B.
    """
    longest = max((s for d in items for s in d.by_steps), default=base)
    if longest == base:
        return ""
    seeds = max((len(d.by_steps[longest].seeds) for d in items if longest in d.by_steps), default=0)
    sign, verdict = changes(items, base, longest)
    head = f"At {longest // base}× the table budget ({longest:,} steps), against {base:,} steps"
    if seeds < 2:
        return (f"{head} on the same seed (one so far: no verdict yet), SGCL − GCC changes sign on "
                f"{and_joined(sign) or 'no column'}.")
    return (f"{head} on the same {count(seeds, 'paired seed')}, SGCL − GCC changes sign on "
            f"{and_joined(sign) or 'no column'} and its verdict on {and_joined(verdict) or 'no column'}.")


def budget_table(items: Sequence[BudgetDifference], csv_path: Path) -> str:
    """The Markdown table (column × budget, mean SGCL − GCC in pp with its interval and seeds) and its CSV."""
    steps = sorted({s for d in items for s in d.by_steps})
    write_csv(csv_path, ["dataset", "task", "metric", "steps", "seeds", "mean", "ci_low", "ci_high"],
              [[d.column.dataset, d.column.task, d.column.metric, s, len(x.seeds), x.summary.mean, x.summary.ci_low,
                x.summary.ci_high] for d in items for s, x in sorted(d.by_steps.items())])
    body = [[_name(d.column), *(interval_cell(d.by_steps.get(s)) for s in steps), d.reading(steps[-1]) or "–"]
            for d in items]
    return markdown_table(["column", *(f"{s:,} steps" for s in steps), f"verdict at {steps[-1]:,}"], body)


def plot_budgets(items: Sequence[BudgetDifference], png: Path) -> None:
    """One panel per column, on one shared pp scale: each seed's SGCL − GCC as a thin grey line across the budgets,
    their mean with its 90 % interval in blue, against the steps (ticks at the budgets run)."""
    plt = pyplot()
    cols = min(5, len(items))
    rows = -(-len(items) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.2 * rows), squeeze=False, sharex=True, sharey=True)
    budgets = sorted({s for d in items for s in d.by_steps})
    for ax, d in zip(axes.flat, items):
        steps = sorted(d.by_steps)
        per_seed = {s: dict(zip(d.by_steps[s].seeds, d.by_steps[s].differences)) for s in steps}
        for seed in sorted(set().union(*per_seed.values())):
            at = [(s, 100 * by_seed[seed]) for s, by_seed in per_seed.items() if seed in by_seed]
            ax.plot(*zip(*at), color="grey", linewidth=0.6, alpha=0.6)
        means = [100 * d.by_steps[s].summary.mean for s in steps]
        low = [m - 100 * d.by_steps[s].summary.ci_low for m, s in zip(means, steps)]
        high = [100 * d.by_steps[s].summary.ci_high - m for m, s in zip(means, steps)]
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.errorbar(steps, means, yerr=[low, high], fmt="o-", color="tab:blue", markersize=3, capsize=3)
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [f"{s:,}" for s in budgets])
        ax.minorticks_off()
        ax.set_title(_name(d.column), fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(items):]:
        ax.axis("off")
    fig.supxlabel("pre-training steps (grey: one seed each; blue: their mean, 90 % t-interval)", fontsize=8)
    fig.supylabel("SGCL − GCC (pp)", fontsize=8)
    fig.tight_layout()
    save_figure(fig, png)


def stored(long: Sequence[ResultRow]) -> str:
    """Which schedules have rows so far (method, steps, seeds), longest first: the stage runs across sessions.

    >>> from gcc_sgcl.experiments.rows import ResultRow
    >>> def row(method, steps, seed):
    ...     return ResultRow(method=method, mode="e2e", dataset="d", task="t", metric="m", seed=seed, mean=0.0,
    ...                      std=0.0, std_kind="", n=1, protocol="", steps=steps)
    >>> stored([row("gcc", 12000, 1), row("gcc", 24000, 0), row("sgcl", 24000, 0), row("gcc", 24000, 2)])
    'Rows so far: `gcc` at 24,000 steps (seeds 0 2), `sgcl` at 24,000 steps (seed 0), `gcc` at 12,000 steps (seed 1).'
    """
    seeds: dict[tuple[int, str], set[int]] = {}
    for r in long:
        if r.mode == MODE:
            seeds.setdefault((-r.steps, r.method), set()).add(r.seed)
    parts = [f"`{method}` at {-steps:,} steps (seed{'s' if len(s) > 1 else ''} {' '.join(map(str, sorted(s)))})"
             for (steps, method), s in sorted(seeds.items())]
    return f"Rows so far: {', '.join(parts)}." if parts else ""


def read(t: Tables, long: Sequence[ResultRow] | None = None) -> list[BudgetDifference]:
    """The study's differences for the tables ``t`` (none without a spec or long-budget rows); ``long``: the
    long-budget rows if already read."""
    long = RowStore(long_store(t.rows_path)).load() if long is None else long
    return budget_differences(t.rows.rows, long, t.spec) if t.spec is not None and long else []


def sections(t: Tables) -> list[str]:
    """SGCL − GCC against the pre-training budget (E2E, frozen): figure, table, what changes, and which schedules
    have rows so far."""
    long = RowStore(long_store(t.rows_path)).load()
    items, so_far = read(t, long), stored(long)
    head = ["## Longer budgets: SGCL − GCC against the pre-training steps (E2E, frozen)",
            "Rows of `bash scripts/reproduce.sh long` (`docs/results/long_budget.jsonl.gz`): `gcc` and the tables' "
            "`sgcl` pre-trained at 2× and 4× the table budget (same batch, corpus and evaluation), each budget a "
            "complete schedule of its own, since the learning rate's warm-up and decay are set by the total steps, "
            "with denormal floats flushed to zero (`--flush-denormal`: 2.5× faster late steps on this CPU, other "
            "bits, the same experiment; `docs/performance.md`). "
            "Cells: mean SGCL − GCC in pp over the paired seeds, its 90 % Student-t interval and the seed count; "
            "the table budget is read, per column, on the seeds paired at a longer budget."]
    if not items:
        waiting = so_far and t.spec is not None
        return head + [so_far.replace("Rows so far", "_no seed pair at a longer budget yet_; rows so far") if waiting
                       else so_far or "_no long-budget rows yet_"]
    png = t.folder / "long_budget.png"
    plot_budgets(items, png)
    return head + [f"![SGCL − GCC against the budget]({t.link(png)})",
                   budget_table(items, t.folder / "long_budget.csv"),
                   budget_sentence(items, t.spec.steps), so_far]
