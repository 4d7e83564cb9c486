"""Tests over datasets, as the field compares methods across benchmarks: a Friedman test with the Nemenyi
critical difference (Demšar, JMLR 2006) per training mode, and the Bayesian signed-rank test of SGCL against GCC
(Benavoli et al., JMLR 2017).

Selection, stated here and nowhere else: the frozen columns of the tables (classification and similarity search);
a dataset is one block, its score the mean of its columns (a similarity dataset's HITS@20 and HITS@40 averaged, so
that two metrics of one dataset do not count as two datasets); the pre-trained entrants of one mode are the tables'
presets with rows on every dataset, each read on the seeds *every* pre-trained entrant of that mode has (a 3-seed
baseline is not ranked against an 8-seed mean), and the training-free rows with a row on every dataset enter each
mode's test (one seed: deterministic, or seed 0).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
from scipy import stats

from gcc_sgcl.experiments.rows import CLASSICAL_MODE
from gcc_sgcl.experiments.stats import nemenyi_cd
from gcc_sgcl.experiments.studies.cells import BASELINE, CLASSIFICATION, SIMILARITY, Rows
from gcc_sgcl.experiments.studies.markdown import (
    and_joined, count, label, markdown_table, pyplot, save_figure, write_csv,
)
from gcc_sgcl.experiments.studies.mean_ranks import entrant_name
from gcc_sgcl.experiments.tables import SGCL

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

ALPHA = 0.05  # the Friedman and Nemenyi tests' level
ROPE = 0.005  # the region of practical equivalence of the Bayesian test: ±0.5 pp of score
DECIDE = 0.95  # the posterior probability the Bayesian test's reading asks for
BAYES_SAMPLES, BAYES_SEED = 50_000, 0
TASKS = CLASSIFICATION + SIMILARITY


def dataset_score(rows: Rows, method: str, mode: str, dataset: str, tasks: Sequence[str],
                  seeds: Sequence[int] | None) -> float | None:
    """``method``'s score on ``dataset``: the mean over the dataset's columns of its mean over ``seeds`` (every
    stored seed with ``None``); ``None`` where a column lacks one of those seeds.

    >>> from gcc_sgcl.experiments.rows import ResultRow
    >>> def r(metric, seed, x):
    ...     return ResultRow(method="gcc", mode="e2e", seed=seed, dataset="kdd_icdm", task="similarity_search",
    ...                      metric=metric, mean=x, std=0.0, std_kind="", n=1, protocol="p")
    >>> rows = Rows([r("hits@20", 0, 0.1), r("hits@20", 1, 0.2), r("hits@40", 0, 0.3), r("hits@40", 1, 0.4)])
    >>> round(dataset_score(rows, "gcc", "e2e", "kdd_icdm", SIMILARITY, [0, 1]), 3), dataset_score(
    ...     rows, "gcc", "e2e", "kdd_icdm", SIMILARITY, [0, 2])
    (0.25, None)
    """
    means = []
    for d, task, metric in rows.columns(tasks):
        if d != dataset:
            continue
        scores = rows.seeds(method, mode, d, task, metric)
        wanted = sorted(scores) if seeds is None else list(seeds)
        if not wanted or any(s not in scores for s in wanted):
            return None
        means.append(float(np.mean([scores[s] for s in wanted])))
    return float(np.mean(means)) if means else None


def common_seeds(rows: Rows, methods: Sequence[str], mode: str, tasks: Sequence[str]) -> tuple[int, ...]:
    """The seeds every one of ``methods`` has on every column of ``tasks`` in ``mode``."""
    sets = [set(rows.seeds(m, mode, *c)) for m in methods for c in rows.columns(tasks)]
    return tuple(sorted(reduce(set.__and__, sets))) if sets else ()


@dataclass(frozen=True)
class FriedmanNemenyi:
    """One mode's test over datasets: ``scores`` and ``ranks`` (datasets × entrants, 1 = best), the
    Friedman χ² and its p, the Nemenyi critical difference ``cd`` at :data:`ALPHA` and the Nemenyi pairwise p-values
    (``scikit_posthocs.posthoc_nemenyi_friedman``), entrants as (method, mode) with the ``seeds`` their pre-trained
    ones are read on."""

    mode: str
    entrants: list[tuple[str, str]]
    seeds: tuple[int, ...]
    datasets: list[str]
    scores: np.ndarray
    ranks: np.ndarray
    chi2: float
    p: float
    cd: float
    pairwise: np.ndarray

    @property
    def mean_ranks(self) -> np.ndarray:
        """Each entrant's rank (1 = best) averaged over the datasets."""
        return self.ranks.mean(axis=0)

    def names(self) -> list[str]:
        """The entrants' display names."""
        return [entrant_name(m, mode) for m, mode in self.entrants]

    def differing(self) -> list[tuple[int, int]]:
        """Index pairs of entrants whose mean ranks differ by at least the critical difference."""
        k = len(self.entrants)
        return [(i, j) for i in range(k) for j in range(i + 1, k)
                if abs(self.mean_ranks[i] - self.mean_ranks[j]) >= self.cd]

    def index(self, method: str) -> int | None:
        """The place of the pre-trained entrant ``method``, ``None`` if it does not enter."""
        return next((i for i, (m, mode) in enumerate(self.entrants) if m == method and mode == self.mode), None)


