"""What the report says, computed from result rows (:class:`gcc_sgcl.experiments.rows.ResultRow`) and returned as
data: table cells with their significance markers, the pairing of seeds, floor verdicts, the SGCL-vs-GCC
headline, per-stage evidence, heat-map gains, λ2 quintiles, runtime and provenance. Formatting is
:mod:`gcc_sgcl.experiments.render`'s job; the budget study is :mod:`gcc_sgcl.experiments.budget`.

Per encoder, a classification score is the mean over the repeated, bootstrapped CV of the runner; across
seeds a cell shows mean ± std and the Student-t 90 % interval of the mean; comparisons with the ``gcc`` row
of the same mode are paired by seed (:mod:`gcc_sgcl.experiments.stats`). Within one :class:`Rows`, a later row
of the same (method, mode, dataset, task, metric, seed) replaces an earlier one.
"""
from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence, TypeVar

import numpy as np

from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow
from gcc_sgcl.experiments.tables import BASELINE, FINETUNED, RANDOM_INIT, SGCL, budget_of
from gcc_sgcl.method import MethodSpec
from gcc_sgcl.presets import LEAVE_ONE_OUT, SINGLE_STAGES as PRESET_STAGES
from gcc_sgcl.experiments.stats import DOWN, PAPER_ALPHA, UP, Comparison, Summary, compare, marker, seed_ttest, summarize

T = TypeVar("T")

FLOOR_MIN_SEEDS = 3  # seeds a pre-trained method needs to stand against the training-free floor
LOOSE_ALPHA = 0.05
LOOSE = "†"
CLASSIFICATION = ("node_classification", "graph_classification")
SIMILARITY = ("similarity_search",)
# The appendix's ablation: SGCL with its spectral crop / reorder swapped for the random analogue (after
# :class:`~gcc_sgcl.experiments.tables.TableSpec`, at the tables' c); ``sgcl-random-crop`` / ``sgcl-random-permute`` are the controls alone.
SWAPPED = ("sgcl[crop=random]", "sgcl[permute=random]")
ABLATION_METHODS = ("sgcl", *SWAPPED)
# The single-stage presets ``sgcl-<stage>`` (:data:`gcc_sgcl.presets.SINGLE_STAGES`): the heat-map's axes (the
# stages, similar and diverse being the filter's two modes, in the pipeline's order) and the random controls.
CONTROLS = tuple(s for s in PRESET_STAGES if s.startswith("random-"))
HEATMAP_STAGES = tuple(s for s in PRESET_STAGES if s not in CONTROLS)
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
        return _paper_order(dict.fromkeys(r.dataset for r in self.rows if r.task in tasks), lambda d: d)

    def columns(self, tasks: Sequence[str]) -> list[tuple[str, str, str]]:
        """Every (dataset, task, metric) of ``tasks``, datasets in the papers' order (:meth:`datasets`), metrics
        in first-seen order."""
        return _paper_order(dict.fromkeys((r.dataset, r.task, r.metric) for r in self.rows if r.task in tasks),
                            lambda c: c[0])

    def methods(self, classical: bool | None = None) -> list[str]:
        """Methods present, optionally only the training-free (mode ``none``) or only the pre-trained ones."""
        return list(dict.fromkeys(r.method for r in self.rows
                                  if classical is None or (r.mode == CLASSICAL_MODE) == classical))


def _paper_order(items: Iterable[T], dataset: Callable[[T], str]) -> list[T]:
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


def is_swapped(method: str) -> bool:
    """Whether ``method`` names a stage swapped for its random analogue (``sgcl[crop=random]``, at any c)."""
    try:
        return bool({"crop", "permute"} & MethodSpec.parse(method).values.keys())
    except ValueError:  # not a method name
        return False


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


def all_scores(rows: Rows, method: str, mode: str, dataset: str, task: str, metric: str) -> list[float]:
    """Every stored score of ``method`` on the column: each seed's CV repetitions (its mean without them)."""
    return [x for r in rows.by_key.get((method, mode, dataset, task, metric), {}).values() for x in row_scores(r)]


def seed_means(rows: Rows, methods: Sequence[str], mode: str, dataset: str, task: str,
               metric: str) -> dict[str, float]:
    """Each of ``methods`` with rows on the column: its mean over seeds."""
    return {m: float(np.mean(list(v.values()))) for m in methods if (v := rows.seeds(m, mode, dataset, task, metric))}


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


RANK_MIN_SEEDS = 3  # seeds a pre-trained method needs on a column to be ranked there


