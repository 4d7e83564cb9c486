"""SGCL − GCC against the pre-training budget: does a longer budget change a verdict of the tables?

``bash scripts/reproduce.sh long`` pre-trains ``gcc`` and the tables' ``sgcl`` (E2E, the tables' batch and corpus)
at 2× and 4× the table budget for seeds 0–2, each a complete schedule of its own (the learning rate's warm-up and
decay depend on the total steps, so a checkpoint half-way through a long run is not the encoder a run of that
length gives), and stores their rows apart (``long_budget.jsonl.gz`` beside the tables' rows). Per frozen column
and budget: the mean SGCL − GCC over paired seeds with its 90 % Student-t interval, the table budget read on the
seeds paired at a longer budget. Whether the budget *changes* SGCL − GCC is tested as a change, seed by seed
(:func:`budget_changes`): a verdict that crosses a threshold between two budgets is not a change the data show.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from gcc_sgcl.experiments.rows import ResultRow, RowStore
from gcc_sgcl.experiments.stats import Summary, summarize
from gcc_sgcl.experiments.studies.cells import (
    BASELINE, CLASSIFICATION, SIMILARITY, Column, Rows, SeedDifferences, seed_differences,
)
from gcc_sgcl.experiments.studies.markdown import (
    READINGS, pyplot, count, interval_cell, interval_side, label, markdown_table, save_figure, write_csv,
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


@dataclass(frozen=True)
class BudgetChange:
    """How SGCL − GCC on one frozen ``column`` changes from the ``base`` budget to ``longer``, seed by seed on the
    ``seeds`` all four encoders share: ``change`` summarises (SGCL − GCC at ``longer``) − (SGCL − GCC at ``base``),
    ``gcc`` and ``sgcl`` each method's own change (score at ``longer`` − score at ``base``); means with their 90 %
    Student-t intervals."""

    column: Column
    base: int
    longer: int
    seeds: tuple[int, ...]
    change: Summary
    gcc: Summary
    sgcl: Summary

    @property
    def shown(self) -> bool:
        """Whether the change's interval excludes 0 (two seeds at least)."""
        return self.change.n > 1 and (self.change.ci_low > 0 or self.change.ci_high < 0)


def budget_changes(table: Sequence[ResultRow], long: Sequence[ResultRow], spec: TableSpec,
                   tasks: Sequence[str] = CLASSIFICATION + SIMILARITY) -> list[BudgetChange]:
    """:class:`BudgetChange` of every column of ``tasks`` from the table budget (``table``: the tables' rows) to the
    longest budget of the ``long`` rows (read by ``spec`` at its steps), on the seeds where ``gcc`` and ``sgcl`` both
    have rows at both budgets.

    >>> from gcc_sgcl.experiments.rows import ResultRow
    >>> def row(method, steps, seed, mean):
    ...     return ResultRow(method=method, mode="e2e", dataset="collab", task="graph_classification",
    ...                      metric="accuracy", seed=seed, mean=mean, std=0.0, std_kind="cv", n=1, protocol="p",
    ...                      steps=steps, batch_size=256, corpus="snap")
    >>> spec = TableSpec(100, "snap", {"e2e": 256}, default_c=0.3, sgcl_c=0.4)
    >>> table = [row(m, 100, s, v) for s in range(4) for m, v in (("gcc", 0.80), ("sgcl", 0.80))]
    >>> long = [row(m, 400, s, v + 0.001 * s) for s in range(3) for m, v in (("gcc", 0.78), ("sgcl[c=0.4]", 0.80))]
    >>> [c] = budget_changes(table, long, spec)
    >>> c.seeds, round(100 * c.change.mean, 2), round(100 * c.gcc.mean, 2), round(100 * c.sgcl.mean, 2), c.shown
    ((0, 1, 2), 2.0, -1.9, 0.1, True)
    """
    longest = max((r.steps for r in long if r.mode == MODE and r.steps != spec.steps), default=None)
    if longest is None:
        return []
    base, far = Rows(table), Rows(dataclasses.replace(spec, steps=longest).select(long))
    out = []
    for d, task, metric in far.columns(tasks):
        g0, s0, g1, s1 = (rows.seeds(m, MODE, d, task, metric) for rows in (base, far) for m in (BASELINE, SGCL))
        seeds = tuple(sorted(set(g0) & set(s0) & set(g1) & set(s1)))
        if seeds:
            out.append(BudgetChange(
                Column(d, task, metric, MODE), spec.steps, longest, seeds,
                summarize([(s1[x] - g1[x]) - (s0[x] - g0[x]) for x in seeds], interval="t"),
                summarize([g1[x] - g0[x] for x in seeds], interval="t"),
                summarize([s1[x] - s0[x] for x in seeds], interval="t")))
    return out