def friedman_nemenyi(rows: Rows, mode: str, methods: Sequence[str], tasks: Sequence[str] = TASKS,
                     alpha: float = ALPHA) -> FriedmanNemenyi | None:
    """The Friedman test and Nemenyi post-hoc of the entrants of ``mode`` (``methods`` pre-trained, read on their
    common seeds; the training-free rows), each complete on every dataset of ``tasks``; ``None`` with fewer than 3
    entrants or 2 datasets.

    >>> from gcc_sgcl.experiments.rows import ResultRow
    >>> def r(m, mode, d, x, seed=0):
    ...     return ResultRow(method=m, mode=mode, seed=seed, dataset=d, task="graph_classification",
    ...                      metric="accuracy", mean=x, std=0.0, std_kind="", n=1, protocol="p")
    >>> data = {"a": (0.8, 0.7, 0.6), "b": (0.6, 0.5, 0.7), "c": (0.9, 0.6, 0.5), "d": (0.7, 0.8, 0.4)}
    >>> rows = Rows([r(m, "e2e", d, x, s) for d, (g, s_, f) in data.items() for m, x in (("gcc", g), ("sgcl", s_))
    ...              for s in range(3)] + [r("structural", "none", d, f) for d, (_, _, f) in data.items()]
    ...             + [r("gcca", "e2e", "a", 0.9, 0)])
    >>> test = friedman_nemenyi(rows, "e2e", ["gcc", "sgcl", "gcca"])
    >>> test.names(), test.seeds, test.mean_ranks.tolist(), round(test.cd, 2)
    (['gcc (E2E)', 'sgcl (E2E)', 'structural (training-free)'], (0, 1, 2), [1.5, 2.0, 2.5], 1.66)
    """
    datasets = rows.datasets(tasks)
    complete = [m for m in methods
                if all(dataset_score(rows, m, mode, d, tasks, None) is not None for d in datasets)]
    seeds = common_seeds(rows, complete, mode, tasks)
    entrants = [(m, mode) for m in complete if seeds] + [
        (m, CLASSICAL_MODE) for m in rows.methods(classical=True)
        if all(dataset_score(rows, m, CLASSICAL_MODE, d, tasks, None) is not None for d in datasets)]
    if len(entrants) < 3 or len(datasets) < 2:
        return None
    scores = np.array([[dataset_score(rows, m, md, d, tasks, None if md == CLASSICAL_MODE else seeds)
                        for m, md in entrants] for d in datasets])
    ranks = np.vstack([stats.rankdata(-line) for line in scores])  # 1 = best, ties share their mean rank
    chi2, p = stats.friedmanchisquare(*scores.T)
    import scikit_posthocs  # imported only by the report

    pairwise = scikit_posthocs.posthoc_nemenyi_friedman(scores).to_numpy()
    return FriedmanNemenyi(mode, entrants, seeds, datasets, scores, ranks, float(chi2), float(p),
                           nemenyi_cd(len(entrants), len(datasets), alpha), pairwise)


@dataclass(frozen=True)
class BayesSignedRank:
    """SGCL against GCC over datasets in one mode: the per-dataset differences of seed means (over ``seeds``
    paired seeds) and the posterior probabilities (``baycomp.SignedRankTest``) that SGCL is better by more than
    :data:`ROPE`, that the two are within it, and that GCC is better."""

    mode: str
    datasets: list[str]
    seeds: tuple[int, ...]
    differences: np.ndarray
    p_sgcl: float
    p_rope: float
    p_gcc: float

    @property
    def reading(self) -> str:
        """What the posterior says at :data:`DECIDE`.

        >>> BayesSignedRank("e2e", [], (), np.zeros(0), 0.97, 0.02, 0.01).reading
        'SGCL better'
        >>> BayesSignedRank("e2e", [], (), np.zeros(0), 0.5, 0.3, 0.2).reading
        'no decision at 95 %'
        """
        for p, word in ((self.p_sgcl, "SGCL better"), (self.p_rope, "practically equivalent"),
                        (self.p_gcc, "GCC better")):
            if p >= DECIDE:
                return word
        return f"no decision at {100 * DECIDE:g} %"