def average_ranks(scores: dict[str, float]) -> dict[str, float]:
    """Rank of each key by its score, 1 for the highest; tied scores share the mean of the ranks they span.

    >>> average_ranks({"a": 0.7, "b": 0.9, "c": 0.7, "d": 0.5})
    {'a': 2.5, 'b': 1.0, 'c': 2.5, 'd': 4.0}
    """
    order = sorted(scores, key=lambda k: -scores[k])
    ranks, i = {}, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in order[i:j + 1]:
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    return {k: ranks[k] for k in scores}


@dataclass(frozen=True)
class Ranked:
    """One entrant of the rank test: a method in one mode (``none`` for a training-free row), its rank on each
    column where it is ranked (column → (rank, seeds behind its mean, that mean)) and its mean rank over the
    datasets it is ranked on, each dataset weighing once (a dataset's metrics' ranks averaged first)."""

    method: str
    mode: str
    ranks: dict[tuple[str, str, str], tuple[float, int, float]]
    mean_rank: float
    datasets: int


@dataclass(frozen=True)
class RankTest:
    """The paper's rank test (its Fig. 3) on the frozen columns: the columns, every entrant ranked on at least one
    of them (complete entrants first, each group by mean rank) and the number of datasets."""

    columns: list[tuple[str, str, str]]
    entrants: list[Ranked]
    datasets: int

    def complete(self, entrant: Ranked) -> bool:
        """Whether ``entrant`` is ranked on every dataset (only such mean ranks compare with each other)."""
        return entrant.datasets == self.datasets


def rank_test(rows: Rows, modes: Sequence[str], tasks: Sequence[str], methods: Sequence[str],
              min_seeds: int = RANK_MIN_SEEDS) -> RankTest:
    """Rank every entrant on every column of ``tasks`` by its mean over seeds (:func:`average_ranks`: 1 = best,
    ties share). Entrants: each of ``methods`` (pre-trained) in each of ``modes``, on the columns where it has at
    least ``min_seeds`` seeds, and every training-free row (one seed) where it has one. An entrant's mean rank is
    over the datasets it is ranked on; entrants ranked on every dataset come first.

    >>> def r(m, mode, d, x, seed=0):
    ...     return ResultRow(method=m, mode=mode, seed=seed, dataset=d, task="graph_classification",
    ...                      metric="accuracy", mean=x, std=0.0, std_kind="", n=1, protocol="p")
    >>> rows = Rows([r(m, "e2e", d, x, s) for m, d, x in [("gcc", "a", 0.8), ("gcc", "b", 0.6), ("sgcl", "a", 0.7),
    ...             ("sgcl", "b", 0.6)] for s in range(3)] + [r("structural", "none", "a", 0.75)])
    >>> test = rank_test(rows, ["e2e"], ["graph_classification"], ["gcc", "sgcl"])
    >>> [(e.method, e.mean_rank, e.datasets) for e in test.entrants]
    [('gcc', 1.25, 2), ('sgcl', 2.25, 2), ('structural', 2.0, 1)]
    """
    columns = rows.columns(tasks)
    entrants = [(m, mode) for mode in modes for m in methods] + [(m, CLASSICAL_MODE)
                                                                 for m in rows.methods(classical=True)]
    ranked: dict[tuple[str, str], dict[tuple[str, str, str], tuple[float, int, float]]] = defaultdict(dict)
    for column in columns:
        means, seeds = {}, {}
        for method, mode in entrants:
            scores = rows.seeds(method, mode, *column)
            if scores and (mode == CLASSICAL_MODE or len(scores) >= min_seeds):
                means[method, mode], seeds[method, mode] = float(np.mean(list(scores.values()))), len(scores)
        for entrant, rank in average_ranks(means).items():
            ranked[entrant][column] = (rank, seeds[entrant], means[entrant])
    out = []
    for (method, mode), by_column in ranked.items():
        per_dataset: dict[str, list[float]] = defaultdict(list)
        for (dataset, _, _), (rank, _, _) in by_column.items():
            per_dataset[dataset].append(rank)
        out.append(Ranked(method, mode, dict(by_column), float(np.mean([np.mean(v) for v in per_dataset.values()])),
                          len(per_dataset)))
    n_datasets = len(dict.fromkeys(d for d, _, _ in columns))
    out.sort(key=lambda e: (e.datasets != n_datasets, e.mean_rank))
    return RankTest(columns, out, n_datasets)


