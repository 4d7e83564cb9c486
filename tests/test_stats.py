"""The results-table statistics against known answers (exact test distributions, textbook formulas)."""
import numpy as np
import pytest
from scipy.stats import t as student_t

from gcc_sgcl.experiments.stats import (
    DOWN,
    PAPER_ALPHA,
    UP,
    Comparison,
    compare,
    marker,
    min_wilcoxon_p,
    summarize,
)

BASE = np.array([0.50, 0.61, 0.55, 0.47, 0.58])


# ---------------------------------------------------------------- compare


def test_wilcoxon_with_five_positive_differences_is_exact_two_sided_0_0625():
    result = compare(BASE + np.array([0.01, 0.03, 0.02, 0.05, 0.04]), BASE)
    assert result.p_wilcoxon == pytest.approx(0.0625)
    assert result.p_wilcoxon == pytest.approx(min_wilcoxon_p(5))
    assert result.n == result.n_baseline == 5 and result.paired


@pytest.mark.parametrize("paired", [True, False])
def test_mann_whitney_of_two_separated_groups_of_five_is_exact_2_over_252(paired):
    result = compare([6.0, 8.0, 7.0, 10.0, 9.0], [1.0, 2.0, 3.0, 4.0, 5.0], paired=paired)
    assert result.p_mannwhitney == pytest.approx(2 / 252)
    assert result.mean_diff == pytest.approx(5.0)


def test_paired_t_test_matches_the_textbook_formula():
    rng = np.random.default_rng(0)
    base = rng.normal(0.6, 0.05, size=12)
    scores = base + rng.normal(0.01, 0.02, size=12)
    d = scores - base
    t = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
    assert compare(scores, base).p_ttest == pytest.approx(2 * student_t.sf(abs(t), df=len(d) - 1), rel=1e-9)


def test_unpaired_t_test_is_welch_with_the_satterthwaite_degrees_of_freedom():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.0, 1.0, size=9), rng.normal(0.5, 3.0, size=14)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    t = (a.mean() - b.mean()) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    result = compare(a, b, paired=False)
    assert result.p_ttest == pytest.approx(2 * student_t.sf(abs(t), df=df), rel=1e-9)
    assert result.p_wilcoxon is None and (result.n, result.n_baseline) == (9, 14)


def test_paired_comparison_of_mismatched_lengths_names_both_counts():
    with pytest.raises(ValueError, match="got 5 scores and 4 baseline values"):
        compare(BASE, BASE[:4])
    assert compare(BASE, BASE[:4], paired=False).n_baseline == 4


def test_nan_drops_the_whole_pair_in_a_paired_comparison():
    scores = BASE + np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    scores[2] = np.nan
    result = compare(scores, BASE)
    assert result.n == result.n_baseline == 4
    assert result.mean_diff == pytest.approx(0.3)
    assert result.p_wilcoxon == pytest.approx(min_wilcoxon_p(4))


def test_identical_scores_leave_the_undefined_paired_tests_empty():
    result = compare(BASE, BASE.copy())
    assert result.p_wilcoxon is None and result.p_ttest is None
    assert result.p_mannwhitney == pytest.approx(1.0)
    assert marker(result) == ""


def test_all_nan_input_refuses_to_compare():
    with pytest.raises(ValueError, match="nothing to compare"):
        compare([np.nan, np.nan], [0.5, 0.6])


# ---------------------------------------------------------------- marker


def separated_runs(n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    base = rng.normal(0.6, 0.01, size=n)
    return base + shift + rng.normal(0.0, 0.002, size=n), base


def test_marker_points_up_or_down_when_all_tests_clear_the_paper_threshold():
    up = compare(*separated_runs(80, 0.05))
    down = compare(*separated_runs(80, -0.05))
    assert max(up.p_wilcoxon, up.p_mannwhitney, up.p_ttest) < PAPER_ALPHA
    assert (marker(up), marker(down)) == (UP, DOWN)


def test_marker_stays_empty_when_eight_seeds_cannot_reach_the_paper_threshold():
    few = compare(*separated_runs(8, 0.05))
    assert few.mean_diff > 0 and few.p_wilcoxon == pytest.approx(min_wilcoxon_p(8))
    assert marker(few) == ""
    assert marker(few, alpha=0.01) == UP


def test_thirty_consistently_lower_pairs_with_tied_differences_reach_the_paper_threshold():
    lower, base = separated_runs(30, -0.1)
    lower[1] = lower[0] - base[0] + base[1]  # two equal differences: scipy's default would go asymptotic
    result = compare(lower, base)
    assert result.p_wilcoxon == pytest.approx(min_wilcoxon_p(30))  # every difference negative: 2 / 2**30
    assert marker(result) == DOWN


def test_t_interval_of_a_few_paired_seeds_is_students():
    diffs = np.array([-0.53, 2.01, 2.77])
    s = summarize(diffs, interval="t")
    half = student_t.ppf(0.95, 2) * diffs.std(ddof=1) / np.sqrt(3)
    assert (s.ci_low, s.ci_high) == pytest.approx((diffs.mean() - half, diffs.mean() + half))
    assert s.ci_low < 0 < summarize(diffs).ci_low  # one contrary seed of 3: the bootstrap's interval misses 0
    with pytest.raises(ValueError, match="interval must be"):
        summarize(diffs, interval="normal")


def test_marker_needs_every_available_p_value_below_alpha():
    assert marker(Comparison(80, 80, True, 0.1, 1e-9, 1e-3, 1e-9)) == ""
    assert marker(Comparison(80, 80, False, -0.1, None, 1e-9, 1e-9)) == DOWN
    assert marker(Comparison(1, 1, False, 0.1, None, None, None)) == ""


def test_min_wilcoxon_p_is_two_over_two_to_the_n_capped_at_one():
    assert [min_wilcoxon_p(n) for n in (0, 1, 2, 10)] == [1.0, 1.0, 0.5, 2 / 1024]
    with pytest.raises(ValueError, match="non-negative"):
        min_wilcoxon_p(-1)


# ---------------------------------------------------------------- summarize


def test_summary_of_a_constant_list_has_zero_std_and_a_point_interval():
    s = summarize([0.25] * 6)
    assert (s.n, s.mean, s.std, s.ci_low, s.ci_high) == (6, 0.25, 0.0, 0.25, 0.25)


def test_bootstrap_interval_of_a_large_normal_sample_is_mean_plus_minus_1_645_standard_errors():
    x = np.random.default_rng(3).normal(3.0, 2.0, size=2000)
    s = summarize(x, seed=4)
    half = 1.645 * x.std(ddof=1) / np.sqrt(len(x))
    assert s.mean == pytest.approx(x.mean()) and s.std == pytest.approx(x.std(ddof=1))
    assert s.ci_low == pytest.approx(x.mean() - half, abs=0.1 * half)
    assert s.ci_high == pytest.approx(x.mean() + half, abs=0.1 * half)


def test_summary_interval_depends_only_on_the_seed():
    x = np.random.default_rng(5).normal(size=30)
    a, b, c = summarize(x, n_boot=500, seed=1), summarize(x, n_boot=500, seed=1), summarize(x, n_boot=500, seed=2)
    assert a == b and a.ci_low != c.ci_low


def test_summary_drops_nan_and_handles_a_single_value():
    s = summarize([0.5, np.nan])
    assert (s.n, s.mean, s.std, s.ci_low, s.ci_high) == (1, 0.5, 0.0, 0.5, 0.5)
    with pytest.raises(ValueError, match="no number"):
        summarize([np.nan])