def bayes_signed_rank(rows: Rows, mode: str, tasks: Sequence[str] = TASKS, method: str = SGCL,
                      rope: float = ROPE) -> BayesSignedRank | None:
    """The Bayesian signed-rank test (``baycomp``, its default prior: a pseudo-dataset at 0 of weight 0.5;
    :data:`BAYES_SAMPLES` posterior samples from seed :data:`BAYES_SEED`) of ``method`` against ``gcc`` on the
    datasets of ``tasks``, each dataset's score the mean over the seeds both have on every column; ``None``
    with fewer than 2 such datasets.

    >>> from gcc_sgcl.experiments.rows import ResultRow
    >>> def r(m, d, x, seed):
    ...     return ResultRow(method=m, mode="e2e", seed=seed, dataset=d, task="graph_classification",
    ...                      metric="accuracy", mean=x, std=0.0, std_kind="", n=1, protocol="p")
    >>> rows = Rows([r(m, d, x + 0.001 * s + (0.03 if m == "sgcl" else 0.0), s) for d, x in
    ...              zip("abcdefgh", (0.5, 0.6, 0.7, 0.8, 0.55, 0.65, 0.75, 0.85)) for m in ("gcc", "sgcl")
    ...              for s in range(3)])
    >>> test = bayes_signed_rank(rows, "e2e")
    >>> test.seeds, round(float(test.differences.mean()), 3), test.reading
    ((0, 1, 2), 0.03, 'SGCL better')
    """
    from baycomp import SignedRankTest  # imported only by the report

    datasets = rows.datasets(tasks)
    seeds = common_seeds(rows, [method, BASELINE], mode, tasks)
    pairs = [(d, dataset_score(rows, method, mode, d, tasks, seeds), dataset_score(rows, BASELINE, mode, d, tasks,
                                                                                    seeds)) for d in datasets]
    pairs = [(d, x, y) for d, x, y in pairs if x is not None and y is not None]
    if len(pairs) < 2 or not seeds:
        return None
    x, y = np.array([p[1] for p in pairs]), np.array([p[2] for p in pairs])
    p_sgcl, p_rope, p_gcc = SignedRankTest.probs(x, y, rope=rope, nsamples=BAYES_SAMPLES, random_state=BAYES_SEED)
    return BayesSignedRank(mode, [p[0] for p in pairs], seeds, x - y, float(p_sgcl), float(p_rope), float(p_gcc))


MODE_NAMES = {"e2e": "E2E", "moco": "MoCo"}


def friedman_text(test: FriedmanNemenyi) -> str:
    """What one mode's Friedman/Nemenyi test shows, in words: entrants and seeds, the χ² and p, the critical
    difference, the pairs it separates and SGCL against GCC."""
    names = test.names()
    seeds = " ".join(map(str, test.seeds))
    pairs = [f"{names[i]} – {names[j]}" for i, j in test.differing()]
    head = (f"**{MODE_NAMES.get(test.mode, test.mode)}** — {count(len(names), 'entrant')} on "
            f"{count(len(test.datasets), 'dataset')}, the pre-trained ones read on seeds {seeds} (those every one "
            f"has): Friedman χ² = {test.chi2:.1f}, p = {test.p:.2g}"
            f" ({'the entrants are not all alike' if test.p < ALPHA else 'no difference among the entrants shown'} "
            f"at α = {ALPHA:g}); Nemenyi critical difference {test.cd:.2f} ranks. Pairs at least that far apart: "
            f"{and_joined(pairs) or 'none'}.")
    g, s = test.index(BASELINE), test.index(SGCL)
    if g is None or s is None:
        return head
    gap = test.mean_ranks[g] - test.mean_ranks[s]
    return head + (f" SGCL against GCC: mean ranks {test.mean_ranks[s]:.2f} and {test.mean_ranks[g]:.2f}, "
                   f"{abs(gap):.2f} apart (Nemenyi p = {test.pairwise[s, g]:.2g}): "
                   + ("a difference at this level." if abs(gap) >= test.cd else "no difference shown."))


def bayes_text(tests: Sequence[BayesSignedRank]) -> str:
    """The Bayesian signed-rank results, one line per mode."""
    return "\n".join(
        f"- {MODE_NAMES.get(b.mode, b.mode)} ({count(len(b.seeds), 'paired seed')}, {count(len(b.datasets), 'dataset')};"
        f" mean SGCL − GCC {100 * b.differences.mean():+.2f} pp): P(SGCL better) = {b.p_sgcl:.3f}, "
        f"P(within ±{100 * ROPE:g} pp) = {b.p_rope:.3f}, P(GCC better) = {b.p_gcc:.3f} — **{b.reading}**."
        for b in tests)