@dataclass(frozen=True)
class JoinVerdict:
    """On one column: an encoder alone, the structural vector alone and the two joined (``<method> ⊕
    structural``), means over the encoder's seeds that have both rows."""

    column: Column
    method: str
    seeds: int
    encoder: float
    structural: float
    joined: float


def join_verdicts(rows: Rows, modes: Sequence[str], tasks: Sequence[str], methods: Sequence[str],
                  floor: str = "structural") -> list[JoinVerdict]:
    """:class:`JoinVerdict` of every ``method`` with ``method ⊕ floor`` rows, per column and mode."""
    out = []
    for d, task, metric in rows.columns(tasks):
        alone = rows.seeds(floor, CLASSICAL_MODE, d, task, metric)
        for mode in modes:
            for method in methods:
                a, b = paired(rows.seeds(method, mode, d, task, metric),
                              rows.seeds(str(MethodSpec.parse(method).join(floor)), mode, d, task, metric))
                if a and alone:
                    out.append(JoinVerdict(Column(d, task, metric, mode), method, len(a), float(np.mean(a)),
                                           float(np.mean(list(alone.values()))), float(np.mean(b))))
    return out


@dataclass(frozen=True)
class Headline:
    """SGCL against GCC in one mode: the columns (``"<dataset> <metric>"``) where it is ahead or behind (pooled
    means), and those passing the paper's threshold (``strict``) or only p < 0.05 (``loose``), with markers."""

    mode: str
    ahead: list[str]
    behind: list[str]
    strict: list[str]
    loose: list[str]

    @property
    def compared(self) -> int:
        """The number of columns compared (the m of "ahead in n of m")."""
        return len(self.ahead) + len(self.behind)


def headline(rows: Rows, mode: str, tasks: Sequence[str], label: dict[str, str] | None = None,
             method: str = "sgcl") -> Headline:
    """``method`` against ``gcc`` per column with at least two pooled samples; ties count as behind."""
    ahead, behind, strict, loose = [], [], [], []
    for d, task, metric in rows.columns(tasks):
        x, y = pooled(rows, method, mode, d, task, metric)
        if len(x) < 2:
            continue
        c = compare(x, y)
        name = f"{(label or {}).get(d, d)} {metric}"
        (ahead if c.mean_diff > 0 else behind).append(name)
        if marker(c, PAPER_ALPHA):
            strict.append(f"{name} {marker(c, PAPER_ALPHA)}")
        elif mark := loose_mark(c):
            loose.append(f"{name} {mark}")
    return Headline(mode, ahead, behind, strict, loose)


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


@dataclass(frozen=True)
class Evidence:
    """On one classification dataset: SGCL − GCC over ``seeds`` paired seeds (``summary``: their mean and its
    90 % t-interval); each single-stage preset − GCC over the seeds it shares with ``gcc`` (``stages``: the mean
    difference and those seeds); and SGCL − GCC again on each of those seed sets (``sgcl_on``), the like-for-like
    comparison for the stages."""

    dataset: str
    summary: Summary
    stages: dict[str, tuple[float, tuple[int, ...]]]
    sgcl_on: dict[tuple[int, ...], float]

    @property
    def difference(self) -> float:
        """The mean SGCL − GCC over the paired seeds."""
        return self.summary.mean

    @property
    def seeds(self) -> int:
        """The number of paired seeds."""
        return self.summary.n


def evidence(rows: Rows, mode: str) -> list[Evidence]:
    """:class:`Evidence` for every classification dataset where ``sgcl`` and ``gcc`` share a seed."""
    out = []
    for sgcl in seed_differences(rows, SGCL, [mode], CLASSIFICATION):
        d, task, metric = sgcl.column.dataset, sgcl.column.task, sgcl.column.metric
        base = rows.seeds(BASELINE, mode, d, task, metric)
        by_seed = dict(zip(sgcl.seeds, sgcl.differences))
        stages, sgcl_on = {}, {}
        for stage in HEATMAP_STAGES + CONTROLS:
            diffs = seed_differences_of(rows.seeds(f"sgcl-{stage}", mode, d, task, metric), base)
            if diffs:
                common = tuple(diffs)
                stages[stage] = (float(np.mean(list(diffs.values()))), common)
                if all(s in by_seed for s in common):
                    sgcl_on[common] = float(np.mean([by_seed[s] for s in common]))
        out.append(Evidence(d, sgcl.summary, stages, sgcl_on))
    return out


