"""The shared vocabulary of the report's tables, computed from result rows
(:class:`gcc_sgcl.experiments.rows.ResultRow`): :class:`Rows` (the rows indexed by method, mode, column and seed),
table cells with their significance markers, score grids, the pairing of seeds, the paper's three tests per column
(:func:`statistics`) and SGCL − GCC seed by seed (:func:`seed_differences`).

Per encoder, a classification score is the mean over the repeated, bootstrapped CV of the runner; across
seeds a cell shows mean ± std and the Student-t 90 % interval of the mean; comparisons with the ``gcc`` row
of the same mode are paired by seed (:mod:`gcc_sgcl.experiments.stats`). Within one :class:`Rows`, a later row
of the same (method, mode, dataset, task, metric, seed) replaces an earlier one.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence, TypeVar

import numpy as np

from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow
from gcc_sgcl.experiments.stats import DOWN, PAPER_ALPHA, UP, Comparison, Summary, compare, marker, seed_ttest, summarize
from gcc_sgcl.experiments.tables import BASELINE, SGCL, budget_of
from gcc_sgcl.method import MethodSpec

T = TypeVar("T")


LOOSE_ALPHA = 0.05


LOOSE = "†"


CLASSIFICATION = ("node_classification", "graph_classification")


SIMILARITY = ("similarity_search",)


# The appendix's ablation: SGCL with its spectral crop / reorder swapped for the random analogue (after
# :class:`~gcc_sgcl.experiments.tables.TableSpec`, at the tables' c); ``sgcl-random-crop`` / ``sgcl-random-permute`` are the controls alone.
SWAPPED = ("sgcl[crop=random]", "sgcl[permute=random]")


# Display names of the downstream datasets, in the papers' column order (tables follow it; others go last).
DATASET_LABELS = {
    "usa_airport": "US-Airport", "h-index": "H-index", "imdb-binary": "IMDB-B", "imdb-multi": "IMDB-M",
    "collab": "COLLAB", "rdt-b": "RDT-B", "rdt-5k": "RDT-M", "kdd_icdm": "KDD-ICDM", "sigir_cikm": "SIGIR-CIKM",
    "sigmod_icde": "SIGMOD-ICDE",
}


class Rows:
    """Index over one table's result rows: per (method, mode, dataset, task, metric) the row of each seed. Two rows
    of one seed there (e.g. two budgets' rows) are a ``ValueError``: select the table's rows first
    (:meth:`~gcc_sgcl.experiments.tables.TableSpec.select`)."""

    def __init__(self, rows: Iterable[ResultRow]) -> None:
        rows = list(rows)
        self.rows = [r for r in rows if r.task != "runtime"]
        self.runtime = [r for r in rows if r.task == "runtime"]
        self.by_key: dict[tuple, dict[int, ResultRow]] = defaultdict(dict)
        for r in self.rows:
            seeds, seed = self.by_key[(r.method, r.mode, r.dataset, r.task, r.metric)], int(r.seed)
            if seed in seeds:
                raise ValueError(f"two rows for {r.method} {r.mode} {r.dataset} {r.task} {r.metric} seed {seed}: "
                                 f"{budget_of(seeds[seed])} and {budget_of(r)}; select one table's rows first")
            seeds[seed] = r

    def seeds(self, method: str, mode: str, dataset: str, task: str, metric: str) -> dict[int, float]:
        """Score of each seed (the row's mean over its CV repetitions); a seed whose mean is NaN (a failed
        evaluation) is missing, as :mod:`~gcc_sgcl.experiments.stats` treats NaN, so counts and pairs agree."""
        return {s: float(r.mean) for s, r in self.by_key.get((method, mode, dataset, task, metric), {}).items()
                if not np.isnan(r.mean)}

    def datasets(self, tasks: Sequence[str]) -> list[str]:
        """Datasets that have rows of any of ``tasks``, in the papers' order (:data:`DATASET_LABELS`), then the
        others in first-seen order."""
        return paper_order(dict.fromkeys(r.dataset for r in self.rows if r.task in tasks), lambda d: d)

    def columns(self, tasks: Sequence[str]) -> list[tuple[str, str, str]]:
        """Every (dataset, task, metric) of ``tasks``, datasets in the papers' order (:meth:`datasets`), metrics
        in first-seen order."""
        return paper_order(dict.fromkeys((r.dataset, r.task, r.metric) for r in self.rows if r.task in tasks),
                            lambda c: c[0])

    def methods(self, classical: bool | None = None) -> list[str]:
        """Methods present, optionally only the training-free (mode ``none``) or only the pre-trained ones."""
        return list(dict.fromkeys(r.method for r in self.rows
                                  if classical is None or (r.mode == CLASSICAL_MODE) == classical))


def paper_order(items: Iterable[T], dataset: Callable[[T], str]) -> list[T]:
    """``items`` stably sorted by their dataset's place in :data:`DATASET_LABELS` (unlisted datasets last)."""
    place = {name: i for i, name in enumerate(DATASET_LABELS)}
    return sorted(items, key=lambda item: place.get(dataset(item), len(place)))


def c_of(method: str) -> float | None:
    """The filter threshold ``c`` named by a grid variant ``sgcl[c=…]`` (:class:`~gcc_sgcl.method.MethodSpec`),
    else ``None``."""
    try:
        spec = MethodSpec.parse(method)
    except ValueError:  # not a method name
        return None
    return spec.get("c") if spec.preset == SGCL and not spec.joined and spec.values.keys() == {"c"} else None


def c_variant(c: float) -> str:
    """The method name of SGCL at filter threshold ``c``: ``sgcl[c=0.35]`` (the canonical form)."""
    return str(MethodSpec.of(SGCL, {"c": c}))


def is_swapped(method: str) -> bool:
    """Whether ``method`` names a stage swapped for its random analogue (``sgcl[crop=random]``, at any c)."""
    try:
        return bool({"crop", "permute"} & MethodSpec.parse(method).values.keys())
    except ValueError:  # not a method name
        return False


def seed_differences_of(a: dict[int, float], b: dict[int, float]) -> dict[int, float]:
    """``a − b`` on each seed present in both, in seed order.

    >>> seed_differences_of({0: 0.5, 2: 0.75, 1: 0.5}, {1: 0.25, 2: 0.5, 3: 0.0})
    {1: 0.25, 2: 0.25}
    """
    return {s: a[s] - b[s] for s in sorted(set(a) & set(b))}


def paired(a: dict[int, float], b: dict[int, float]) -> tuple[list[float], list[float]]:
    """Scores of the seeds present in both, in seed order."""
    common = sorted(set(a) & set(b))
    return [a[s] for s in common], [b[s] for s in common]


def row_scores(row: ResultRow) -> list[float]:
    """A row's samples: its CV repetitions, or its mean where none are stored (similarity search)."""
    return row.scores or [row.mean]


def baseline_of(method: str) -> str:
    """The row ``method`` is tested against: ``gcc ⊕ <vector>`` for another encoder joined to a training-free
    vector (so the test isolates the encoder, not the joining), else ``gcc``.

    >>> baseline_of("sgcl ⊕ structural"), baseline_of("gcc ⊕ structural"), baseline_of("sgcl")
    ('gcc ⊕ structural', 'gcc', 'gcc')
    """
    spec = MethodSpec.parse(method)
    return str(MethodSpec(BASELINE).join(spec.joined)) if spec.joined and str(spec.encoder) != BASELINE else BASELINE


def pooled(rows: Rows, method: str, mode: str, dataset: str, task: str, metric: str,
           against: str | None = None) -> tuple[list, list]:
    """The paper's samples: every CV repetition of every seed, paired with its baseline's (``against``, by
    default :func:`baseline_of` ``method``) by (seed, repetition) (all encoders are scored on the same splits
    and bootstrap draws); seed means where no repetitions are stored (similarity search). Rows of one table
    share their protocol (:meth:`~gcc_sgcl.experiments.tables.TableSpec.select`), so a seed whose two rows hold different numbers of repetitions
    cannot be paired: an error naming it."""
    baseline = against if against is not None else baseline_of(method)
    mine = rows.by_key.get((method, mode, dataset, task, metric), {})
    base = rows.by_key.get((baseline, mode, dataset, task, metric), {})
    x, y = [], []
    for s in sorted(set(mine) & set(base)):
        a, b = row_scores(mine[s]), row_scores(base[s])
        if len(a) != len(b):
            raise ValueError(f"{method} and {baseline} ({mode}, seed {s}, {dataset} {metric}) hold {len(a)} and "
                             f"{len(b)} repetitions: rows of different protocols cannot be paired")
        x += a
        y += b
    return x, y


def significance(rows: Rows, method: str, mode: str, dataset: str, task: str, metric: str) -> str:
    """``▲``/``▼`` when all three tests give p < 1e-6 against :func:`baseline_of` ``method`` (pooled samples),
    else ``†`` when all give p < 0.05, else ``""`` (also with fewer than two paired samples)."""
    x, y = pooled(rows, method, mode, dataset, task, metric)
    if len(x) < 2:
        return ""
    c = compare(x, y)
    return marker(c, PAPER_ALPHA) or (LOOSE if marker(c, LOOSE_ALPHA) else "")


def loose_mark(c: Comparison) -> str:
    """``"† higher"`` / ``"† lower"`` when all p-values of ``c`` are below 0.05, else ``""`` (▲/▼ are the
    paper's 1e-6 only)."""
    return f"{LOOSE} {'higher' if c.mean_diff > 0 else 'lower'}" if marker(c, LOOSE_ALPHA) else ""


SEED_STD = "std over seeds"


@dataclass(frozen=True)
class Cell:
    """One table cell: ``seeds`` encoders, mean/std/90 % t-interval over them; with one seed ``std`` is the
    row's own spread (its CV repetitions, or for similarity search a bootstrap s.e. over query pairs), which
    ``std_kind`` names; ``marker`` against :func:`baseline_of` the method."""

    seeds: int
    mean: float
    std: float
    ci_low: float
    ci_high: float
    std_kind: str
    marker: str

    @property
    def one_seed(self) -> bool:
        """Whether ``std`` is a single row's spread rather than the std over seeds."""
        return self.seeds == 1


def cell(rows: Rows, method: str, mode: str, dataset: str, task: str, metric: str, versus_gcc: bool) -> Cell | None:
    """The cell of (method, mode) on (dataset, task, metric), ``None`` without rows."""
    scores = rows.seeds(method, mode, dataset, task, metric)
    if not scores:
        return None
    s = summarize(list(scores.values()), interval="t")
    if len(scores) == 1:
        row = rows.by_key[(method, mode, dataset, task, metric)][next(iter(scores))]
        return Cell(1, s.mean, float(row.std), s.ci_low, s.ci_high, row.std_kind, "")
    mark = significance(rows, method, mode, dataset, task, metric) if versus_gcc and method != BASELINE else ""
    return Cell(len(scores), s.mean, s.std, s.ci_low, s.ci_high, SEED_STD, mark)


@dataclass(frozen=True)
class Column:
    """A table column: one metric of one dataset under one training mode."""

    dataset: str
    task: str
    metric: str
    mode: str


@dataclass(frozen=True)
class GridRow:
    """A table row: a method (``training_free``: mode ``none`` in every column), its cells and seed count."""

    method: str
    training_free: bool
    seeds: int
    cells: list[Cell | None]


def score_grid(rows: Rows, modes: Sequence[str], tasks: Sequence[str],
               methods: Sequence[str]) -> tuple[list[Column], list[GridRow]]:
    """Columns = dataset × mode × metric of ``tasks``; rows = ``methods`` (pre-trained) then every training-free
    method; rows without any cell are left out."""
    found = rows.columns(tasks)
    columns = [Column(d, t, m, mode) for dataset in dict.fromkeys(d for d, _, _ in found) for mode in modes
               for d, t, m in found if d == dataset]
    out = []
    for method, free in [(m, False) for m in methods] + [(m, True) for m in rows.methods(classical=True)]:
        cells, seeds = [], set()
        for c in columns:
            mode = CLASSICAL_MODE if free else c.mode
            seeds |= set(rows.seeds(method, mode, c.dataset, c.task, c.metric))
            cells.append(cell(rows, method, mode, c.dataset, c.task, c.metric, versus_gcc=not free))
        if any(x is not None for x in cells):
            out.append(GridRow(method, free, len(seeds), cells))
    return columns, out


@dataclass(frozen=True)
class Statistic:
    """``method`` against its baseline (:func:`statistics`) on one column: seed-paired means, the 90 % t-interval of
    ``method``'s mean, the tests on the pooled samples (``comparison``) and the Wilcoxon p of the seed means."""

    column: Column
    seeds: int
    samples: int
    mean: float
    baseline: float
    ci_low: float
    ci_high: float
    comparison: Comparison
    p_seed_means: float | None


def statistics(rows: Rows, method: str, modes: Sequence[str], tasks: Sequence[str],
               against: str | None = None) -> list[Statistic]:
    """One :class:`Statistic` per column with at least two paired seeds and pooled samples; the baseline is
    ``against``, by default :func:`baseline_of` ``method``."""
    baseline, out = against if against is not None else baseline_of(method), []
    for d, task, metric in rows.columns(tasks):
        for mode in modes:
            x, y = paired(rows.seeds(method, mode, d, task, metric), rows.seeds(baseline, mode, d, task, metric))
            px, py = pooled(rows, method, mode, d, task, metric, baseline)
            if len(x) < 2 or len(px) < 2:
                continue
            s, b = summarize(x, interval="t"), summarize(y, interval="t")
            out.append(Statistic(Column(d, task, metric, mode), len(x), len(px), s.mean, b.mean, s.ci_low,
                                 s.ci_high, compare(px, py), compare(x, y).p_wilcoxon))
    return out


def all_scores(rows: Rows, method: str, mode: str, dataset: str, task: str, metric: str) -> list[float]:
    """Every stored score of ``method`` on the column: each seed's CV repetitions (its mean without them)."""
    return [x for r in rows.by_key.get((method, mode, dataset, task, metric), {}).values() for x in row_scores(r)]


def seed_means(rows: Rows, methods: Sequence[str], mode: str, dataset: str, task: str,
               metric: str) -> dict[str, float]:
    """Each of ``methods`` with rows on the column: its mean over seeds."""
    return {m: float(np.mean(list(v.values()))) for m in methods if (v := rows.seeds(m, mode, dataset, task, metric))}


@dataclass(frozen=True)
class SeedDifferences:
    """``method`` − ``gcc`` on one column, seed by seed over the seeds both have, and the
    :func:`~gcc_sgcl.experiments.stats.summarize` of those differences (their mean and its 90 % Student-t
    interval: a few seeds are too few for the bootstrap)."""

    column: Column
    seeds: tuple[int, ...]
    differences: tuple[float, ...]
    summary: Summary

    @property
    def p(self) -> float | None:
        """The seed-level two-sided t-test p of a zero mean difference (:func:`~gcc_sgcl.experiments.stats.
        seed_ttest`; < 0.10 exactly when the 90 % interval excludes 0)."""
        return seed_ttest(self.differences)


def seed_differences(rows: Rows, method: str, modes: Sequence[str], tasks: Sequence[str],
                     against: str = BASELINE) -> list[SeedDifferences]:
    """:class:`SeedDifferences` of ``method`` − ``against`` (``gcc``) for every column of ``tasks`` and mode where
    they share a seed."""
    out = []
    for d, task, metric in rows.columns(tasks):
        for mode in modes:
            diffs = seed_differences_of(rows.seeds(method, mode, d, task, metric),
                                        rows.seeds(against, mode, d, task, metric))
            if diffs:
                out.append(SeedDifferences(Column(d, task, metric, mode), tuple(diffs), tuple(diffs.values()),
                                           summarize(list(diffs.values()), interval="t")))
    return out


def cv_settings(rows: Rows, tasks: Sequence[str]) -> list[tuple[int, int]]:
    """The distinct (CV repetitions, folds) of the rows of ``tasks``, most frequent first."""
    counts = Counter((r.repeats, r.folds) for r in rows.rows if r.task in tasks and r.repeats and r.folds)
    return [k for k, _ in counts.most_common()]


FLOOR_MIN_SEEDS = 3  # seeds a pre-trained method needs to stand against the training-free floor


@dataclass(frozen=True)
class FloorVerdict:
    """On one column: the best pre-trained seed-mean (over ``seeds`` seeds) against the best training-free one
    (or another floor, such as random init), and the unpaired tests of their scores (every CV repetition or fold
    of every seed; ``None`` with fewer than two on a side)."""

    column: Column
    best: str
    score: float
    floor: str
    floor_score: float
    comparison: Comparison | None = None
    seeds: int = 1

    @property
    def verdict(self) -> str:
        """``"beats"`` / ``"does NOT beat"`` when every test gives p < 0.05 (higher / lower), else ``"is level
        with"``: a difference the tests cannot tell from the CV noise is no verdict; without a test (one score
        on a side) ``"is above"`` / ``"is not above"``, untested."""
        if self.comparison is None:
            return "is above" if self.score > self.floor_score else "is not above"
        return {UP: "beats", DOWN: "does NOT beat"}.get(marker(self.comparison, LOOSE_ALPHA), "is level with")


def floor_verdicts(rows: Rows, modes: Sequence[str], tasks: Sequence[str], methods: Sequence[str],
                   min_seeds: int = FLOOR_MIN_SEEDS, floor: str | None = None) -> list[FloorVerdict]:
    """Per column: the best seed-mean of ``methods`` (pre-trained) against the best training-free mean (or, with
    ``floor``, that method's mean in the same mode, e.g. random init), with Mann–Whitney and Welch's t-test on
    their scores. Only methods with at least ``min_seeds`` seeds on the column compete (fewer when no method has
    that many: those with the most), so that a one-seed row's luck does not stand for pre-training."""
    out = []
    for d, task, metric in rows.columns(tasks):
        classical = seed_means(rows, rows.methods(classical=True), CLASSICAL_MODE, d, task, metric)
        for mode in modes:
            floor_mode = CLASSICAL_MODE if floor is None else mode
            floors = classical if floor is None else seed_means(rows, [floor], mode, d, task, metric)
            trained = seed_means(rows, [m for m in methods if m != floor], mode, d, task, metric)
            counts = {m: len(rows.seeds(m, mode, d, task, metric)) for m in trained}
            need = min(min_seeds, max(counts.values(), default=0))
            trained = {m: v for m, v in trained.items() if counts[m] >= need}
            if floors and trained:
                best, lowest = max(trained, key=trained.get), max(floors, key=floors.get)
                a = all_scores(rows, best, mode, d, task, metric)
                b = all_scores(rows, lowest, floor_mode, d, task, metric)
                c = compare(a, b, paired=False) if min(len(a), len(b)) >= 2 else None
                out.append(FloorVerdict(Column(d, task, metric, mode), best, trained[best], lowest, floors[lowest],
                                        c, counts[best]))
    return out
