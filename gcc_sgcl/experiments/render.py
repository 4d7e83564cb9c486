"""Renderers of the report: Markdown, CSV and PNG of what :mod:`gcc_sgcl.experiments.analysis` and
:mod:`gcc_sgcl.experiments.budget` compute. They only format; no number is computed here beyond unit changes.
A ``*_section``-style function writes its CSV and returns its Markdown.
"""
from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gcc_sgcl.experiments.analysis import (
    DATASET_LABELS,
    LOOSE_ALPHA,
    PAPER_ALPHA,
    SIMILARITY,
    HEATMAP_STAGES,
    VIEWS_MIN_SEEDS,
    Cell,
    Column,
    LeftOut,
    Evidence,
    FloorVerdict,
    GridRow,
    HeatMap,
    CChoice,
    Coverage,
    Headline,
    JoinVerdict,
    Progress,
    Provenance,
    Quintiles,
    RankTest,
    Runtime,
    SeedDifferences,
    Statistic,
    ViewsChoice,
    ViewsPoint,
    baseline_of,
    loose_mark,
)
from gcc_sgcl.experiments.budget import (
    FIDELITY_MIN_COLUMNS,
    FIDELITY_TOLERANCE,
    BudgetChoice,
    Curve,
    Fidelity,
    Published,
    fidelity_passes,
)
from gcc_sgcl.experiments.rows import ResultRow
from gcc_sgcl.experiments.stats import Summary, fdr_adjusted, marker
from gcc_sgcl.fileio import atomic_target


def label(dataset: str) -> str:
    """Display name of a dataset."""
    return DATASET_LABELS.get(dataset, dataset)


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1.

    >>> count(1, "seed"), count(3, "paired seed")
    ('1 seed', '3 paired seeds')
    """
    return f"{n} {noun}" + ("" if n == 1 else "s")


def markdown_table(header: Sequence[str], body: Sequence[Sequence[Any]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def write_csv(path: Path, header: Sequence[str], body: Sequence[Sequence[Any]]) -> None:
    """Write one table as CSV (through a temporary file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(path) as tmp, tmp.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(body)


def save_figure(fig: Any, png: Path, dpi: int = 120) -> None:
    """Write ``fig`` to ``png`` (through a temporary file) and close it."""
    png.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(png) as tmp:
        fig.savefig(tmp, dpi=dpi, format="png")
    _pyplot().close(fig)


def format_cell(c: Cell | None) -> str:
    """``mean ± std`` in %, with the marker; ``ᶜ`` flags a single seed's own spread; ``–`` for no rows."""
    if c is None:
        return "–"
    return f"{100 * c.mean:.2f} ± {100 * c.std:.2f}" + ("ᶜ" if c.one_seed else c.marker)


def column_title(c: Column, with_metric: bool) -> str:
    """``<dataset> <MODE>[ <metric>]``."""
    mode = c.mode.upper() if c.mode != "none" else ""
    return " ".join(p for p in (label(c.dataset), mode, c.metric if with_metric else "") if p)


def grid_section(columns: list[Column], grid: list[GridRow], csv_path: Path, with_metric: bool = False) -> str:
    """A score table (methods × columns) as Markdown; its cells (with interval) as CSV."""
    if not columns:
        return "_no rows_"
    flat = [[r.method, "none" if r.training_free else c.mode, c.dataset, c.metric, x.seeds, x.mean, x.std,
             x.std_kind, x.ci_low, x.ci_high]
            for r in grid for c, x in zip(columns, r.cells) if x is not None]
    write_csv(csv_path, ["method", "mode", "dataset", "metric", "seeds", "mean", "std", "std_over", "ci5", "ci95"],
              flat)
    body = [[f"{r.method} (training-free)" if r.training_free else r.method, r.seeds]
            + [format_cell(x) for x in r.cells] for r in grid]
    return markdown_table(["method", "max seeds"] + [column_title(c, with_metric) for c in columns], body)


def _p(value: float | None) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.3g}"


def statistics_section(stats: list[Statistic], method: str, csv_path: Path, against: str | None = None) -> str:
    """The statistics of ``method`` against ``against`` (by default :func:`baseline_of` ``method``) as Markdown
    and CSV."""
    against = against if against is not None else baseline_of(method)
    header = ["dataset", "mode", "seeds", "samples", method, against, "difference (pp)", f"{method} 5–95 %",
              "Wilcoxon p", "Mann–Whitney p", "t-test p", f"all p < {PAPER_ALPHA:g}", f"all p < {LOOSE_ALPHA:g}",
              "Wilcoxon p (seed means)"]
    body, flat = [], []
    for s in stats:
        c = s.comparison
        p = [c.p_wilcoxon, c.p_mannwhitney, c.p_ttest]
        body.append([label(s.column.dataset), s.column.mode, s.seeds, s.samples, f"{100 * s.mean:.2f}",
                     f"{100 * s.baseline:.2f}", f"{100 * (s.mean - s.baseline):+.2f}",
                     f"[{100 * s.ci_low:.2f}, {100 * s.ci_high:.2f}]", *map(_p, p),
                     marker(c, PAPER_ALPHA) or "no", loose_mark(c) or "no", _p(s.p_seed_means)])
        flat.append([s.column.dataset, s.column.mode, s.column.metric, s.seeds, s.samples, s.mean, s.baseline,
                     s.mean - s.baseline, s.ci_low, s.ci_high, *p, s.p_seed_means])
    write_csv(csv_path, ["dataset", "mode", "metric", "seeds", "samples", method, against, "difference", "ci5",
                         "ci95", "p_wilcoxon", "p_mannwhitney", "p_ttest", "p_wilcoxon_seed_means"], flat)
    return markdown_table(header, body) if body else "_fewer than two paired seeds_"


