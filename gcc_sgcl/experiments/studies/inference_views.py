"""The inference-views study (its own row store, ``views.jsonl.gz``): score and SGCL − GCC against the number of
views averaged per embedding row, the rule choosing the default, and how re-scored rows compare with the tables'.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from gcc_sgcl.engine.views import INFERENCE_COPIES
from gcc_sgcl.experiments.rows import ResultRow, RowStore
from gcc_sgcl.experiments.stats import Summary, summarize, summary_ttest
from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, SIMILARITY, paper_order, seed_differences_of
from gcc_sgcl.experiments.studies.markdown import (
    READINGS, pyplot, save_panels, and_joined, holm_readings, interval_side, label, markdown_table, write_csv,
)
from gcc_sgcl.experiments.tables import BASELINE, SGCL
from gcc_sgcl.method import MethodSpec

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


@dataclass(frozen=True)
class ViewsPoint:
    """One column at one inference-view count: each method's mean over its seeds, and ``method`` − ``gcc`` seed by
    seed (:class:`~gcc_sgcl.experiments.stats.Summary` over the paired seeds; None without a paired seed)."""

    dataset: str
    metric: str
    copies: int
    means: dict[str, float]
    seeds: dict[str, int]
    difference: Summary | None


def _views_scores(rows: Sequence[ResultRow], method: str) -> dict[tuple[str, str, str, int], dict[str, dict[int, float]]]:
    """The views study's scores: per (task, dataset, metric, view count), the seed-to-score map of ``gcc`` and of
    ``method`` (frozen E2E rows; a later row of a seed replaces an earlier one)."""
    by: dict[tuple, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        spec = MethodSpec.parse(r.method)
        name = BASELINE if r.method == BASELINE else (method if spec.preset == method and not spec.joined else None)
        if name is None or r.mode != "e2e" or r.copies is None or r.task not in CLASSIFICATION + SIMILARITY:
            continue
        by[r.task, r.dataset, r.metric, r.copies][name][r.seed] = r.mean
    return by


def views_study(rows: Sequence[ResultRow], method: str = SGCL) -> list[ViewsPoint]:
    """The views study (stage ``views``): per column and view count of the frozen E2E rows of ``gcc`` and ``method``
    (the chosen ``sgcl`` when its name carries a c), the means and the seed-paired difference."""
    points = []
    for (_, dataset, metric, copies), scores in sorted(_views_scores(rows, method).items(),
                                                        key=lambda item: (item[0][2], item[0][3])):
        diffs = seed_differences_of(scores.get(method, {}), scores.get(BASELINE, {}))
        points.append(ViewsPoint(dataset, metric, copies, {m: float(np.mean(list(s.values()))) for m, s in
                                                          scores.items()}, {m: len(s) for m, s in scores.items()},
                                 summarize(list(diffs.values()), interval="t") if diffs else None))
    return paper_order(points, lambda p: p.dataset)


VIEWS_MIN_SEEDS = 8  # paired seeds every point of the choosing columns needs before the rule decides


VIEWS_TASK = "node_classification"  # the columns the view count is chosen on; the similarity columns fall as they do


@dataclass(frozen=True)
class ViewsGain:
    """More views beating fewer: ``method``'s score at ``more`` − at ``fewer`` views on one column, paired by seed,
    whose 90 % t interval lies above 0."""

    method: str
    dataset: str
    metric: str
    fewer: int
    more: int
    gain: Summary


@dataclass(frozen=True)
class ViewsChoice:
    """The view count the rule of :func:`choose_views` picks (``copies``; None until every point of the choosing
    columns has ``VIEWS_MIN_SEEDS`` seeds), the counts measured, the fewest seeds of a point and the gains seen."""

    copies: int | None
    counts: tuple[int, ...]
    seeds: int
    gains: tuple[ViewsGain, ...]

    @property
    def candidate(self) -> int | None:
        """The count the rule picks on the seeds stored so far (decided or not)."""
        beaten = {g.fewer for g in self.gains}
        return next((k for k in self.counts if k not in beaten), None)

    @property
    def still_rising(self) -> bool:
        """Whether the pick is the largest count measured: a larger one might beat it too."""
        return self.candidate is not None and len(self.counts) > 1 and self.candidate == self.counts[-1]


def choose_views(rows: Sequence[ResultRow], method: str = SGCL, task: str = VIEWS_TASK,
                 min_seeds: int = VIEWS_MIN_SEEDS) -> ViewsChoice:
    """The inference-view count the evidence supports, by a rule fixed before the seeds landed: the smallest count
    that no larger count beats, for ``gcc`` or ``method``, on a column of ``task``; a larger count beats a smaller one
    when its seed-paired gain has a 90 % t interval above 0. Decided (``copies`` set) once every (method, column,
    count) point has ``min_seeds`` seeds; the other task kinds' columns take no part.

    >>> from gcc_sgcl.experiments.rows import ResultRow
    >>> def row(m, k, seed, score):
    ...     return ResultRow(method=m, mode="e2e", dataset="d", task="node_classification", metric="micro_f1",
    ...                      seed=seed, mean=score, std=0.0, std_kind="", n=1, protocol="p", copies=k)
    >>> rows = [row(m, k, s, 0.6 + (0.02 if k == 8 else 0) + 0.001 * s * (k == 32)) for m in ("gcc", "sgcl")
    ...         for k in (2, 8, 32) for s in range(8)]
    >>> choice = choose_views(rows)
    >>> choice.copies, choice.seeds, sorted({(g.fewer, g.more) for g in choice.gains})
    (8, 8, [(2, 8), (2, 32)])
    >>> choose_views(rows[:-1]).copies is None, choose_views(rows[:-1]).candidate
    (True, 8)
    """
    cells: dict[tuple[str, str, str], dict[int, dict[int, float]]] = defaultdict(dict)
    for (t, dataset, metric, copies), scores in _views_scores(rows, method).items():
        if t == task:
            for name in (BASELINE, method):
                cells[name, dataset, metric][copies] = scores.get(name, {})
    counts = tuple(sorted({k for by in cells.values() for k in by}))
    seeds = min((len(by.get(k, {})) for by in cells.values() for k in counts), default=0)
    gains = []
    for (name, dataset, metric), by in cells.items():
        for fewer in counts:
            for more in (k for k in counts if k > fewer):
                diffs = list(seed_differences_of(by.get(more, {}), by.get(fewer, {})).values())
                gain = summarize(diffs, interval="t") if len(diffs) > 1 else None
                if gain is not None and gain.ci_low > 0:
                    gains.append(ViewsGain(name, dataset, metric, fewer, more, gain))
    choice = ViewsChoice(None, counts, seeds, tuple(gains))
    return dataclasses.replace(choice, copies=choice.candidate) if seeds >= min_seeds else choice


def rescored(views: Sequence[ResultRow], stored: Sequence[ResultRow]) -> list[tuple[ResultRow, ResultRow]]:
    """Pairs (stored row, re-scored row): the views study's rows at the tables' view count that re-evaluate an
    evaluation of the tables' store (same :attr:`ResultRow.key` and metric), i.e. the same training and protocol
    scored again (a retrained seed, or a shipped encoder re-scored with later code)."""
    index = {(r.key, r.metric): r for r in stored}
    return [(index[r.key, r.metric], r) for r in views if (r.key, r.metric) in index]


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
    """The README's sentence on the views study: the node-level columns whose reading at the embeddings' ``default``
    view count differs from the tables' ``tables`` views, each count's columns one family read with Holm's
    correction (:func:`~gcc_sgcl.experiments.studies.markdown.holm_readings`), with the interval at ``default``; empty when the two counts are the same or
    no column has paired seeds at both."""
    paired = {(p.dataset, p.metric, p.copies): p.difference for p in points
              if p.difference is not None and p.difference.n > 1}
    columns = dict.fromkeys((p.dataset, p.metric) for p in points)
    both = [(c, paired[(*c, tables)], paired[(*c, default)]) for c in columns
            if (*c, tables) in paired and (*c, default) in paired]
    if default == tables or not both:
        return ""
    at_tables, at_default = ([r for _, r in holm_readings([(summary_ttest(d), d.mean) for d in family])]
                             for family in ([a for _, a, _ in both], [b for _, _, b in both]))
    moved = [f"{label(d)} {m}: {rb} ({100 * b.mean:+.2f} pp [{100 * b.ci_low:+.2f}, {100 * b.ci_high:+.2f}], "
             f"{b.n} seeds), where {tables} views read {ra}"
             for ((d, m), _, b), ra, rb in zip(both, at_tables, at_default) if ra != rb]
    reading = (f"changes on {'; '.join(moved)}; the other columns read as at {tables}" if moved else
               f"reads on every column as at {tables}")
    return (f"At {default} views per node (the embeddings' default; the tables average GCC's {tables}), {method} − GCC "
            f"on the {len(both)} node-level columns, Holm-corrected, {reading} ([Inference views]({VIEWS_ANCHOR})).")


def views_choice_lines(choice: ViewsChoice, default: int, method: str = "sgcl") -> str:
    """The rule choosing the inference-view count (:func:`~gcc_sgcl.experiments.studies.inference_views.choose_views`), its
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
                   f"(`gcc_sgcl.engine.views.INFERENCE_COPIES`, the default of `generate.sh --copies` and of "
                   f"`embed_nodes(copies=...)`) until the rule decides.")
    else:
        follows = (f"The code's default is {default} (`gcc_sgcl.engine.views.INFERENCE_COPIES`: `generate.sh` and "
                   f"`embed_nodes`; whole graphs keep GCC's 2, as the study measured node columns only); GCC's 2 is "
                   f"`--copies 2` / `copies=2`." if default == choice.copies else
                   f"The code's default is still {default}: it does not follow the evidence yet.")
        verdict = f"Decided on {choice.seeds} seeds: {choice.copies} views.{rising} {follows}"
    return f"{rule}\n\n{verdict} Gains of more views that the rule counts: {gains}."


