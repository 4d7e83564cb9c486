"""The report's statistical readings on hand-made rows: Holm's correction behind the headline's words, the tests
over datasets (Friedman, Nemenyi, Bayesian signed-rank), budget changes tested as changes, and the pre-registered
alignment check's decision rule."""
import numpy as np
import pytest
from scipy import stats

from gcc_sgcl.experiments.rows import ResultRow
from gcc_sgcl.experiments.stats import holm_adjusted, nemenyi_cd, summarize
from gcc_sgcl.experiments.studies import alignment_check as check
from gcc_sgcl.experiments.studies.cells import Column, Rows, SeedDifferences
from gcc_sgcl.experiments.studies.long_budget import budget_changes, budget_sentence
from gcc_sgcl.experiments.studies.markdown import corrected_readings
from gcc_sgcl.experiments.studies.over_datasets import bayes_signed_rank, friedman_nemenyi
from gcc_sgcl.experiments.studies.readme import headline_of
from gcc_sgcl.experiments.tables import TableSpec

NODE = ("usa_airport", "h-index")
GRAPH = ("imdb-binary", "imdb-multi", "collab", "rdt-b")


def row(method, dataset, mean, seed=0, mode="e2e", steps=None, **kw):
    task = "node_classification" if dataset in NODE else "similarity_search" if "@" in kw.get(
        "metric", "") else "graph_classification"
    metric = kw.pop("metric", "micro_f1" if dataset in NODE else "accuracy")
    extra = {"steps": steps, "batch_size": 256, "corpus": "snap"} if steps else {}
    return ResultRow(method=method, mode=mode, seed=seed, dataset=dataset, task=task, metric=metric, mean=mean,
                     std=0.0, std_kind="", n=1, protocol="p", **extra)


def diffs(*values, dataset="imdb-binary", mode="e2e"):
    return SeedDifferences(Column(dataset, "graph_classification", "accuracy", mode), tuple(range(len(values))),
                           tuple(values), summarize(list(values), interval="t"))


def test_holm_matches_the_step_down_rule_written_out():
    p = [0.001, 0.04, 0.012, 0.3, 0.02]
    order = np.argsort(p)
    expected, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):  # p_(i) × (m − i), made monotone, capped at 1
        running = max(running, min(1.0, p[i] * (len(p) - rank)))
        expected[i] = running
    assert holm_adjusted(p) == pytest.approx(expected)
    assert holm_adjusted([None, 0.01]) == [None, 0.01]


def test_a_column_whose_interval_excludes_zero_can_read_no_difference_once_the_family_is_corrected():
    # alone, +1 pp on 3 seeds has p ≈ 0.057 — its 90 % interval excludes 0, Holm at 5 % does not reject
    weak = diffs(0.01, 0.02, 0.01)
    assert weak.summary.ci_low > 0
    assert corrected_readings([weak])[0][1] == "no difference shown"
    strong = diffs(0.010, 0.011, 0.012, 0.010, 0.011)
    readings = corrected_readings([strong, weak, diffs(-0.03, -0.031, -0.029, -0.03, -0.032, dataset="rdt-b")])
    assert [r for _, r in readings] == ["SGCL ahead", "no difference shown", "GCC ahead"]


def test_the_headline_words_come_from_holm_over_e2e_and_moco_together():
    # the E2E column alone would pass at 5 % (p ≈ 0.025); in a family with 6 MoCo columns of no difference its
    # Holm-adjusted p is 7 times that: the headline must not call it ahead
    seeds, gaps = range(4), (0.005, 0.015, 0.008, 0.016)
    e2e = [row(m, "imdb-binary", 0.70 + (gaps[s] if m == "sgcl" else 0.0), s) for m in ("gcc", "sgcl") for s in seeds]
    moco = [row(m, d, 0.60 + (0.01 * (-1) ** s if m == "sgcl" else 0.0), s, mode="moco") for m in ("gcc", "sgcl")
            for d in (*NODE, *GRAPH) for s in seeds]
    assert stats.ttest_1samp(gaps, 0).pvalue < 0.05
    text = headline_of(Rows(e2e + moco))
    assert "| IMDB-B accuracy | 4 | +1.10 |" in text and "| no difference shown |" in text
    assert "SGCL beats GCC on no column" in text and "the 7 frozen columns of E2E and MoCo one family" in text


def test_friedman_and_nemenyi_read_the_entrants_at_their_common_seeds_only():
    data = {d: i for i, d in enumerate((*NODE, *GRAPH))}
    rows = [row("gcc", d, 0.7 + 0.01 * i, s) for d, i in data.items() for s in range(8)]
    rows += [row("sgcl", d, 0.7 + 0.01 * i + (0.05 if s >= 3 else -0.001), s) for d, i in data.items()
             for s in range(8)]  # ahead only on seeds 3–7, which the 3-seed baseline lacks
    rows += [row("grace", d, 0.7 + 0.01 * i - 0.002, s) for d, i in data.items() for s in range(3)]
    rows += [row("random", d, 0.1, mode="none") for d in data]
    test = friedman_nemenyi(Rows(rows), "e2e", ["gcc", "sgcl", "grace"])
    assert test.seeds == (0, 1, 2)
    assert dict(zip(test.names(), test.mean_ranks.tolist())) == {
        "gcc (E2E)": 1.0, "sgcl (E2E)": 2.0, "grace (E2E)": 3.0, "random (training-free)": 4.0}
    assert test.chi2 == pytest.approx(stats.friedmanchisquare(*test.scores.T).statistic)
    assert test.cd == pytest.approx(nemenyi_cd(4, 6))
    assert (0, 3) in test.differing() and (0, 1) not in test.differing()