def floor_lines(verdicts: list[FloorVerdict], floor: str = "the best training-free row") -> str:
    """One sentence per floor verdict (``floor`` names what was beaten): "beats" / "does NOT beat" only when
    every test gives p < 0.05, "is above" / "is not above" where no test can run."""
    return "\n".join(
        f"- {label(v.column.dataset)} {v.column.metric} ({v.column.mode.upper()}): best pre-trained `{v.best}` "
        f"({count(v.seeds, 'seed')}) {100 * v.score:.2f} {v.verdict} {floor} `{v.floor}` "
        f"{100 * v.floor_score:.2f}"
        + (f" (Mann–Whitney p {_p(v.comparison.p_mannwhitney)}, Welch t p {_p(v.comparison.p_ttest)})."
           if v.comparison is not None else " (one score on a side: untested).") for v in verdicts)


def join_lines(verdicts: list[JoinVerdict]) -> str:
    """One sentence per joined row: what joining adds over structure alone and over the encoder alone."""
    return "\n".join(
        f"- {label(v.column.dataset)} {v.column.metric} ({v.column.mode.upper()}, {count(v.seeds, 'seed')}): "
        f"`{v.method} ⊕ structural` {100 * v.joined:.2f}; `structural` alone {100 * v.structural:.2f} "
        f"({100 * (v.joined - v.structural):+.2f} pt from adding the encoder), `{v.method}` alone "
        f"{100 * v.encoder:.2f} ({100 * (v.joined - v.encoder):+.2f} pt from adding structure)." for v in verdicts)


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


def headline_text(h: Headline, method: str = "SGCL") -> str:
    """The headline as one bold sentence plus the significant columns; empty when nothing was compared."""
    if not h.compared:
        return ""
    return (f"**{h.mode.upper()}: {method}'s mean is above GCC's in {len(h.ahead)} of {h.compared} columns "
            f"({', '.join(h.ahead) or 'none'}) and below in {len(h.behind)}** (the sign of the mean alone; which "
            "differences the seeds can tell from 0 is in the opening summary). At the paper's threshold (all "
            f"p < 1e-6) significant: {', '.join(h.strict) or 'none'}; at p < 0.05: {', '.join(h.loose) or 'none'} "
            "(tests on seeds × CV repetitions as the paper's; repetitions of one encoder are not independent, so "
            "these overstate the evidence: the opening summary's intervals over seeds are the stricter guide).")


def interval_side(summary: Summary) -> str:
    """Where 0 lies against the 90 % interval of a mean difference over ``summary.n`` paired seeds.

    >>> from gcc_sgcl.experiments.stats import summarize
    >>> interval_side(summarize([0.01, 0.02, 0.01], interval="t"))
    'interval above 0'
    >>> interval_side(summarize([-0.01, 0.02, 0.01], interval="t"))
    'interval contains 0'
    >>> interval_side(summarize([-0.01, -0.02, -0.01], interval="t"))
    'interval below 0'
    >>> interval_side(summarize([0.02], interval="t"))
    'one seed, no interval'
    """
    if summary.n < 2:
        return "one seed, no interval"
    if summary.ci_low > 0:
        return "interval above 0"
    return "interval below 0" if summary.ci_high < 0 else "interval contains 0"


def evidence_lines(items: list[Evidence]) -> str:
    """One sentence per dataset where a single-stage preset has rows: SGCL − GCC with where its seed interval
    lies, then each stage alone − GCC grouped by the seeds it shares with GCC, beside SGCL − GCC on those same
    seeds (the other datasets' SGCL − GCC is in the seed-by-seed table)."""
    def group(e: Evidence, seeds: tuple[int, ...]) -> str:
        stages = ", ".join(f"{stage} {100 * d:+.2f}" for stage, (d, s) in e.stages.items() if s == seeds)
        same = f"; SGCL − GCC {100 * e.sgcl_on[seeds]:+.2f}" if seeds in e.sgcl_on else ""
        return f"on {'seed' if len(seeds) == 1 else 'seeds'} {' '.join(map(str, seeds))}{same}: {stages}"

    return "\n".join(
        f"- {label(e.dataset)}: SGCL − GCC = {100 * e.difference:+.2f} pp, 90 % "
        f"{interval_side(e.summary)} ({count(e.seeds, 'paired seed')}); each stage alone − GCC "
        + "; ".join(f"({group(e, seeds)})" for seeds in dict.fromkeys(s for _, s in e.stages.values()))
        for e in items if e.stages)


def _column_name(c: Column, modes: set[str]) -> str:
    return (label(c.dataset) + (f" {c.mode.upper()}" if len(modes) > 1 else "")
            + (f" {c.metric}" if c.task in SIMILARITY else ""))


FDR_Q = 0.10  # the false discovery rate of the opening verdict's multiplicity-adjusted columns (the intervals' 90 %)


def summary_lines(frozen: list[SeedDifferences], finetuned: list[SeedDifferences], method: str = "SGCL") -> str:
    """The report's opening verdict, one line per kind of evaluation: the columns where ``method`` − GCC's
    90 % t-interval over paired seeds lies above 0, below 0, or contains it, and those with one paired seed;
    then, the line's columns being many tests, those whose seed-level t-test stays below :data:`FDR_Q` after the
    Benjamini–Hochberg adjustment over them (:func:`~gcc_sgcl.experiments.stats.fdr_adjusted`).

    >>> from gcc_sgcl.experiments.analysis import Column, SeedDifferences
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> up = SeedDifferences(Column("imdb-multi", "t", "accuracy", "e2e"), (0, 1, 2), (0.01, 0.02, 0.01),
    ...                      summarize((0.01, 0.02, 0.01), interval="t"))
    >>> print(summary_lines([up], []))  # doctest: +NORMALIZE_WHITESPACE
    - Frozen encoders (3 paired seeds, 1 column): SGCL − GCC's 90 % interval lies above 0 on IMDB-M (+1.33 pp);
      below 0 on no column; contains 0 on 0 columns.
    - Fine-tuned encoders: no paired seeds yet.
    """
    def line(items: list[SeedDifferences], what: str) -> str:
        if not items:
            return f"- {what}: no paired seeds yet."
        modes = {d.column.mode for d in items}

        def listed(found: list[SeedDifferences]) -> str:
            return ", ".join(f"{_column_name(d.column, modes)} ({100 * d.summary.mean:+.2f} pp)"
                             for d in found) or "no column"

        sides = [interval_side(d.summary) for d in items]

        def on(side: str) -> list[SeedDifferences]:
            return [d for d, s in zip(items, sides) if s == side]

        ahead, behind, within = on("interval above 0"), on("interval below 0"), on("interval contains 0")
        single = [_column_name(d.column, modes) for d in on("one seed, no interval")]
        seeds = sorted({len(d.seeds) for d in items})
        span = f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else str(seeds[0])
        adjusted = fdr_adjusted([d.p for d in items])
        tested = sum(p is not None for p in adjusted)
        kept = [d for d, p in zip(items, adjusted) if p is not None and p < FDR_Q]
        family = (f" With the {count(tested, 'column')}' seed-level t-tests adjusted for multiplicity "
                  f"(Benjamini–Hochberg, false discovery rate {100 * FDR_Q:g} %), the difference stays non-zero on "
                  f"{listed(kept)}." if tested > 1 else "")
        return (f"- {what} ({span} paired seeds, {count(len(items), 'column')}): {method} − GCC's 90 % interval "
                f"lies above 0 on {listed(ahead)}; below 0 on {listed(behind)}; contains 0 on "
                f"{count(len(within), 'column')}"
                + (f"; one paired seed, no interval, on {', '.join(single)}" if single else "") + "." + family)

    return "\n".join([line(frozen, "Frozen encoders"), line(finetuned, "Fine-tuned encoders")])