def plot_cd(tests: Sequence[FriedmanNemenyi], png: Path) -> None:
    """One critical-difference diagram per mode (``scikit_posthocs.critical_difference_diagram``): entrants at their
    mean ranks, the CD as a bar, entrants joined where Nemenyi shows no difference."""
    import pandas as pd
    import scikit_posthocs

    plt = pyplot()
    fig, axes = plt.subplots(len(tests), 1, figsize=(9.0, 3.3 * len(tests)), squeeze=False)
    for ax, test in zip(axes[:, 0], tests):
        names = test.names()
        scikit_posthocs.critical_difference_diagram(
            pd.Series(test.mean_ranks, index=names), pd.DataFrame(test.pairwise, index=names, columns=names),
            cd=test.cd, alpha=ALPHA, ax=ax, label_props={"fontsize": 7})
        ax.set_title(f"{MODE_NAMES.get(test.mode, test.mode)}: mean rank over {len(test.datasets)} datasets "
                     f"(Friedman p = {test.p:.2g}; bars join entrants Nemenyi does not separate)", fontsize=8, pad=28)
    fig.tight_layout()
    save_figure(fig, png)


def write_tables(tests: Sequence[FriedmanNemenyi], bayes: Sequence[BayesSignedRank], csv_path: Path) -> str:
    """The CSV (one line per mode and entrant with its score per dataset, one per Bayesian test) and the Markdown
    table of the entrants' mean ranks per mode."""
    body = [[t.mode, name, " ".join(map(str, t.seeds)) if md != CLASSICAL_MODE else "", f"{rank:.4f}",
             *(f"{x:.6f}" for x in t.scores[:, i])]
            for t in tests for i, (name, (_, md), rank) in enumerate(zip(t.names(), t.entrants, t.mean_ranks))]
    body += [[b.mode, "bayes signed-rank sgcl vs gcc", " ".join(map(str, b.seeds)), "",
              f"p_sgcl={b.p_sgcl:.4f}", f"p_rope={b.p_rope:.4f}", f"p_gcc={b.p_gcc:.4f}"] for b in bayes]
    datasets = tests[0].datasets if tests else []
    write_csv(csv_path, ["mode", "entrant", "seeds", "mean_rank", *datasets], body)
    table = [[MODE_NAMES.get(t.mode, t.mode), name, f"{rank:.2f}",
              *(f"{r:g}" for r in t.ranks[:, i])]
             for t in tests for i, (name, rank) in enumerate(zip(t.names(), t.mean_ranks))]
    return markdown_table(["mode", "entrant", "mean rank", *(label(d) for d in datasets)], table)


def sections(t: Tables) -> list[str]:
    """Friedman/Nemenyi per mode and the Bayesian signed-rank test of SGCL against GCC, on the frozen columns."""
    tests = [x for mode in t.modes if (x := friedman_nemenyi(t.rows, mode, t.presets)) is not None]
    bayes = [x for mode in t.modes if (x := bayes_signed_rank(t.rows, mode)) is not None]
    if not tests and not bayes:
        return []
    png = t.folder / "critical_difference.png"
    if tests:
        plot_cd(tests, png)
    return ["## Tests over datasets (frozen encoders)",
            "The frozen columns tested as the field compares methods over benchmarks (Demšar, JMLR 2006; Benavoli "
            "et al., JMLR 2017), each training mode apart. A dataset is one block, its score the mean of its columns "
            "(a similarity dataset's HITS@20 and HITS@40 averaged). Entrants: the tables' presets of that mode with "
            "rows on every dataset, each read on the seeds every one of them has, and the training-free rows with a "
            "row on every dataset. The **Friedman test** asks whether the entrants' ranks differ at all; the "
            f"**Nemenyi critical difference** (α = {ALPHA:g}) is how far apart two mean ranks must be for that pair "
            "to differ. The **Bayesian signed-rank test** (`baycomp`) gives, for SGCL against GCC over the datasets "
            "(each dataset's seed-mean difference over all their paired seeds), the posterior probability that "
            f"SGCL is better by more than {100 * ROPE:g} pp, that the two are within ±{100 * ROPE:g} pp (the region "
            f"of practical equivalence), and that GCC is better; a reading needs {100 * DECIDE:g} %.",
            *(friedman_text(x) for x in tests),
            *([f"![critical difference diagrams]({t.link(png)})"] if tests else []),
            *([write_tables(tests, bayes, t.folder / "tests_over_datasets.csv")] if tests else []),
            *(["SGCL against GCC, Bayesian signed-rank test over datasets:", bayes_text(bayes)] if bayes else [])]