def _name(c: Column) -> str:
    return label(c.dataset) + ("" if c.metric == "accuracy" else f" {c.metric}")


def _pp(s: Summary) -> str:
    return f"{100 * s.mean:+.2f} pp [{100 * s.ci_low:+.2f}, {100 * s.ci_high:+.2f}]"


def _moved(c: BudgetChange) -> str:
    """Which method's own score moved (its change's interval excludes 0), in words."""
    moved = [f"{name} {100 * x.mean:+.2f} pp" for name, x in (("GCC", c.gcc), ("SGCL", c.sgcl))
             if x.n > 1 and (x.ci_low > 0 or x.ci_high < 0)]
    return f"moved: {' and '.join(moved)}" if moved else "neither method's own change shown"


def budget_sentence(items: Sequence[BudgetChange]) -> str:
    """One sentence: the columns whose SGCL − GCC changes between the table budget and the longest, tested seed by
    seed (the change's 90 % t interval excludes 0), with which method moved; '' without longer budgets.

    >>> from gcc_sgcl.experiments.stats import summarize
    >>> def s(*v):
    ...     return summarize(list(v), interval="t")
    >>> column = Column("collab", "graph_classification", "accuracy", "e2e")
    >>> c = BudgetChange(column, 100, 400, (0, 1, 2), s(0.02, 0.015, 0.018), s(-0.02, -0.018, -0.016), s(0, 0.003, 0.001))
    >>> print(budget_sentence([c]))  # doctest: +NORMALIZE_WHITESPACE
    From 100 to 400 steps (4×), the change of SGCL − GCC, seed-paired on 3 seeds, excludes 0 on COLLAB
    (+1.77 pp [+1.34, +2.19]; moved: GCC -1.80 pp) (of 1 column).
    """
    if not items:
        return ""
    base, longer = items[0].base, items[0].longer
    seeds = max(len(c.seeds) for c in items)
    head = f"From {base:,} to {longer:,} steps ({longer // base}×), the change of SGCL − GCC, seed-paired on"
    if seeds < 2:
        return f"{head} one seed so far, has no interval yet."
    listed = "; ".join(f"{_name(c.column)} ({_pp(c.change)}; {_moved(c)})" for c in items if c.shown)
    return f"{head} {count(seeds, 'seed')}, excludes 0 on {listed or 'no column'} (of {count(len(items), 'column')})."


def changes_table(items: Sequence[BudgetChange], csv_path: Path) -> str:
    """The Markdown table of the seed-paired changes (SGCL − GCC's, GCC's and SGCL's own) and its CSV."""
    write_csv(csv_path, ["dataset", "task", "metric", "base_steps", "steps", "seeds", "change", "change_low",
                         "change_high", "gcc_change", "sgcl_change"],
              [[c.column.dataset, c.column.task, c.column.metric, c.base, c.longer, len(c.seeds), c.change.mean,
                c.change.ci_low, c.change.ci_high, c.gcc.mean, c.sgcl.mean] for c in items])
    body = [[_name(c.column), len(c.seeds), _pp(c.change), _pp(c.gcc), _pp(c.sgcl),
             "change shown" if c.shown else "no change shown"] for c in items]
    return markdown_table(["column", "paired seeds", "change of SGCL − GCC", "GCC's own change", "SGCL's own change",
                           "reading"], body)


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


def read_changes(t: Tables, long: Sequence[ResultRow] | None = None) -> list[BudgetChange]:
    """The study's seed-paired changes for the tables ``t`` (:func:`budget_changes`; none without a spec or
    long-budget rows)."""
    long = RowStore(long_store(t.rows_path)).load() if long is None else long
    return budget_changes(t.rows.rows, long, t.spec) if t.spec is not None and long else []


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
    moved = read_changes(t, long)
    return head + [f"![SGCL − GCC against the budget]({t.link(png)})",
                   budget_table(items, t.folder / "long_budget.csv"),
                   "The verdicts per budget above are read one budget at a time; a verdict that differs between two "
                   "budgets is a threshold crossing, not a change the data show. The change itself, seed by seed on "
                   "the seeds all four encoders share: (SGCL − GCC at the longer budget) − (SGCL − GCC at the table "
                   "budget), with each method's own change beside it (90 % t intervals):",
                   changes_table(moved, t.folder / "long_budget_changes.csv"),
                   budget_sentence(moved), so_far]