READINGS = {"interval above 0": "SGCL ahead", "interval below 0": "GCC ahead",
            "interval contains 0": "no difference shown", "one seed, no interval": "one seed only"}


def headline_table(items: list[SeedDifferences]) -> str:
    """The front page's result: per column, SGCL − GCC over paired seeds with its 90 % interval and what the
    interval says (:data:`READINGS`).

    >>> from gcc_sgcl.experiments.analysis import Column, SeedDifferences
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> up = SeedDifferences(Column("imdb-multi", "t", "accuracy", "e2e"), (0, 1, 2), (0.01, 0.02, 0.01),
    ...                      summarize((0.01, 0.02, 0.01), interval="t"))
    >>> print(headline_table([up]))
    | column | seeds | SGCL − GCC (pp) | 90 % interval | reading |
    |---|---|---|---|---|
    | IMDB-M accuracy | 3 | +1.33 | [+0.36, +2.31] | SGCL ahead |
    """
    body = [[f"{label(d.column.dataset)} {d.column.metric}", len(d.seeds), f"{100 * d.summary.mean:+.2f}",
             f"[{100 * d.summary.ci_low:+.2f}, {100 * d.summary.ci_high:+.2f}]" if d.summary.n > 1 else "–",
             READINGS[interval_side(d.summary)]] for d in items]
    return markdown_table(["column", "seeds", "SGCL − GCC (pp)", "90 % interval", "reading"], body)


def seed_differences_section(items: list[SeedDifferences], method: str, png: Path, csv_path: Path) -> str:
    """``method`` − GCC seed by seed: CSV (one line per seed), a dot plot (seeds as dots, the mean with its
    90 % t-interval as a bar) and a Markdown table, in pp, with the seed-level t-test p (unadjusted; the opening
    summary adjusts it for the number of columns)."""
    write_csv(csv_path, ["dataset", "metric", "mode", "seed", f"{method}_minus_gcc"],
              [[d.column.dataset, d.column.metric, d.column.mode, s, f"{v:.5f}"]
               for d in items for s, v in zip(d.seeds, d.differences)])
    if not items:
        return "_no paired seeds_"
    modes = {d.column.mode for d in items}
    plot_seed_differences(items, [_column_name(d.column, modes) for d in items], f"{method.upper()} − GCC", png)
    body = [[_column_name(d.column, modes), len(d.seeds),
             " ".join(f"{round(100 * v, 2) + 0.0:+.2f}" for v in d.differences),
             f"{100 * d.summary.mean:+.2f}",
             f"[{100 * d.summary.ci_low:+.2f}, {100 * d.summary.ci_high:+.2f}]" if len(d.seeds) > 1 else "–",
             "–" if d.p is None else f"{d.p:.3g}"]
            for d in items]
    return markdown_table(["column", "paired seeds", "per seed (pp)", "mean (pp)", "90 % t-interval",
                           "t-test p (seeds)"], body)


def _interval_cell(d: SeedDifferences | None) -> str:
    """``+0.52 [−0.31, +1.35] (3)`` in pp: the mean over paired seeds, its 90 % t-interval and the seed count."""
    if d is None:
        return "–"
    interval = f" [{100 * d.summary.ci_low:+.2f}, {100 * d.summary.ci_high:+.2f}]" if len(d.seeds) > 1 else ""
    return f"{100 * d.summary.mean:+.2f}{interval} ({len(d.seeds)})"