@dataclass(frozen=True)
class HeatMap:
    """The pairwise heat-map on one dataset: per cell (stage ``a``, stage ``b``; the diagonal is ``sgcl-<a>``
    alone) the % gain of its mean over ``gcc``'s on the seeds both have (NaN where not run or no seed is shared),
    the number of those seeds, and its marker against ``gcc`` as in the tables (:func:`significance`: the paper's
    tests on the repetitions of the seeds both have; none for a single shared seed)."""

    gain: np.ndarray
    seeds: np.ndarray
    marks: np.ndarray


def heatmap_gains(rows: Rows, dataset: str, mode: str) -> HeatMap | None:
    """The :class:`HeatMap` of ``sgcl-<a>+<b>`` and ``sgcl-<a>`` on ``dataset``; ``None`` without a ``gcc`` row."""
    columns = [c for c in rows.columns(CLASSIFICATION) if c[0] == dataset]
    if not columns:
        return None
    _, task, metric = columns[0]
    base = rows.seeds(BASELINE, mode, dataset, task, metric)
    if not base:
        return None
    gain = np.full((len(HEATMAP_STAGES), len(HEATMAP_STAGES)), np.nan)
    seeds = np.zeros_like(gain, dtype=int)
    marks = np.full(gain.shape, "", dtype=object)
    for i, a in enumerate(HEATMAP_STAGES):
        for j, b in enumerate(HEATMAP_STAGES):
            names = [f"sgcl-{a}"] if i == j else [f"sgcl-{a}+{b}", f"sgcl-{b}+{a}"]
            name = next((n for n in names if rows.seeds(n, mode, dataset, task, metric)), None)
            if name is not None:
                mine, theirs = paired(rows.seeds(name, mode, dataset, task, metric), base)
                if mine:
                    gain[i, j] = 100 * (np.mean(mine) - np.mean(theirs)) / np.mean(theirs)
                seeds[i, j] = len(mine)
                marks[i, j] = significance(rows, name, mode, dataset, task, metric) if len(mine) > 1 else ""
    return HeatMap(gain, seeds, marks)


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


@dataclass(frozen=True)
class Runtime:
    """One corpus's runtime measurement: per method (data, step, total) seconds per mini-batch and the ratio of
    its total to ``gcc``'s (else the first method's)."""

    corpus: str
    protocol: str
    std_kind: str
    commit: str
    methods: list[tuple[str, float, float, float, float]]


def runtimes(rows: Rows) -> list[Runtime]:
    """One :class:`Runtime` per measured corpus."""
    out = []
    for corpus in dict.fromkeys(r.dataset for r in rows.runtime):
        here = [r for r in rows.runtime if r.dataset == corpus]
        values = {(r.method, r.metric): r.mean for r in here}
        methods = list(dict.fromkeys(r.method for r in here))
        base = values.get((BASELINE, "total_s")) or values[(methods[0], "total_s")]
        out.append(Runtime(corpus, here[0].protocol, here[0].std_kind, here[0].commit, [
            (m, values[(m, "data_s")], values[(m, "step_s")], values[(m, "total_s")], values[(m, "total_s")] / base)
            for m in methods]))
    return out


@dataclass(frozen=True)
class Provenance:
    """Where the rows came from: counts, commits, budgets (steps, batch, corpus, repeats, folds, SVC protocol)
    and the wall time the runner recorded (pre-training it ran itself; each evaluation once)."""

    rows: int
    encoders: int
    runtime_rows: int
    commits: list[str]
    budgets: list[tuple]
    pretrain_seconds: float
    eval_seconds: float


def provenance(stored: Sequence[ResultRow]) -> Provenance:
    """:class:`Provenance` of every stored row, whatever its budget. An evaluation's time is stored on each of its
    metric rows (similarity search has two), so it is counted once per evaluation (:attr:`ResultRow.key`).
    Encoders: trained ones only (joined ``… ⊕ structural`` rows reuse an encoder; 0-step rows are untrained)."""
    results = [r for r in stored if r.task != "runtime"]
    evaluations = {r.key: r.eval_seconds or 0.0 for r in results}
    budgets = sorted({(r.steps, r.batch_size, r.corpus, r.repeats, r.folds, r.svc) for r in results
                      if r.mode != CLASSICAL_MODE}, key=str)
    return Provenance(
        rows=len(results),
        encoders=len({(r.method, r.mode, r.seed, budget_of(r)) for r in results
                      if r.mode != CLASSICAL_MODE and not MethodSpec.parse(r.method).joined and r.steps != 0}),
        runtime_rows=len(stored) - len(results),
        commits=sorted({r.commit for r in stored}),
        budgets=budgets,
        pretrain_seconds=float(sum(r.pretrain_seconds or 0.0 for r in results)),
        eval_seconds=float(sum(evaluations.values())),
    )