def test_nemenyi_cd_reproduces_demsars_table():
    # Demšar (2006), Table 5: q_0.05 = 2.343 for k = 3, 2.728 for k = 5, 3.164 for k = 10
    for k, q in ((3, 2.343), (5, 2.728), (10, 3.164)):
        assert nemenyi_cd(k, 12) == pytest.approx(q * np.sqrt(k * (k + 1) / 72), abs=2e-3)


def test_the_bayesian_test_finds_practical_equivalence_when_every_dataset_differs_by_a_hair():
    data = {d: 0.5 + 0.05 * i for i, d in enumerate((*NODE, *GRAPH, "kdd_icdm"))}
    rows = [row(m, d, x + (0.0005 * (-1) ** i if m == "sgcl" else 0.0), s, **(
        {"metric": "hits@20"} if d == "kdd_icdm" else {})) for i, (d, x) in enumerate(data.items())
            for m in ("gcc", "sgcl") for s in range(3)]
    test = bayes_signed_rank(Rows(rows), "e2e")
    assert len(test.datasets) == 7 and test.reading == "practically equivalent"
    assert test.p_sgcl + test.p_rope + test.p_gcc == pytest.approx(1.0)


def test_a_budget_change_is_tested_per_seed_not_read_from_two_verdicts():
    # at both budgets sgcl − gcc has the same mean (+1 pp) on 3 seeds, noisy at 6000 steps and tight at 24000:
    # the per-budget verdicts differ (a threshold crossing) but the seed-paired change is 0
    spec = TableSpec(6000, "snap", {"e2e": 256}, default_c=0.4, sgcl_c=0.4)
    base = [0.03, -0.01, 0.01]
    table = [row(m, "collab", 0.8 + (b if m == "sgcl" else 0.0), s, steps=6000)
             for s, b in enumerate(base) for m in ("gcc", "sgcl")]
    long = [row(m, "collab", 0.8 + (b if m == "sgcl" else 0.0), s, steps=24000)
            for s, b in enumerate(base) for m in ("gcc", "sgcl")]
    [change] = budget_changes(table, long, spec)
    assert change.seeds == (0, 1, 2) and change.change.mean == pytest.approx(0.0) and not change.shown
    assert "excludes 0 on no column (of 1 column)" in budget_sentence([change])
    moved = [row(m, "collab", 0.8 + (b if m == "sgcl[c=0.4]" else -0.02 - 0.001 * s), s, steps=24000)
             for s, b in enumerate(base) for m in ("gcc", "sgcl[c=0.4]")]  # gcc alone drops 2.1 pp
    [change] = budget_changes(table, moved, spec)
    assert change.shown and "moved: GCC -2.10 pp" in budget_sentence([change])


def registered_rows(no_align_seeds, rdt_gap=0.0, airport_gap=0.0):
    """gcc, sgcl and sgcl-no-align on the six classification columns and one similarity column: sgcl 1.5 pp behind
    gcc on the deficit columns; no-align at sgcl + the gap there, seed noise ±0.1 pp."""
    out = []
    for d in (*NODE, *GRAPH):
        for s in range(8):
            noise = 0.001 * (-1) ** s
            deficit = -0.015 if d in check.DEFICIT else 0.0
            gap = {"rdt-b": rdt_gap, "usa_airport": airport_gap}.get(d, 0.0)
            out += [row("gcc", d, 0.7, s), row("sgcl", d, 0.7 + deficit + noise, s)]
            if s in no_align_seeds:
                out.append(row(check.NO_ALIGN, d, 0.7 + deficit + gap + 2 * noise, s))
    return Rows(out)


def test_the_alignment_check_states_no_decision_before_every_registered_seed_is_in():
    rows = registered_rows(range(5), rdt_gap=0.015, airport_gap=0.015)
    assert check.seeds_present(rows) == (0, 1, 2, 3, 4)
    assert "has 5 of its 8 registered seeds so far; no decision" in check.outcome_sentence(rows)


@pytest.mark.parametrize("gap, verdict", [(0.015, check.EXPLAINS), (0.0, check.DOES_NOT)])
def test_the_alignment_check_applies_the_registered_rule(gap, verdict):
    rows = registered_rows(range(8), rdt_gap=gap, airport_gap=gap)
    tests = check.contrasts(rows)
    assert {(x.family, x.name) for x in tests} == {("P", "A"), ("P", "B")}
    assert len(tests) == 12  # 6 columns × (A, B): one Holm family
    assert check.decide(tests)[0] == verdict
    assert f"**{verdict}**" in check.outcome_sentence(rows)


def test_the_alignment_check_is_partly_resolved_when_the_deficit_columns_disagree():
    verdict, per = check.decide(check.contrasts(registered_rows(range(8), rdt_gap=0.015, airport_gap=0.0)))
    assert verdict == check.PARTLY and per == {"usa_airport": "deficit stays", "rdt-b": "alignment explains it"}


def test_the_sensitivity_reading_uses_the_new_seeds_only():
    tests = check.contrasts(registered_rows(range(8), rdt_gap=0.015), check.NEW_SEEDS)
    assert {x.differences.seeds for x in tests} == {check.NEW_SEEDS}