def leave_one_out_section(items: list[LeftOut], csv_path: Path) -> str:
    """The leave-one-out ablation: per left-out stage and column, what the stage adds (``sgcl`` − ``sgcl-no-<stage>``)
    and the variant against GCC, mean over paired seeds with its 90 % t-interval, in pp; CSV one line per item.

    >>> from gcc_sgcl.experiments.analysis import Column, LeftOut, SeedDifferences
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> d = SeedDifferences(Column("rdt-b", "t", "accuracy", "e2e"), (0, 1), (0.01, 0.03), summarize((0.01, 0.03),
    ...                     interval="t"))
    >>> import tempfile
    >>> print(leave_one_out_section([LeftOut("align", d, None)], Path(tempfile.mkdtemp()) / "loo.csv"))
    | left out | column | what the stage adds: sgcl − sgcl-no-<stage> (pp, seeds) | sgcl-no-<stage> − gcc (pp, seeds) |
    |---|---|---|---|
    | align | RDT-B | +2.00 [-4.31, +8.31] (2) | – |
    """
    def mean(d: SeedDifferences | None) -> str:
        return "" if d is None else f"{d.summary.mean:.5f}"

    def bounds(d: SeedDifferences | None) -> list[str]:
        return ["", ""] if d is None or len(d.seeds) < 2 else [f"{d.summary.ci_low:.5f}", f"{d.summary.ci_high:.5f}"]

    write_csv(csv_path, ["stage", "dataset", "metric", "mode", "adds_seeds", "adds", "adds_low", "adds_high",
                         "vs_gcc_seeds", "vs_gcc", "vs_gcc_low", "vs_gcc_high"],
              [[i.stage, *_item_column(i), len(i.adds.seeds) if i.adds else 0, mean(i.adds), *bounds(i.adds),
                len(i.against_gcc.seeds) if i.against_gcc else 0, mean(i.against_gcc), *bounds(i.against_gcc)]
               for i in items])
    if not items:
        return "_no leave-one-out rows yet (`bash scripts/reproduce.sh loo`)_"
    modes = {_item_column_of(i).mode for i in items}
    body = [[i.stage, _column_name(_item_column_of(i), modes), _interval_cell(i.adds), _interval_cell(i.against_gcc)]
            for i in items]
    return markdown_table(["left out", "column", "what the stage adds: sgcl − sgcl-no-<stage> (pp, seeds)",
                           "sgcl-no-<stage> − gcc (pp, seeds)"], body)


def leave_one_out_reading(items: list[LeftOut], sgcl_vs_gcc: list[SeedDifferences], level: float = 0.90) -> str:
    """What the leave-one-out table says, in words: where a stage's interval (over 2 or more paired seeds) lies
    above 0 (the stage helps ``sgcl``) or below it (it costs), and, on each column where ``sgcl`` is behind GCC
    (``sgcl_vs_gcc``), the variants that are not; with the number of intervals read, and how many of them would
    exclude 0 by chance alone at ``level``.

    >>> from gcc_sgcl.experiments.analysis import Column, LeftOut, SeedDifferences
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> def d(values): return SeedDifferences(Column("rdt-b", "t", "accuracy", "e2e"), (0, 1), values,
    ...                                       summarize(values, interval="t"))
    >>> align = LeftOut("align", d((-0.025, -0.026)), d((0.01, 0.012)))
    >>> print(leave_one_out_reading([align], [d((-0.02, -0.015))]))  # doctest: +NORMALIZE_WHITESPACE
    Read from the table (intervals over 2 or more paired seeds): a stage helps `sgcl` where its interval lies above
    0 — none; it costs `sgcl` where the interval lies below 0 — align: RDT-B (-2.55). Where `sgcl` is behind GCC
    (RDT-B), these variants are not shown behind it: sgcl-no-align on RDT-B (+1.10, ahead of GCC). These are 2
    intervals, about 0.2 of which would exclude 0 by chance alone at 90 %: leads to test with more seeds, not
    findings.
    """
    modes = {_item_column_of(i).mode for i in items}

    def read(d: SeedDifferences | None) -> str:
        return interval_side(d.summary) if d is not None and len(d.seeds) > 1 else ""

    def stages_where(side: str) -> str:
        found: dict[str, list[str]] = {}
        for i in items:
            if read(i.adds) == side:
                found.setdefault(i.stage, []).append(f"{_column_name(i.adds.column, modes)} "
                                                     f"({100 * i.adds.summary.mean:+.2f})")
        return "; ".join(f"{stage}: {', '.join(columns)}" for stage, columns in found.items()) or "none"

    vs_gcc = {"interval above 0": "ahead of GCC", "interval contains 0": "no difference shown"}
    behind = [d.column for d in sgcl_vs_gcc if read(d) == "interval below 0"]
    lifted = [f"sgcl-no-{i.stage} on {_column_name(i.against_gcc.column, modes)} "
              f"({100 * i.against_gcc.summary.mean:+.2f}, {vs_gcc[read(i.against_gcc)]})"
              for column in behind for i in items
              if i.against_gcc is not None and i.against_gcc.column == column and read(i.against_gcc) in vs_gcc]
    read_count = sum(bool(read(d)) for i in items for d in (i.adds, i.against_gcc))
    where_behind = (f" Where `sgcl` is behind GCC ({', '.join(_column_name(c, modes) for c in behind)}), these "
                    f"variants are not shown behind it: {'; '.join(lifted) or 'none'}." if behind else "")
    return (f"Read from the table (intervals over 2 or more paired seeds): a stage helps `sgcl` where its interval lies "
            f"above 0 — {stages_where('interval above 0')}; it costs `sgcl` where the interval lies below 0 — "
            f"{stages_where('interval below 0')}.{where_behind} These are {read_count} intervals, about "
            f"{(1 - level) * read_count:.1f} of which would exclude 0 by chance alone at {100 * level:.0f} %: leads to "
            f"test with more seeds, not findings.")


def _item_column_of(item: LeftOut) -> Column:
    return (item.adds or item.against_gcc).column


def _item_column(item: LeftOut) -> list[str]:
    c = _item_column_of(item)
    return [c.dataset, c.metric, c.mode]


def plot_seed_differences(items: list[SeedDifferences], names: list[str], title: str, png: Path) -> None:
    """One column per item: its seeds' differences as dots, their mean with its t-interval as a bar."""
    plt = _pyplot()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(items)), 3.4))
    ax.axhline(0.0, color="grey", linewidth=0.8)
    for x, d in enumerate(items):
        offsets = np.linspace(-0.15, 0.15, len(d.differences)) if len(d.differences) > 1 else [0.0]
        ax.scatter(x + np.asarray(offsets), [100 * v for v in d.differences], s=14, color="tab:blue", alpha=0.7,
                   zorder=2)
        mean = 100 * d.summary.mean
        ax.errorbar([x + 0.3], [mean], yerr=[[mean - 100 * d.summary.ci_low], [100 * d.summary.ci_high - mean]],
                    fmt="D", color="black", markersize=4, capsize=3, zorder=3)
    ax.set_xticks(range(len(items)), names, rotation=30, ha="right")
    ax.set_ylabel(f"{title} (pp)")
    ax.set_title(f"{title}: seeds (dots), mean and 90 % t-interval (bar)", fontsize=9)
    fig.tight_layout()
    save_figure(fig, png, dpi=120)