@dataclass(frozen=True)
class Coverage:
    """The seeds of one method with rows of one kind of evaluation, and how many of that kind's columns have a row
    of every one of them."""

    seeds: list[int]
    done: int
    columns: int


@dataclass(frozen=True)
class Progress:
    """How far one pre-trained method has got at the table budget, frozen and fine-tuned."""

    method: str
    mode: str
    frozen: Coverage
    finetuned: Coverage


def progress(rows: Rows) -> list[Progress]:
    """:class:`Progress` of every pre-trained method and mode in ``rows`` (joined ``… ⊕ structural`` rows left out:
    they follow their encoder): ``gcc`` and ``sgcl`` first, ``random init`` last, the others in first-seen order."""
    order = {BASELINE: 0, SGCL: 1, RANDOM_INIT: 3}
    found = dict.fromkeys((r.method, r.mode) for r in rows.rows if r.mode != CLASSICAL_MODE and not MethodSpec.parse(r.method).joined)

    def coverage(method: str, mode: str, tasks: Sequence[str]) -> Coverage:
        columns = rows.columns(tasks)
        seeds = {int(r.seed) for r in rows.rows if (r.method, r.mode) == (method, mode) and r.task in tasks}
        done = sum(set(rows.by_key.get((method, mode, *col), {})) == seeds for col in columns) if seeds else 0
        return Coverage(sorted(seeds), done, len(columns))

    return [Progress(method, mode, coverage(method, mode, CLASSIFICATION + SIMILARITY),
                     coverage(method, mode, FINETUNED))
            for method, mode in sorted(found, key=lambda m: order.get(m[0], 2))]


def protocols(stored: Sequence[ResultRow], tasks: Sequence[str]) -> dict[str, list[str]]:
    """Per task of ``tasks``, the distinct evaluation protocols recorded in ``stored`` (e.g. which SVC)."""
    out: dict[str, list[str]] = {}
    for r in stored:
        if r.task in tasks and r.protocol not in out.setdefault(r.task, []):
            out[r.task].append(r.protocol)
    return out


def cv_settings(rows: Rows, tasks: Sequence[str]) -> list[tuple[int, int]]:
    """The distinct (CV repetitions, folds) of the rows of ``tasks``, most frequent first."""
    counts = Counter((r.repeats, r.folds) for r in rows.rows if r.task in tasks and r.repeats and r.folds)
    return [k for k, _ in counts.most_common()]


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
    return _paper_order(points, lambda p: p.dataset)


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


@dataclass(frozen=True)
class LeftOut:
    """SGCL without one stage (``sgcl-no-<stage>``) on one column: what the stage adds (``sgcl`` − the variant)
    and where the variant stands against GCC (the variant − ``gcc``), each over the seeds the pair shares."""

    stage: str
    adds: SeedDifferences | None
    against_gcc: SeedDifferences | None


def leave_one_out(rows: Rows, stages: Sequence[str], modes: Sequence[str] = ("e2e",),
                  tasks: Sequence[str] = CLASSIFICATION + SIMILARITY) -> list[LeftOut]:
    """:class:`LeftOut` of every stage in ``stages`` whose ``sgcl-no-<stage>`` row the table has, per column of
    ``tasks`` where it shares a seed with ``sgcl`` or ``gcc`` (the table's ``sgcl``: the c grid's choice; the
    variants run at that c)."""
    out = []
    trained = set(rows.methods(classical=False))
    for stage in stages:
        name = LEAVE_ONE_OUT + stage
        if name not in trained:
            continue
        adds = {d.column: d for d in seed_differences(rows, SGCL, modes, tasks, against=name)}
        behind = {d.column: d for d in seed_differences(rows, name, modes, tasks)}
        out += [LeftOut(stage, adds.get(c), behind.get(c)) for c in dict.fromkeys([*adds, *behind])]
    return out


def rescored(views: Sequence[ResultRow], stored: Sequence[ResultRow]) -> list[tuple[ResultRow, ResultRow]]:
    """Pairs (stored row, re-scored row): the views study's rows at the tables' view count that re-evaluate an
    evaluation of the tables' store (same :attr:`ResultRow.key` and metric), i.e. the same training and protocol
    scored again (a retrained seed, or a shipped encoder re-scored with later code)."""
    index = {(r.key, r.metric): r for r in stored}
    return [(index[r.key, r.metric], r) for r in views if (r.key, r.metric) in index]