def plot_views(points: list[ViewsPoint], png: Path, method: str = "sgcl") -> None:
    """Mean score over seeds against the inference views averaged per row, one panel per column."""
    plt = pyplot()
    columns = list(dict.fromkeys((p.dataset, p.metric) for p in points))
    fig, axes = plt.subplots(1, len(columns), figsize=(3.0 * len(columns), 3.0), squeeze=False)
    for ax, (dataset, metric) in zip(axes[0], columns):
        mine = [p for p in points if (p.dataset, p.metric) == (dataset, metric)]
        for name in ("gcc", method):
            ax.plot([p.copies for p in mine], [100 * p.means.get(name, np.nan) for p in mine], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{label(dataset)} {metric}", fontsize=9)
        ax.set_xlabel("inference views")
    save_panels(fig, axes, png)


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


def views_store(rows_path: Path) -> Path:
    """The views study's row store beside the tables' (``views.jsonl.gz`` beside ``rows.jsonl.gz``)."""
    return rows_path.with_name("views.jsonl" + "".join(rows_path.suffixes[1:]))


def sections(t: Tables) -> list[str]:
    """The views study (stage ``views``, its own store): score and SGCL − GCC against the inference views averaged
    per row, on the node-level columns (the tables stay at GCC's 2 views), and how its 2-view rows compare with the
    tables' stored rows of the same evaluations."""
    views = RowStore(views_store(t.rows_path)).load()
    points = views_study(views)
    pairs = rescored(views, t.stored)
    png = t.folder / "views.png"
    text = views_section(points, png, t.folder / "views.csv")
    measured = and_joined(sorted({p.copies for p in points})) or "several"
    return ["## Inference views: how many to average per row",
            "Each row of an embedding is the mean over `--copies` random views of its node (GCC: 2, which every "
            "table above uses). Rows of `bash scripts/reproduce.sh views` (`docs/results/views.jsonl.gz`): the "
            f"same encoders re-scored at {measured} views on the node-level columns, seed-paired. The "
            "graph columns are left as they are.",
            *([f"![score against inference views]({t.link(png)})"] if points else []), text,
            *([views_choice_lines(choose_views(views), INFERENCE_COPIES)] if points else []),
            rescored_lines(pairs),
            *(["Such differences come from the machine the rows were scored or trained on (its BLAS kernel and MKL "
               "code path; the thread count for training), not from the code: measured in `docs/reproducibility.md`; "
               "rows record their machine (`host`) since 2026-12-02."] if pairs else [])]