def heatmap_section(heat: HeatMap, title: str, png: Path, csv_path: Path) -> str:
    """The pairwise heat-map as PNG, CSV (gains) and a Markdown table with seed counts and markers."""
    gain, seeds, marks = heat.gain, heat.seeds, heat.marks
    write_csv(csv_path, ["augmentation"] + list(HEATMAP_STAGES),
              [[a] + ["" if np.isnan(v) else f"{v:.3f}" for v in gain[i]] for i, a in enumerate(HEATMAP_STAGES)])
    plot_heatmap(gain, marks, title, png)
    body = [[a] + ["–" if np.isnan(v) else f"{v:+.2f}{marks[i, j]} ({seeds[i, j]})" for j, v in enumerate(gain[i])]
            for i, a in enumerate(HEATMAP_STAGES)]
    return markdown_table(["% gain (seeds)"] + list(HEATMAP_STAGES), body)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_heatmap(gain: np.ndarray, marks: np.ndarray, title: str, png: Path, rows: Sequence[str] = HEATMAP_STAGES,
                 columns: Sequence[str] = HEATMAP_STAGES, unit: str = "% gain over GCC",
                 size: tuple[float, float] = (6.4, 5.2)) -> None:
    """A diverging heat-map of ``gain`` (``rows`` × ``columns``, NaN cells blank) with the values and ``marks``
    written in; the colour bar reads ``unit``."""
    plt = _pyplot()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=size)
    bound = max(float(np.nanmax(np.abs(gain))) if np.isfinite(gain).any() else 1.0, 1e-9)
    image = ax.imshow(np.ma.masked_invalid(gain), cmap="RdYlGn", vmin=-bound, vmax=bound)
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    for i in range(len(rows)):
        for j in range(len(columns)):
            if np.isfinite(gain[i, j]):
                ax.text(j, i, f"{gain[i, j]:+.1f}{marks[i, j]}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label=unit)
    ax.set_title(title)
    fig.tight_layout()
    save_figure(fig, png, dpi=120)


def plot_leave_one_out(items: list[LeftOut], png: Path) -> None:
    """What each stage adds (``sgcl`` − ``sgcl-no-<stage>``, pp) as a stage × column heat-map; ``*`` marks a cell
    whose 90 % t-interval over its paired seeds excludes 0."""
    modes = {_item_column_of(i).mode for i in items}
    stages = list(dict.fromkeys(i.stage for i in items))
    columns = list(dict.fromkeys(_column_name(_item_column_of(i), modes) for i in items))
    gain = np.full((len(stages), len(columns)), np.nan)
    marks = np.full(gain.shape, "", dtype=object)
    for i in items:
        if i.adds is None:
            continue
        r, c = stages.index(i.stage), columns.index(_column_name(_item_column_of(i), modes))
        gain[r, c] = 100 * i.adds.summary.mean
        marks[r, c] = "*" if interval_side(i.adds.summary) in ("interval above 0", "interval below 0") else ""
    plot_heatmap(gain, marks, "what each stage adds: sgcl − sgcl-no-<stage> (* : 90 % interval excludes 0)", png,
                 rows=stages, columns=columns, unit="pp (positive: SGCL is better with the stage)",
                 size=(max(6.4, 0.75 * len(columns) + 2.5), 0.45 * len(stages) + 2.6))


def entrant_name(method: str, mode: str) -> str:
    """A rank-test entrant's name: the method with its mode, or marked training-free.

    >>> entrant_name("sgcl", "moco"), entrant_name("prone", "none")
    ('sgcl (MoCo)', 'prone (training-free)')
    """
    return f"{method} ({'training-free' if mode == 'none' else {'moco': 'MoCo', 'e2e': 'E2E'}.get(mode, mode)})"


def rank_section(test: RankTest, png: Path, csv_path: Path) -> str:
    """The rank test: every entrant's rank per column with the seeds behind it, and its mean rank over the datasets
    it is ranked on, as Markdown, CSV (one line per entrant and column, and one per entrant for the mean) and the
    dot plot ``png``."""
    if not test.entrants:
        return "_no rows to rank_"
    many = {d for d, _, _ in test.columns if sum(c[0] == d for c in test.columns) > 1}
    titles = [f"{label(d)} {m}" if d in many else label(d) for d, _, m in test.columns]
    flat = [[e.method, e.mode, d, m, e.ranks[(d, t, m)][1], e.ranks[(d, t, m)][2], e.ranks[(d, t, m)][0]]
            for e in test.entrants for (d, t, m) in test.columns if (d, t, m) in e.ranks]
    flat += [[e.method, e.mode, "mean over datasets", "", "", "", e.mean_rank] for e in test.entrants]
    write_csv(csv_path, ["method", "mode", "dataset", "metric", "seeds", "mean_score", "rank"], flat)
    plot_ranks(test, titles, png)
    body = []
    for e in test.entrants:
        cells = [f"{e.ranks[c][0]:g} ({e.ranks[c][1]})" if c in e.ranks else "–" for c in test.columns]
        mean = f"{e.mean_rank:.2f}" if test.complete(e) else f"({e.mean_rank:.2f})"
        body.append([entrant_name(e.method, e.mode), mean, f"{e.datasets} of {test.datasets}", *cells])
    return markdown_table(["method", "mean rank", "datasets", *titles], body)


def plot_ranks(test: RankTest, titles: Sequence[str], png: Path) -> None:
    """Each entrant's rank on every column (dots, coloured by task) and its mean rank (diamond), entrants top to
    bottom in the table's order; hollow diamonds: entrants ranked on some datasets only."""
    plt = _pyplot()
    names = [entrant_name(e.method, e.mode) for e in test.entrants]
    fig, ax = plt.subplots(figsize=(9.0, 0.34 * len(names) + 1.6))
    colours = {"node_classification": "tab:blue", "graph_classification": "tab:orange",
               "similarity_search": "tab:green"}
    offsets = np.linspace(-0.25, 0.25, len(test.columns)) if len(test.columns) > 1 else np.zeros(1)
    seen = set()
    for y, e in enumerate(test.entrants):
        for off, column in zip(offsets, test.columns):
            if column in e.ranks:
                task = column[1]
                ax.plot(e.ranks[column][0], y + off, "o", color=colours.get(task, "grey"), markersize=3.5, alpha=0.7,
                        label=None if task in seen else task.replace("_", " "))
                seen.add(task)
        full = test.complete(e)
        ax.plot(e.mean_rank, y, "D", markersize=7, markerfacecolor="black" if full else "white",
                markeredgecolor="black", zorder=3, label=None if "mean" in seen or not full else "mean rank")
        if full:
            seen.add("mean")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("rank (1 = best)")
    ax.set_title(f"Rank test over {len(test.columns)} frozen columns ({test.datasets} datasets); hollow diamond: "
                 "ranked on some datasets only", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, png, dpi=120)


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


def runtime_section(items: list[Runtime], csv_path: Path) -> str:
    """One Markdown table per measured corpus; all of them in one CSV."""
    if not items:
        return "_no runtime rows_"
    write_csv(csv_path, ["corpus", "method", "data_s", "step_s", "total_s", "ratio"],
              [[r.corpus, *m] for r in items for m in r.methods])
    return "\n\n".join(
        f"Corpus `{r.corpus}`, {r.protocol}, {r.std_kind} (commit `{r.commit}`):\n\n"
        + markdown_table(["method", "data s/batch", "step s/batch", "total s/batch", "ratio to gcc"],
                         [[m, f"{d:.4f}", f"{s:.4f}", f"{t:.4f}", f"{ratio:.2f}"] for m, d, s, t, ratio in r.methods])
        for r in items)


def progress_section(items: list[Progress], csv_path: Path) -> str:
    """The sweep's progress at the table budget: per method, the seeds with frozen and with fine-tuned rows and the
    columns every one of those seeds covers (``–``: no rows of that kind)."""
    def cells(c: Coverage) -> list[str]:
        if not c.seeds:
            return ["–", "–"]
        return [f"{len(c.seeds)} ({' '.join(map(str, c.seeds))})", f"{c.done} of {c.columns}"]

    write_csv(csv_path, ["method", "mode", "frozen_seeds", "frozen_columns_done", "frozen_columns",
                         "finetuned_seeds", "finetuned_columns_done", "finetuned_columns"],
              [[p.method, p.mode, *(v for c in (p.frozen, p.finetuned)
                                    for v in (" ".join(map(str, c.seeds)), c.done, c.columns))] for p in items])
    if not items:
        return "_no pre-trained encoders at the table budget_"
    return markdown_table(["method", "mode", "frozen: seeds", "frozen: columns with every seed", "fine-tuned: seeds",
                           "fine-tuned: columns with every seed"],
                          [[p.method, p.mode, *cells(p.frozen), *cells(p.finetuned)] for p in items])


def provenance_lines(p: Provenance) -> str:
    """The provenance as a Markdown list."""
    return "\n".join([
        f"- rows: {p.rows} result rows, {p.encoders} pre-trained encoders, {p.runtime_rows} runtime rows",
        f"- code commits that produced the rows: {', '.join(f'`{c}`' for c in p.commits)} (`-dirty`: tracked files "
        "differed from the commit; rows stored before the runner left `docs/` out of that check say so also when only "
        "the sweep's own rows and tables there had changed)",
        "- budgets (steps × batch, corpus, CV repeats × folds, SVC protocol): "
        + "; ".join(f"{s} × {b}, {c}, {r} × {f}-fold, svc {svc}" for s, b, c, r, f, svc in p.budgets),
        f"- pre-training wall time recorded by the runner: {p.pretrain_seconds / 60:.1f} min (encoders it found "
        f"already trained are not counted); embedding + evaluation: {p.eval_seconds / 60:.1f} min",
    ])


def protocol_lines(found: dict[str, list[str]]) -> str:
    """The evaluation protocols recorded in the rows, per task."""
    return "\n".join(f"- {task.replace('_', ' ')}: " + "; ".join(f"`{p}`" for p in ps) for task, ps in found.items())


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


def _save_panels(plt: Any, fig: Any, axes: Any, png: Path) -> None:
    """Finish a row of score panels (y label and legend on the first) and write it to ``png``."""
    axes[0][0].set_ylabel("score (%)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, png, dpi=110)


def plot_curves(curves: list[Curve], png: Path) -> None:
    """Score against pre-training steps (symmetric-log x axis, so 0 steps shows), one panel per column; bars are
    the curves' spreads (std over seeds, or one seed's std over its CV repetitions)."""
    plt = _pyplot()
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
    _save_panels(plt, fig, axes, png)


def budget_text(choice: BudgetChoice, changes: dict[int, Sequence[tuple[Curve, float]]], method: str = "gcc") -> str:
    """Where the rule finds ``method``'s curve flat and whether it holds at the tables' budget (the curve's last
    point), as prose, then each curve's change per doubling (``changes`` per step count,
    :func:`~gcc_sgcl.experiments.budget.changes_at`) and how many columns each method is flat on there."""
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


def published_section(items: list[Published], csv_path: Path) -> str:
    """Measured fine-tuned scores beside the published ones (header ``| dataset | method | published | measured |
    difference |``), with where they come from."""
    if not items:
        return ""
    write_csv(csv_path, ["dataset", "method", "published", "measured", "difference", "seeds"],
              [[p.dataset, p.method, p.published, p.measured, p.difference, p.seeds] for p in items])
    body = [[label(p.dataset), p.method, f"{p.published:.1f}",
             "–" if p.measured is None else f"{p.measured:.2f} ({count(p.seeds, 'seed')})",
             "–" if p.difference is None else f"{p.difference:+.2f}"] for p in items]
    return ("Beside the SGCL paper's published fine-tuned E2E scores (its appendix tables, GCC's and SGCL's rows; "
            "its fine-tuning epochs and batch are not stated, this report uses GCC's `finetune.sh` recipe; corpus "
            "and pre-training budget differ as in the fidelity section):\n\n"
            + markdown_table(["dataset", "method", "published", "measured", "difference"], body))


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


def views_section(points: list[ViewsPoint], png: Path, csv_path: Path, method: str = "sgcl") -> str:
    """The views study's table (and ``png``, score against view count per column, and ``csv_path``): per column and
    inference-view count, each method's mean over seeds and ``method`` − GCC over paired seeds with its 90 %
    interval; a sentence says whether that interval's side of 0 changes with the view count on any column."""
    if not points:
        return "No rows of the views study yet (`bash scripts/reproduce.sh views`)."
    header = ["column", "views", "gcc", method, "seeds", f"{method} − gcc (pp)", "90 % interval", "reading"]
    body = []
    for p in points:
        d = p.difference
        body.append([f"{label(p.dataset)} {p.metric}", p.copies, f"{100 * p.means.get('gcc', np.nan):.2f}",
                     f"{100 * p.means.get(method, np.nan):.2f}", d.n if d else 0,
                     f"{100 * d.mean:+.2f}" if d else "–",
                     f"[{100 * d.ci_low:+.2f}, {100 * d.ci_high:+.2f}]" if d and d.n > 1 else "–",
                     READINGS[interval_side(d)] if d else "–"])
    write_csv(csv_path, header, body)
    plot_views(points, png, method)
    readings = defaultdict(set)
    for p, row in zip(points, body):
        if p.difference is not None and p.difference.n > 1:
            readings[p.dataset, p.metric].add(row[-1])
    changed = [f"{label(d)} {m}" for (d, m), r in readings.items() if len(r) > 1]
    verdict = (f"The verdict changes with the number of views on {', '.join(changed)}." if changed else
               "On no column with at least two paired seeds does the verdict change with the number of views.")
    return markdown_table(header, body) + "\n\n" + verdict


VIEWS_ANCHOR = "docs/results.md#inference-views-how-many-to-average-per-row"


def views_headline(points: list[ViewsPoint], default: int, tables: int = 2, method: str = "SGCL") -> str:
    """The README's sentence on the views study: the node-level columns whose reading (:data:`READINGS`) at the
    embeddings' ``default`` view count differs from the tables' ``tables`` views, with the interval at ``default``;
    empty when the two counts are the same or no column has paired seeds at both."""
    paired = {(p.dataset, p.metric, p.copies): p.difference for p in points
              if p.difference is not None and p.difference.n > 1}
    columns = dict.fromkeys((p.dataset, p.metric) for p in points)
    both = [(c, paired[(*c, tables)], paired[(*c, default)]) for c in columns
            if (*c, tables) in paired and (*c, default) in paired]
    if default == tables or not both:
        return ""
    moved = [f"{label(d)} {m}: {READINGS[interval_side(b)]} ({100 * b.mean:+.2f} pp [{100 * b.ci_low:+.2f}, "
             f"{100 * b.ci_high:+.2f}], {b.n} seeds), where {tables} views read {READINGS[interval_side(a)]}"
             for (d, m), a, b in both if interval_side(a) != interval_side(b)]
    reading = (f"changes on {'; '.join(moved)}; the other node-level columns read as at {tables}" if moved else
               f"reads on every node-level column as at {tables}")
    return (f"At {default} views per node, the embeddings' default (the tables average GCC's {tables}), {method} − GCC "
            f"{reading} (90 % t intervals over paired seeds; [Inference views]({VIEWS_ANCHOR})).")


def views_choice_lines(choice: ViewsChoice, default: int, method: str = "sgcl") -> str:
    """The rule choosing the inference-view count (:func:`~gcc_sgcl.experiments.analysis.choose_views`), its
    verdict on the stored rows, the gains it saw and where the code's ``default`` stands."""
    rule = (f"**The default view count, by a rule fixed before seeds 2 and 4–7 landed:** the smallest count that no "
            f"larger count beats, for gcc or {method}, on a node-classification column; a larger count beats a smaller "
            f"one when its seed-paired gain has a 90 % t interval above 0. It decides once every point of those "
            f"columns has {VIEWS_MIN_SEEDS} seeds; the similarity columns take no part and fall as they do.")
    gains = "; ".join(f"{g.method} {label(g.dataset)} {g.fewer} → {g.more} views {100 * g.gain.mean:+.2f} pp "
                      f"[{100 * g.gain.ci_low:+.2f}, {100 * g.gain.ci_high:+.2f}], {g.gain.n} seeds"
                      for g in choice.gains) or "none"
    rising = (f" {choice.candidate} is the largest count measured, so the curve may still be rising: a larger count "
              f"is measured next." if choice.still_rising else "")
    if choice.copies is None:
        verdict = (f"Undecided: the fewest seeds of a point is {choice.seeds} of {VIEWS_MIN_SEEDS}. On the seeds so far "
                   f"the rule would pick {choice.candidate} views.{rising} The code's default stays GCC's {default} "
                   f"(`gcc_sgcl.engine.generate.INFERENCE_COPIES`, the default of `generate.sh --copies` and of "
                   f"`embed_nodes(copies=...)`) until the rule decides.")
    else:
        follows = (f"The code's default is {default} (`gcc_sgcl.engine.generate.INFERENCE_COPIES`: `generate.sh` and "
                   f"`embed_nodes`; whole graphs keep GCC's 2, as the study measured node columns only); GCC's 2 is "
                   f"`--copies 2` / `copies=2`." if default == choice.copies else
                   f"The code's default is still {default}: it does not follow the evidence yet.")
        verdict = f"Decided on {choice.seeds} seeds: {choice.copies} views.{rising} {follows}"
    return f"{rule}\n\n{verdict} Gains of more views that the rule counts: {gains}."


def plot_views(points: list[ViewsPoint], png: Path, method: str = "sgcl") -> None:
    """Mean score over seeds against the inference views averaged per row, one panel per column."""
    plt = _pyplot()
    columns = list(dict.fromkeys((p.dataset, p.metric) for p in points))
    fig, axes = plt.subplots(1, len(columns), figsize=(3.0 * len(columns), 3.0), squeeze=False)
    for ax, (dataset, metric) in zip(axes[0], columns):
        mine = [p for p in points if (p.dataset, p.metric) == (dataset, metric)]
        for name in ("gcc", method):
            ax.plot([p.copies for p in mine], [100 * p.means.get(name, np.nan) for p in mine], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{label(dataset)} {metric}", fontsize=9)
        ax.set_xlabel("inference views")
    _save_panels(plt, fig, axes, png)


def rescored_lines(pairs: list[tuple[ResultRow, ResultRow]]) -> str:
    """Whether re-scored evaluations reproduce their stored rows: per method and seed, the largest difference
    and its column, or "exactly"."""
    if not pairs:
        return "No stored evaluation has been scored again yet."
    worst: dict[tuple[str, int], tuple[float, str]] = {}
    for old, new in pairs:
        gap = abs(new.mean - old.mean)
        key = (old.method, old.seed)
        if gap >= worst.get(key, (-1.0, ""))[0]:
            worst[key] = (gap, f"{label(old.dataset)} {old.metric}: {100 * old.mean:.2f} stored, {100 * new.mean:.2f} now")
    parts = [f"`{m}` seed {s}: " + ("exactly" if gap == 0 else f"up to {100 * gap:.2f} pp ({where})")
             for (m, s), (gap, where) in sorted(worst.items())]
    return ("The views study re-scores the tables' encoders at 2 views with today's code; against their stored "
            "rows: " + "; ".join(parts) + ".")


def and_joined(items: Sequence[object]) -> str:
    """``items`` as an English list.

    >>> and_joined([2, 8, 32]), and_joined(["one"]), and_joined([])
    ('2, 8 and 32', 'one', '')
    """
    words = [str(i) for i in items]
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


def stability_sentence(rows: list[dict]) -> str:
    """What a user should expect of a row, from the stability measurements: the range over encoders and datasets
    of the distance to the row under another seed or numbering, per view count, in % of the rows' norm.

    >>> print(stability_sentence([{"encoder": "e", "dataset": "usa_airport", "copies": c, "nodes": 5,
    ...                            "seed_distance": d, "numbering_distance": d} for c, d in ((2, 0.25), (8, 0.13))]))
    Another `seed`, or the same graph numbered in another order, moves a row by 25 % of its norm at 2 views and 13 % at 8 views (US-Airport; shipped encoder e).
    """
    if not rows:
        return "How far a row moves is not measured yet (`python -m gcc_sgcl.experiments.stability`)."
    by: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        by[r["copies"]] += [r["seed_distance"], r["numbering_distance"]]

    def span(values: list[float]) -> str:
        low, high = round(100 * min(values)), round(100 * max(values))
        return f"{low} %" if low == high else f"{low}–{high} %"

    joined = and_joined([f"{span(v)} of its norm at {c} views" if i == 0 else f"{span(v)} at {c} views"
                         for i, (c, v) in enumerate(sorted(by.items()))])
    datasets = ", ".join(dict.fromkeys(label(r["dataset"]) for r in rows))
    encoders = ", ".join(dict.fromkeys(r["encoder"] for r in rows))
    return (f"Another `seed`, or the same graph numbered in another order, moves a row by {joined} ({datasets}; "
            f"shipped encoder{'s' if ',' in encoders else ''} {encoders}).{cost_sentence(rows)}")


def ms_per_node(r: dict) -> float | None:
    """Milliseconds of embedding per node in one stability measurement (None where it was not timed)."""
    return None if r.get("seconds") is None else 1000 * r["seconds"] / r["nodes"]


def cost_sentence(rows: list[dict]) -> str:
    """The embedding's cost per node at each view count (median over the timed measurements), with a leading space;
    empty where none was timed.

    >>> print(cost_sentence([{"copies": c, "nodes": 1000, "seconds": s, "threads": 2} for c, s in ((2, 1.0), (8, 4.2))]))
     Embedding costs 1.0 ms per node at 2 views and 4.2 ms at 8 views (4.2× the time of 2 views; 2 threads, one run each).
    """
    by: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        if (ms := ms_per_node(r)) is not None:
            by[r["copies"]].append(ms)
    if not by:
        return ""
    cost = [(c, float(np.median(v))) for c, v in sorted(by.items())]
    joined = and_joined([f"{ms:.1f} ms per node at {c} views" if i == 0 else f"{ms:.1f} ms at {c} views"
                         for i, (c, ms) in enumerate(cost)])
    (low, first), (high, last) = cost[0], cost[-1]
    ratio = f"{last / first:.1f}× the time of {low} views; " if high != low else ""
    threads = ", ".join(str(t) for t in sorted({r["threads"] for r in rows if r.get("threads")}))
    return f" Embedding costs {joined} ({ratio}{threads} threads, one run each)."


def stability_table(rows: list[dict]) -> str:
    """The stability measurements (:mod:`gcc_sgcl.experiments.stability`), one line per encoder, dataset and view
    count, distances in % of the rows' norm.

    >>> print(stability_table([{"encoder": "e", "dataset": "usa_airport", "copies": 2, "nodes": 5,
    ...                         "seed_distance": 0.25, "numbering_distance": 0.26}]))
    | encoder | dataset | views | other seed (% of norm) | other numbering (% of norm) | ms per node |
    |---|---|---|---|---|---|
    | e | US-Airport | 2 | 25.0 | 26.0 | – |
    """
    if not rows:
        return "Not measured yet (the command above writes `docs/results/stability.csv`)."
    return markdown_table(["encoder", "dataset", "views", "other seed (% of norm)", "other numbering (% of norm)",
                           "ms per node"],
                          [[r["encoder"], label(r["dataset"]), r["copies"], f"{100 * r['seed_distance']:.1f}",
                            f"{100 * r['numbering_distance']:.1f}",
                            "–" if ms_per_node(r) is None else f"{ms_per_node(r):.2f}"] for r in rows])

