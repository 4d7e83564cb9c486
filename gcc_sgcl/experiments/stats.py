"""Statistics for the results tables (paper appendix, "Confidence intervals and statistical methodology").

Per method: mean, std and a bootstrap 5–95 % interval of the mean (:func:`summarize`; the Student-t interval
for a handful of seeds, where a percentile bootstrap has too few distinct resamples). Against the
baseline row (``gcc``): Wilcoxon signed-rank, Mann–Whitney U and t-test p-values (:func:`compare`); a
difference is declared significant only when every p-value is below 1e-6, and marked ▲ or ▼ by its sign
(:func:`marker`).

What to pass: the paper averages the folds within each CV repetition and keeps the 10 repetitions of each
of its 8 encoders, "an effective sample size of 80" per method. The classification tasks return one score
per repetition (``TaskResult.scores``) and their CV splits and bootstrap draws depend only on the labels and
the evaluation seed, so scores of two methods concatenated over seeds in the same order pair up by
position, i.e. by (seed, repetition). With one value per seed the 1e-6 threshold cannot be met by the
Wilcoxon test below 21 seeds (:func:`min_wilcoxon_p`).

NaN values are treated as missing: they are dropped (pairwise in a paired comparison) and ``n`` counts
what is left.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

# The paper's significance threshold: every p-value must be below it.
PAPER_ALPHA = 1e-6
UP, DOWN = "▲", "▼"
_BOOTSTRAP_VALUES = 10**6  # resampled values held in memory at once by the bootstrap


@dataclass(frozen=True)
class Summary:
    """``n`` values (NaN dropped): their mean, sample std (ddof=1; 0 for a single value) and the 90 % interval
    ``ci_low``/``ci_high`` of the mean (see :func:`summarize`)."""

    n: int
    mean: float
    std: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class Comparison:
    """``scores`` against ``baseline``: ``n`` and ``n_baseline`` values used (pairs when ``paired``),
    ``mean_diff`` = mean(scores) − mean(baseline), two-sided p-values; a test that is undefined for the
    data (see :func:`compare`) has ``None``."""

    n: int
    n_baseline: int
    paired: bool
    mean_diff: float
    p_wilcoxon: float | None
    p_mannwhitney: float | None
    p_ttest: float | None


def _vector(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    """``values`` as a 1-D float array, or a ValueError naming ``name``."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of numbers, got shape {x.shape}")
    return x


def _pvalue(p: float) -> float | None:
    """A test's p-value as a float, or ``None`` where the test is undefined (scipy returns NaN)."""
    return None if np.isnan(p) else float(p)


