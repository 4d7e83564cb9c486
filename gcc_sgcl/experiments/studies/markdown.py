"""How the report's tables are written: Markdown tables and CSV files, figures, dataset labels, cells, score grids,
the paper's statistics and the seed-by-seed SGCL − GCC section shared by several studies. They format numbers the
studies and :mod:`~gcc_sgcl.experiments.studies.cells` compute (``seed_difference_parts`` asks ``cells`` for
them). A ``*_section``-style function writes its CSV and returns its Markdown.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from gcc_sgcl.experiments.stats import PAPER_ALPHA, Summary, holm_adjusted, marker
from gcc_sgcl.experiments.studies.cells import (
    CLASSIFICATION, DATASET_LABELS, LOOSE_ALPHA, SIMILARITY, Cell, Column, FloorVerdict, GridRow, SeedDifferences,
    Statistic,
    baseline_of, loose_mark, seed_differences,
)
from gcc_sgcl.experiments.tables import FINETUNED, SGCL
from gcc_sgcl.fileio import atomic_target

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


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
    pyplot().close(fig)


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


def p_text(value: float | None) -> str:
    """A p-value as the tables print it (three significant digits; ``–`` when undefined).

    >>> p_text(0.012345), p_text(None)
    ('0.0123', '–')
    """
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
                     f"[{100 * s.ci_low:.2f}, {100 * s.ci_high:.2f}]", *map(p_text, p),
                     marker(c, PAPER_ALPHA) or "no", loose_mark(c) or "no", p_text(s.p_seed_means)])
        flat.append([s.column.dataset, s.column.mode, s.column.metric, s.seeds, s.samples, s.mean, s.baseline,
                     s.mean - s.baseline, s.ci_low, s.ci_high, *p, s.p_seed_means])
    write_csv(csv_path, ["dataset", "mode", "metric", "seeds", "samples", method, against, "difference", "ci5",
                         "ci95", "p_wilcoxon", "p_mannwhitney", "p_ttest", "p_wilcoxon_seed_means"], flat)
    return markdown_table(header, body) if body else "_fewer than two paired seeds_"


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


def column_name(c: Column, modes: set[str]) -> str:
    """A column's label in running text: the dataset, its mode when ``modes`` holds several, its metric for
    similarity search."""
    return (label(c.dataset) + (f" {c.mode.upper()}" if len(modes) > 1 else "")
            + (f" {c.metric}" if c.task in SIMILARITY else ""))


READINGS = {"interval above 0": "SGCL ahead", "interval below 0": "GCC ahead",
            "interval contains 0": "no difference shown", "one seed, no interval": "one seed only"}

FWER = 0.05  # the family-wise error rate of the corrected verdicts (Holm)


def holm_readings(tests: Sequence[tuple[float | None, float]], alpha: float = FWER) -> list[tuple[float | None, str]]:
    """The readings of one family of seed-level tests, each given as ``(p, mean difference)`` (``p`` None: one seed,
    no test): the Holm-adjusted p (:func:`~gcc_sgcl.experiments.stats.holm_adjusted`) and ``SGCL ahead`` / ``GCC
    ahead`` where it is below ``alpha`` (the family-wise error rate), else ``no difference shown`` (``one seed
    only`` without a test).

    >>> [(round(p, 4), r) for p, r in holm_readings([(0.0004, 0.01), (0.0354, -0.02), (0.3, 0.01)])]
    [(0.0012, 'SGCL ahead'), (0.0708, 'no difference shown'), (0.3, 'no difference shown')]
    >>> holm_readings([(None, 0.02)])
    [(None, 'one seed only')]
    """
    adjusted = holm_adjusted([p for p, _ in tests])
    return [(p, READINGS["one seed, no interval"] if p is None else "no difference shown" if p >= alpha
             else "SGCL ahead" if mean > 0 else "GCC ahead") for p, (_, mean) in zip(adjusted, tests)]


def corrected_readings(items: Sequence[SeedDifferences], alpha: float = FWER) -> list[tuple[float | None, str]]:
    """:func:`holm_readings` of the family ``items`` (each one's seed-level t-test and mean difference).

    >>> from gcc_sgcl.experiments.studies.cells import Column
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> def d(*v):
    ...     return SeedDifferences(Column("imdb-multi", "t", "accuracy", "e2e"), tuple(range(len(v))), v,
    ...                            summarize(list(v), interval="t"))
    >>> [(round(p, 4), r) for p, r in corrected_readings([d(0.010, 0.012, 0.011, 0.013), d(-0.01, -0.03, -0.02, -0.01)])]
    [(0.0008, 'SGCL ahead'), (0.0354, 'GCC ahead')]
    >>> [r for _, r in corrected_readings([d(0.010, 0.012, 0.011, 0.013), d(0.01, -0.02, 0.03, 0.011), d(0.02)])]
    ['SGCL ahead', 'no difference shown', 'one seed only']
    """
    return holm_readings([(d.p, d.summary.mean) for d in items], alpha)


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
    plot_seed_differences(items, [column_name(d.column, modes) for d in items], f"{method.upper()} − GCC", png)
    body = [[column_name(d.column, modes), len(d.seeds),
             " ".join(f"{round(100 * v, 2) + 0.0:+.2f}" for v in d.differences),
             f"{100 * d.summary.mean:+.2f}",
             f"[{100 * d.summary.ci_low:+.2f}, {100 * d.summary.ci_high:+.2f}]" if len(d.seeds) > 1 else "–",
             "–" if d.p is None else f"{d.p:.3g}"]
            for d in items]
    return markdown_table(["column", "paired seeds", "per seed (pp)", "mean (pp)", "90 % t-interval",
                           "t-test p (seeds)"], body)


def interval_cell(d: SeedDifferences | None) -> str:
    """``+0.52 [−0.31, +1.35] (3)`` in pp: the mean over paired seeds, its 90 % t-interval and the seed count."""
    if d is None:
        return "–"
    interval = f" [{100 * d.summary.ci_low:+.2f}, {100 * d.summary.ci_high:+.2f}]" if len(d.seeds) > 1 else ""
    return f"{100 * d.summary.mean:+.2f}{interval} ({len(d.seeds)})"


def plot_seed_differences(items: list[SeedDifferences], names: list[str], title: str, png: Path) -> None:
    """One column per item: its seeds' differences as dots, their mean with its t-interval as a bar."""
    plt = pyplot()
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


def pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend (imported on first use: the report's tables need no plots)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_panels(fig: Any, axes: Any, png: Path) -> None:
    """Finish a row of score panels (y label and legend on the first) and write it to ``png``."""
    axes[0][0].set_ylabel("score (%)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, png, dpi=110)


def and_joined(items: Sequence[object]) -> str:
    """``items`` as an English list.

    >>> and_joined([2, 8, 32]), and_joined(["one"]), and_joined([])
    ('2, 8 and 32', 'one', '')
    """
    words = [str(i) for i in items]
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


def seed_difference_parts(t: Tables, tasks: Sequence[str] = CLASSIFICATION, stem: str = "sgcl_minus_gcc") -> list[str]:
    """SGCL − GCC seed by seed on the columns of ``tasks`` (frozen classification, or fine-tuned) in the table's
    modes: the dot plot ``<stem>.png`` and its table (``<stem>.csv``)."""
    items = seed_differences(t.rows, SGCL, t.modes, tasks)
    png = t.folder / f"{stem}.png"
    text = seed_differences_section(items, SGCL, png, t.folder / f"{stem}.csv")
    if not items:
        return [text]
    if set(tasks) <= set(SIMILARITY):
        score = "one HITS@k per seed"
    else:
        over = "folds" if set(tasks) <= set(FINETUNED) else "CV repetitions"
        score = f"each seed's score is its mean over the {over}"
    return [f"Seed by seed (`sgcl` and `gcc` encoders of the same seed; {score}), the mean difference with its 90 % "
            "Student-t interval over seeds:",
            f"![SGCL − GCC per seed]({t.link(png)})", text]


def floor_lines(verdicts: list[FloorVerdict], floor: str = "the best training-free row") -> str:
    """One sentence per floor verdict (``floor`` names what was beaten): "beats" / "does NOT beat" only when
    every test gives p < 0.05, "is above" / "is not above" where no test can run."""
    return "\n".join(
        f"- {label(v.column.dataset)} {v.column.metric} ({v.column.mode.upper()}): best pre-trained `{v.best}` "
        f"({count(v.seeds, 'seed')}) {100 * v.score:.2f} {v.verdict} {floor} `{v.floor}` "
        f"{100 * v.floor_score:.2f}"
        + (f" (Mann–Whitney p {p_text(v.comparison.p_mannwhitney)}, Welch t p {p_text(v.comparison.p_ttest)})."
           if v.comparison is not None else " (one score on a side: untested).") for v in verdicts)