def summarize(values: Sequence[float] | np.ndarray, n_boot: int = 10000, seed: int = 0,
              interval: str = "bootstrap") -> Summary:
    """Mean, std and a 90 % interval of the mean of ``values``: ``interval="bootstrap"`` (the paper's), the 5th to
    95th percentile of the mean resampled ``n_boot`` times by ``scipy.stats.bootstrap`` from
    ``numpy.random.default_rng(seed)``; ``"t"``, Student's t interval (n − 1 degrees of freedom), for a few values
    such as paired seeds: with 3 values a percentile bootstrap has only 10 distinct means and a single contrary
    value rarely enters its interval.

    >>> summarize([1.0, 1.0, 1.0])
    Summary(n=3, mean=1.0, std=0.0, ci_low=1.0, ci_high=1.0)
    >>> s = summarize([0.70, 0.72, 0.75, 0.71, 0.74])
    >>> bool(s.ci_low < s.mean < s.ci_high), round(s.std, 4)
    (True, 0.0207)
    >>> t = summarize([-0.53, 2.01, 2.77], interval="t")
    >>> round(t.ci_low, 2), round(t.ci_high, 2)
    (-1.5, 4.33)
    """
    x = _vector(values, "values")
    x = x[~np.isnan(x)]
    if x.size == 0:
        raise ValueError("values holds no number that is not NaN; nothing to summarize")
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    if interval not in ("bootstrap", "t"):
        raise ValueError(f"interval must be 'bootstrap' or 't', got {interval!r}")
    if x.size == 1:  # no spread
        ci_low = ci_high = float(x[0])
    elif interval == "t":
        half = float(stats.t.ppf(0.95, x.size - 1) * stats.sem(x))
        ci_low, ci_high = float(x.mean()) - half, float(x.mean()) + half
    else:
        ci = stats.bootstrap(
            (x,), np.mean, n_resamples=n_boot, batch=max(1, _BOOTSTRAP_VALUES // x.size),
            confidence_level=0.90, method="percentile", rng=np.random.default_rng(seed),
        ).confidence_interval
        ci_low, ci_high = float(ci.low), float(ci.high)
    return Summary(
        n=int(x.size),
        mean=float(x.mean()),
        std=float(x.std(ddof=1)) if x.size > 1 else 0.0,
        ci_low=ci_low,
        ci_high=ci_high,
    )


def compare(
    scores: Sequence[float] | np.ndarray, baseline: Sequence[float] | np.ndarray, paired: bool = True
) -> Comparison:
    """Two-sided tests of ``scores`` against ``baseline`` (``scipy.stats``).

    ``paired``: ``scores[i]`` and ``baseline[i]`` share a seed (and CV split), so the lengths must match;
    the Wilcoxon signed-rank test (up to 50 pairs scipy's exact null distribution, also with ties, where it is
    the no-tie distribution, an approximation that can be slightly anti-conservative: scipy's default switches
    to the normal approximation on any tie, whose smallest p at 30 pairs, ≈ 1.7e-6, could never pass the
    paper's 1e-6 however consistent the differences; beyond 50 pairs the normal approximation) and the paired
    t-test ``ttest_rel`` are used. Unpaired: no Wilcoxon and Welch's ``ttest_ind(equal_var=False)``.
    Mann–Whitney U is computed either way. ``p_wilcoxon`` is ``None`` with fewer than 2 pairs or when every
    difference is zero; ``p_ttest`` is ``None`` with fewer than 2 values (per group when unpaired), when
    every paired difference is zero, or when scipy finds it undefined (NaN, e.g. two equal constant groups).

    >>> c = compare([0.9, 0.8, 0.85, 0.95, 0.7], [0.5, 0.6, 0.55, 0.45, 0.4])
    >>> c.p_wilcoxon, round(c.p_mannwhitney, 4), round(c.mean_diff, 2)
    (0.0625, 0.0079, 0.34)
    """
    a, b = _vector(scores, "scores"), _vector(baseline, "baseline")
    if paired:
        if a.size != b.size:
            raise ValueError(
                f"a paired comparison needs one baseline value per score (paired by position, i.e. by seed); "
                f"got {a.size} scores and {b.size} baseline values"
            )
        keep = ~(np.isnan(a) | np.isnan(b))
        a, b = a[keep], b[keep]
    else:
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:
        raise ValueError(
            f"nothing to compare: {a.size} scores and {b.size} baseline values left after dropping NaN"
        )
    p_wilcoxon = p_ttest = None
    if paired:
        differs = bool(np.any(a != b))
        if a.size >= 2 and differs:
            p_wilcoxon = _pvalue(stats.wilcoxon(a, b, method="exact" if a.size <= 50 else "asymptotic").pvalue)
            p_ttest = _pvalue(stats.ttest_rel(a, b).pvalue)
    elif a.size >= 2 and b.size >= 2:
        p_ttest = _pvalue(stats.ttest_ind(a, b, equal_var=False).pvalue)
    return Comparison(
        n=int(a.size),
        n_baseline=int(b.size),
        paired=paired,
        mean_diff=float(a.mean() - b.mean()),
        p_wilcoxon=p_wilcoxon,
        p_mannwhitney=_pvalue(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue),
        p_ttest=p_ttest,
    )


def marker(comparison: Comparison, alpha: float = PAPER_ALPHA) -> str:
    """``"▲"`` when every available p-value is below ``alpha`` and the scores are higher, ``"▼"`` when
    they are all below ``alpha`` and the scores are lower, else ``""``. The default 1e-6 is the paper's
    threshold ("significant only if all p-values < 1e-6").

    >>> marker(Comparison(80, 80, True, 0.02, 1e-9, 1e-8, 1e-10))
    '▲'
    >>> marker(Comparison(8, 8, True, 0.02, 0.0078125, 1e-4, 1e-7))
    ''
    """
    pvalues = [p for p in (comparison.p_wilcoxon, comparison.p_mannwhitney, comparison.p_ttest) if p is not None]
    if not pvalues or not all(p < alpha for p in pvalues):
        return ""
    if comparison.mean_diff > 0:
        return UP
    if comparison.mean_diff < 0:
        return DOWN
    return ""


def seed_ttest(differences: Sequence[float] | np.ndarray) -> float | None:
    """Two-sided p of the one-sample t-test that the mean of ``differences`` (one paired difference per seed, the
    independent samples) is 0, ``scipy.stats.ttest_1samp``; its 90 % Student-t interval excludes 0 exactly when
    p < 0.10. ``None`` with fewer than 2 values; without spread the interval is a point, and p is 0 (equal
    non-zero differences) or 1 (all zero).

    >>> round(seed_ttest([0.01, 0.02, 0.01]), 4), seed_ttest([0.01]), seed_ttest([0.01, 0.01]), seed_ttest([0, 0])
    (0.0572, None, 0.0, 1.0)
    """
    x = _vector(differences, "differences")
    x = x[~np.isnan(x)]
    if x.size < 2:
        return None
    if not np.ptp(x) > 0:
        return 0.0 if x[0] != 0 else 1.0
    return _pvalue(stats.ttest_1samp(x, 0.0).pvalue)


def summary_ttest(summary: Summary) -> float | None:
    """:func:`seed_ttest`'s p from a :class:`Summary` of the differences (their count, mean and std) where the
    values themselves are not kept: ``None`` with fewer than 2; without spread 0 (non-zero mean) or 1.

    >>> round(summary_ttest(summarize([0.01, 0.02, 0.01], interval="t")), 4), summary_ttest(Summary(1, 0.1, 0, 0, 0))
    (0.0572, None)
    """
    if summary.n < 2:
        return None
    if not summary.std > 0:
        return 0.0 if summary.mean != 0 else 1.0
    t = summary.mean / (summary.std / np.sqrt(summary.n))
    return float(2 * stats.t.sf(abs(t), summary.n - 1))


def fdr_adjusted(pvalues: Sequence[float | None]) -> list[float | None]:
    """Benjamini–Hochberg adjusted p-values (``scipy.stats.false_discovery_control``) of the family ``pvalues``;
    a ``None`` (no test) stays ``None`` and is not counted in the family. Declaring the columns with adjusted
    p < q keeps the expected share of false declarations among them at most q.

    >>> [p if p is None else round(p, 4) for p in fdr_adjusted([0.01, 0.04, None, 0.03, 0.2])]
    [0.04, 0.0533, None, 0.0533, 0.2]
    """
    tested = [p for p in pvalues if p is not None]
    adjusted = iter(stats.false_discovery_control(tested).tolist() if tested else [])
    return [None if p is None else float(next(adjusted)) for p in pvalues]


def holm_adjusted(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (``statsmodels.stats.multitest.multipletests(method="holm")``) of the family
    ``pvalues``; a ``None`` (no test) stays ``None`` and is not counted in the family. Rejecting where the adjusted
    p is below α keeps the probability of any false rejection in the family at most α, whatever the dependence
    between the tests.

    >>> [p if p is None else round(p, 4) for p in holm_adjusted([0.01, 0.04, None, 0.03, 0.2])]
    [0.04, 0.09, None, 0.09, 0.2]
    """
    from statsmodels.stats.multitest import multipletests  # imported only by the report

    tested = [p for p in pvalues if p is not None]
    adjusted = iter(multipletests(tested, method="holm")[1].tolist() if tested else [])
    return [None if p is None else float(next(adjusted)) for p in pvalues]


def nemenyi_cd(entrants: int, datasets: int, alpha: float = 0.05) -> float:
    """The Nemenyi critical difference of mean ranks (Demšar 2006, eq. 5): two of ``entrants`` methods ranked on
    ``datasets`` datasets differ at level ``alpha`` when their mean ranks differ by at least
    ``q_alpha * sqrt(k (k + 1) / (6 N))``, ``q_alpha`` the studentized range quantile over ``sqrt(2)``
    (``scipy.stats.studentized_range``, infinite degrees of freedom).

    >>> round(nemenyi_cd(11, 9), 2), round(nemenyi_cd(4, 14), 3)  # the second: Demšar's q_0.05 = 2.569 example
    (5.03, 1.254)
    """
    if entrants < 2 or datasets < 1:
        raise ValueError(f"the critical difference needs at least 2 entrants and 1 dataset, got {entrants} and "
                         f"{datasets}")
    q = float(stats.studentized_range.ppf(1.0 - alpha, entrants, np.inf)) / np.sqrt(2.0)
    return float(q * np.sqrt(entrants * (entrants + 1) / (6.0 * datasets)))


def min_wilcoxon_p(n: int) -> float:
    """The smallest two-sided exact Wilcoxon signed-rank p-value with ``n`` non-zero paired differences,
    ``2 / 2**n`` (all differences of one sign), capped at 1. Below 21 pairs it exceeds the paper's 1e-6, so
    no comparison can be marked significant. (Beyond 50 pairs :func:`compare` uses the normal approximation,
    whose smallest p differs but is far below 1e-6.)

    >>> min_wilcoxon_p(5), min_wilcoxon_p(8), min_wilcoxon_p(20) > PAPER_ALPHA > min_wilcoxon_p(21)
    (0.0625, 0.0078125, True)
    """
    if n < 0:
        raise ValueError(f"n (number of pairs) must be non-negative, got {n}")
    return min(1.0, 2.0 / 2.0**n)
