"""The report's studies (:mod:`gcc_sgcl.experiments.studies`) on hand-made rows whose right answers are known: their
numbers, and their sections rendered through the whole report."""
import dataclasses
import gzip
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from gcc_sgcl.experiments.report import build_report
from gcc_sgcl.experiments.rows import ResultRow, RowStore
from gcc_sgcl.experiments.stats import summarize
from gcc_sgcl.experiments.studies.budget import (
    PUBLISHED_GCC_E2E,
    Curve,
    budget_study,
    budget_text,
    change_per_doubling,
    changes_at,
    choose_budget,
    fidelity,
    fidelity_passes,
    learning_curves,
)
from gcc_sgcl.experiments.studies.c_grid import choose_c, missing_grid_points
from gcc_sgcl.experiments.studies.cells import (
    CLASSIFICATION,
    LOOSE,
    Column,
    Rows,
    SeedDifferences,
    cell,
    cv_settings,
    paired,
    pooled,
    seed_differences,
    significance,
    statistics,
)
from gcc_sgcl.experiments.studies.cells import floor_verdicts
from gcc_sgcl.experiments.studies.classification import evidence, evidence_lines, headline, join_verdicts
from gcc_sgcl.experiments.studies.markdown import floor_lines
from gcc_sgcl.experiments.studies.finetuned import PUBLISHED_FINETUNED_E2E, finetune_intro, published_finetuned
from gcc_sgcl.experiments.studies.leave_one_out import (
    leave_one_out,
    leave_one_out_reading,
    leave_one_out_section,
    plot_leave_one_out,
)
from gcc_sgcl.experiments.studies.markdown import seed_differences_section
from gcc_sgcl.experiments.studies.pairs import HEATMAP_STAGES, heatmap_gains
from gcc_sgcl.experiments.studies.progress import Coverage, progress, progress_section
from gcc_sgcl.experiments.studies.row_sources import protocols, provenance
from gcc_sgcl.experiments.studies.selection import chosen_sgcl, table_methods, tables_of
from gcc_sgcl.experiments.studies.summary import summary_lines
from gcc_sgcl.experiments.studies.inference_views import (
    choose_views,
    rescored,
    rescored_lines,
    views_choice_lines,
    views_headline,
    views_section,
    views_study,
)
from gcc_sgcl.experiments.tables import FINETUNED, RANDOM_INIT, SGCL, TableSpec, table_budget, table_spec
from gcc_sgcl.presets import current_name

CORPUS = "ca-grqc"
ROWS_FILE = Path(__file__).resolve().parents[1] / "docs" / "results" / "rows.jsonl.gz"


def row(method, dataset, mean, seed=0, mode="e2e", task="graph_classification", metric="accuracy", scores=None,
        steps=100, batch_size=128, eval_seconds=1.0, pretrain_seconds=None, protocol="p", **extra) -> ResultRow:
    """A result row with the fields the analysis reads (fine-tuned rows with one view copy unless given)."""
    extra.setdefault("view_copies", 1 if task.endswith("_finetuned") else None)
    return ResultRow(method=method, mode=mode, seed=seed, dataset=dataset, task=task, metric=metric, mean=mean,
                     std=0.01, std_kind="std over repeats", n=100, protocol=protocol,
                     scores=list(scores if scores is not None else [mean]), steps=steps, batch_size=batch_size,
                     corpus=CORPUS, repeats=len(scores) if scores is not None else 1, folds=10, eval_seed=0,
                     svc="gcc", commit="abc", eval_seconds=eval_seconds, pretrain_seconds=pretrain_seconds,
                     **extra)


def repeats(centre: float, n: int = 30, shift: float = 0.0) -> list[float]:
    """``n`` distinct repetition scores around ``centre`` (+ ``shift``)."""
    return list(centre + shift + 0.001 * np.arange(n))


# ------------------------------------------------------------------------------------------- rows and store


def test_every_committed_row_loads_and_names_every_field():
    if not ROWS_FILE.is_file():
        pytest.skip("docs/results/rows.jsonl.gz not present")
    raw = [json.loads(line) for line in gzip.decompress(ROWS_FILE.read_bytes()).decode().splitlines() if line.strip()]
    rows = RowStore(ROWS_FILE).load()
    assert len(rows) == len(raw)
    for r, d in zip(rows, raw):
        name = current_name(d["method"], d["config"].get("augment"))  # plain `sgcl` of c = 0.3 reads sgcl[c=0.3]
        assert (r.method, r.dataset, r.metric, r.mean) == (name, d["dataset"], d["metric"], d["mean"])
        assert set(d) == {f.name for f in dataclasses.fields(ResultRow)}


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.jsonl.gz"])
def test_row_store_round_trips_rows_and_replace_drops_only_the_matching_ones(tmp_path, name):
    store = RowStore(tmp_path / name)
    a, b = row("gcc", "x", 0.5), row("sgcl", "x", 0.6)
    store.append([a, b])
    assert store.load() == [a, b]
    c = row("grace", "x", 0.7)
    store.replace(lambda r: r.method == "gcc", [c])
    assert store.load() == [b, c]
    with pytest.raises(ValueError, match="unknown result-row fields"):
        ResultRow.from_dict({**a.to_dict(), "bogus": 1})


def test_an_evaluation_is_stored_once_and_a_store_holding_one_twice_names_both_lines(tmp_path, capsys):
    store = RowStore(tmp_path / "rows.jsonl")
    a = row("gcc", "x", 0.5)
    store.append([a, row("gcc", "x", 0.5, seed=1), dataclasses.replace(a, metric="f1"), row("gcc", "x", 0.5, steps=3)])
    assert len(store.load()) == 4  # another seed, metric or budget is another row
    store.append([dataclasses.replace(a, mean=0.7), row("gcc", "x", 0.6, seed=2)])  # a second sweep's late copy
    assert [(r.seed, r.mean) for r in store.load()][::4] == [(0, 0.5), (2, 0.6)]
    assert "1 of 2 rows were stored already by another run; not added again" in capsys.readouterr().err
    with store.path.open("a") as f:  # written by hand, past the store
        f.write(json.dumps(dataclasses.replace(a, mean=0.7).to_dict()) + "\n")
    with pytest.raises(ValueError, match=r"rows.jsonl, line 6: repeats the evaluation of line 1 \(gcc, e2e, seed 0, "
                                         r"x, accuracy, 100 steps\)"):
        store.load()


def test_a_compressed_store_stays_one_gzip_member_and_a_damaged_one_names_the_file(tmp_path):
    store = RowStore(tmp_path / "rows.jsonl.gz")
    rows = [row("gcc", "x", 0.5 + i / 100, seed=i) for i in range(20)]
    for r in rows:
        store.append([r])
    assert store.load() == rows
    data = store.path.read_bytes()
    member = zlib.decompressobj(wbits=31)
    assert member.decompress(data) == store.text().encode() and member.eof and member.unused_data == b""
    assert len(data) < len(store.text()) / 5  # the repeated fields compress
    store.path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="rows.jsonl.gz: damaged gzip data"):
        store.load()


# ------------------------------------------------------------------------------------------ pairing, markers


def test_pooled_samples_pair_repetitions_by_seed_and_refuse_unequal_repetition_counts():
    rows = Rows([row("gcc", "x", 0.5, seed=0, scores=[0.4, 0.6]), row("gcc", "x", 0.7, seed=1, scores=[0.7, 0.7]),
                    row("sgcl", "x", 0.55, seed=0, scores=[0.5, 0.6]), row("sgcl", "x", 0.9, seed=2, scores=[0.9, 0.9])])
    x, y = pooled(rows, "sgcl", "e2e", "x", "graph_classification", "accuracy")
    assert (x, y) == ([0.5, 0.6], [0.4, 0.6])
    unequal = Rows([row("gcc", "x", 0.5, seed=3, scores=[0.4, 0.6]), row("sgcl", "x", 0.5, seed=3, scores=[0.5])])
    with pytest.raises(ValueError, match=r"sgcl and gcc \(e2e, seed 3, x accuracy\) hold 1 and 2 repetitions"):
        pooled(unequal, "sgcl", "e2e", "x", "graph_classification", "accuracy")
    assert paired({0: 1.0, 1: 2.0}, {1: 3.0, 2: 4.0}) == ([2.0], [3.0])


@pytest.mark.parametrize("shift, expected", [(0.05, "▲"), (-0.05, "▼"), (0.0, "")])
def test_significance_marker_follows_the_sign_when_every_test_passes(shift, expected):
    # 3 seeds × 30 repetitions, every paired difference = shift (plus a tiny varying part so tests are defined)
    rows = []
    for seed in range(3):
        base = repeats(0.6 + 0.01 * seed)
        rows.append(row("gcc", "x", float(np.mean(base)), seed=seed, scores=base))
        mine = [v + shift + 1e-4 * ((i * 7) % 5) for i, v in enumerate(base)]
        rows.append(row("sgcl", "x", float(np.mean(mine)), seed=seed, scores=mine))
    got = significance(Rows(rows), "sgcl", "e2e", "x", "graph_classification", "accuracy")
    assert got == expected if shift else got in ("", LOOSE)


def test_a_joined_encoder_is_tested_against_gcc_joined_to_the_same_vector():
    # sgcl ⊕ structural sits level with gcc ⊕ structural but well above gcc alone: no marker, since the gain over
    # gcc comes from the joining, which both joined rows share; gcc ⊕ structural itself is tested against gcc
    rows = []
    for seed in range(3):
        base = repeats(0.6 + 0.01 * seed)
        joined = [v + 0.05 + 1e-4 * ((i * 7) % 5) for i, v in enumerate(base)]
        rows += [row("gcc", "x", float(np.mean(base)), seed=seed, scores=base),
                 row("gcc ⊕ structural", "x", float(np.mean(joined)), seed=seed, scores=joined),
                 row("sgcl ⊕ structural", "x", float(np.mean(joined)), seed=seed, scores=list(joined))]
    rows = Rows(rows)
    sig = [significance(rows, m, "e2e", "x", "graph_classification", "accuracy")
           for m in ("gcc ⊕ structural", "sgcl ⊕ structural")]
    assert sig == ["▲", ""]
    stat, = statistics(rows, "sgcl ⊕ structural", ["e2e"], ["graph_classification"])
    assert stat.baseline == pytest.approx(stat.mean)
    # the interval of the seed means is Student's t, as in the classification table's cells
    table_cell = cell(rows, "sgcl ⊕ structural", "e2e", "x", "graph_classification", "accuracy", True)
    assert (stat.ci_low, stat.ci_high) == pytest.approx((table_cell.ci_low, table_cell.ci_high))


def test_heatmap_cells_gain_over_gcc_on_their_own_seeds_and_carry_the_paired_marker():
    rows = []
    for seed in range(3):
        base = repeats(0.6 + 0.01 * seed, n=10)
        rows.append(row("gcc", "x", float(np.mean(base)), seed=seed, scores=base))
        if seed < 2:  # two seeds × 10 repetitions, all higher: † (the exact Wilcoxon's p >= 2/2^20 > 1e-6)
            up = [v + 0.03 + 1e-4 * ((i * 7) % 5) for i, v in enumerate(base)]
            rows.append(row("sgcl-crop+mask", "x", float(np.mean(up)), seed=seed, scores=up))
    rows.append(row("sgcl-mask", "x", 0.5, seed=4, scores=repeats(0.5, n=10)))  # no shared seed: no gain, no test
    rows.append(row("sgcl-align", "x", 0.9, seed=2, scores=repeats(0.9, n=10)))  # one seed: no marker, as the table
    for seed in (0, 8):  # two seeds, one shared with gcc: counted and tested as one seed
        rows.append(row("sgcl-reorder", "x", 0.7, seed=seed, scores=repeats(0.7, n=10)))
    heat = heatmap_gains(Rows(rows), "x", "e2e")
    crop, mask, align = HEATMAP_STAGES.index("crop"), HEATMAP_STAGES.index("mask"), HEATMAP_STAGES.index("align")
    reorder = HEATMAP_STAGES.index("reorder")
    assert (heat.seeds[reorder, reorder], heat.marks[reorder, reorder]) == (1, "")
    gcc = {r.seed: r.mean for r in rows if r.method == "gcc"}
    pair_mean = np.mean([r.mean for r in rows if r.method == "sgcl-crop+mask"])
    shared = np.mean([gcc[0], gcc[1]])  # not gcc's mean over all three seeds, which is higher
    for i, j in ((crop, mask), (mask, crop)):
        assert heat.gain[i, j] == pytest.approx(100 * (pair_mean - shared) / shared)
        assert (heat.seeds[i, j], heat.marks[i, j]) == (2, LOOSE)
    assert np.isnan(heat.gain[mask, mask]) and (heat.seeds[mask, mask], heat.marks[mask, mask]) == (0, "")
    assert heat.gain[align, align] == pytest.approx(100 * (0.9 - gcc[2]) / gcc[2])
    assert (heat.seeds[align, align], heat.marks[align, align]) == (1, "")
    assert np.isnan(heat.gain[crop, crop]) and heat.seeds[crop, crop] == 0
    assert heatmap_gains(Rows(rows), "y", "e2e") is None


def test_single_seed_cell_reports_its_rows_own_spread_and_no_marker():
    rows = Rows([row("gcc", "x", 0.5), row("sgcl", "x", 0.6)])
    c = cell(rows, "sgcl", "e2e", "x", "graph_classification", "accuracy", versus_gcc=True)
    assert (c.seeds, c.mean, c.std, c.one_seed, c.std_kind, c.marker) == (1, 0.6, 0.01, True, "std over repeats", "")
    assert cell(rows, "grace", "e2e", "x", "graph_classification", "accuracy", True) is None


def test_a_seed_whose_evaluation_failed_is_missing_from_cells_and_pairs_but_counts_as_run():
    import dataclasses

    failed = dataclasses.replace(row("sgcl", "x", float("nan"), seed=0), std=float("nan"), std_kind="failed")
    rows = Rows([row("gcc", "x", 0.5), row("gcc", "x", 0.6, seed=1), failed, row("sgcl", "x", 0.7, seed=1)])
    c = cell(rows, "sgcl", "e2e", "x", "graph_classification", "accuracy", versus_gcc=True)
    assert (c.seeds, c.mean, c.std, c.std_kind) == (1, 0.7, 0.01, "std over repeats")  # seed 1's own row
    (d,) = seed_differences(rows, "sgcl", ["e2e"], CLASSIFICATION)
    assert d.seeds == (1,) and d.differences == pytest.approx((0.1,))
    (sgcl,) = [p for p in progress(rows) if p.method == "sgcl"]
    assert (sgcl.frozen.seeds, sgcl.frozen.done) == ([0, 1], 1)  # both rows exist: the column is complete


# ---------------------------------------------------------------------------------- verdicts and headline


def test_floor_verdict_compares_the_best_listed_method_with_the_best_training_free_row():
    rows = Rows([row("gcc", "x", 0.70), row("sgcl", "x", 0.72), row("grace", "x", 0.99),
                    row("structural", "x", 0.71, mode="none"), row("spectral", "x", 0.60, mode="none")])
    (v,) = floor_verdicts(rows, ["e2e"], CLASSIFICATION, ["gcc", "sgcl"])
    assert (v.best, v.score, v.floor, v.floor_score) == ("sgcl", 0.72, "structural", 0.71)
    assert (v.comparison, v.verdict) == (None, "is above")  # one score each: untested
    for encoder, floor, verdict in [(0.72, 0.70, "beats"), (0.70, 0.72, "does NOT beat"), (0.71, 0.7095, "is level with")]:
        rows = Rows([row("gcc", "x", encoder, scores=repeats(encoder)), row("gcc", "x", encoder, seed=1,
                        scores=repeats(encoder)), row("structural", "x", floor, mode="none", scores=repeats(floor))])
        (v,) = floor_verdicts(rows, ["e2e"], CLASSIFICATION, ["gcc"])
        assert v.verdict == verdict and v.comparison.n == 60 and v.comparison.n_baseline == 30


def test_floor_verdict_lets_only_methods_with_enough_seeds_stand_for_pre_training():
    # a lucky one-seed graphcl row does not beat the floor on pre-training's behalf while gcc has 3 seeds
    rows = Rows([row("gcc", "x", 0.70, seed=s) for s in range(3)]
                   + [row("graphcl", "x", 0.99), row("structural", "x", 0.71, mode="none")])
    (v,) = floor_verdicts(rows, ["e2e"], CLASSIFICATION, ["gcc", "graphcl"])
    assert (v.best, v.seeds, v.verdict) == ("gcc", 3, "is not above")
    assert "best pre-trained `gcc` (3 seeds) 70.00 is not above the best training-free row" in floor_lines([v])
    (v,) = floor_verdicts(rows, ["e2e"], CLASSIFICATION, ["gcc", "graphcl"], min_seeds=1)
    assert v.best == "graphcl"


def test_floor_verdict_against_random_init_compares_fine_tuned_rows_of_the_same_mode():
    tuned = dict(task="graph_classification_finetuned")
    rows = Rows([row("gcc", "x", 0.70, seed=s, scores=repeats(0.70, n=10), **tuned) for s in range(3)]
                   + [row(RANDOM_INIT, "x", 0.75, seed=s, scores=repeats(0.75, n=10), **tuned) for s in range(3)]
                   + [row("structural", "x", 0.60, mode="none", task="graph_classification")])
    (v,) = floor_verdicts(rows, ["e2e"], FINETUNED, ["gcc", RANDOM_INIT], floor=RANDOM_INIT)
    assert (v.best, v.floor, v.floor_score, v.verdict) == ("gcc", RANDOM_INIT, 0.75, "does NOT beat")
    assert v.comparison.n == v.comparison.n_baseline == 30  # every fold of every seed on both sides
    line = floor_lines([v], "the untrained encoder")
    assert "70.00 does NOT beat the untrained encoder `random init` 75.00" in line
    assert floor_verdicts(rows, ["e2e"], FINETUNED, ["gcc"]) == []  # no training-free fine-tuned row


def test_headline_counts_columns_where_sgcl_is_ahead_of_gcc():
    rows = []
    for dataset, shift in (("a", 0.02), ("b", 0.01), ("c", -0.03)):
        for seed in (0, 1):
            base = repeats(0.5, n=3)
            rows += [row("gcc", dataset, float(np.mean(base)), seed=seed, scores=base),
                     row("sgcl", dataset, float(np.mean(base)) + shift, seed=seed,
                         scores=[v + shift + 1e-4 * i for i, v in enumerate(base)])]
    rows.append(row("sgcl", "d", 0.9))  # no gcc row: not compared
    h = headline(Rows(rows), "e2e", CLASSIFICATION, {"a": "A"})
    assert (h.ahead, h.behind, h.compared) == (["A accuracy", "b accuracy"], ["c accuracy"], 3)


def test_seed_differences_pair_seeds_and_leave_out_those_missing_on_one_side(tmp_path):
    rows = Rows([row("gcc", "x", 0.60, seed=0), row("sgcl", "x", 0.62, seed=0),
                    row("gcc", "x", 0.70, seed=1), row("sgcl", "x", 0.65, seed=1),
                    row("sgcl", "x", 0.99, seed=2),  # no gcc encoder of seed 2
                    row("gcc", "y", 0.5, seed=0), row("sgcl", "y", 0.5, seed=3)])  # no shared seed on y
    (d,) = seed_differences(rows, "sgcl", ["e2e", "moco"], CLASSIFICATION)
    assert (d.column.dataset, d.column.mode, d.seeds) == ("x", "e2e", (0, 1))
    assert d.differences == pytest.approx((0.02, -0.05))
    assert d.summary.mean == pytest.approx(-0.015) and d.summary.ci_low < d.summary.mean < d.summary.ci_high
    (e,) = evidence(rows, "e2e")
    assert (e.difference, e.seeds, e.stages) == (pytest.approx(-0.015), 2, {})
    assert evidence_lines([e]) == ""  # no stage preset ran on x: its SGCL − GCC is in the table below
    (e,) = evidence(Rows([*rows.rows, row("sgcl-crop", "x", 0.66, seed=1), row("sgcl-mask", "x", 0.63, seed=0),
                                row("sgcl-mask", "x", 0.74, seed=1)]), "e2e")
    assert evidence_lines([e]) == ("- x: SGCL − GCC = -1.50 pp, 90 % interval contains 0 (2 paired seeds); "
                                      "each stage alone − GCC (on seed 1; SGCL − GCC -5.00: crop -4.00); "
                                      "(on seeds 0 1; SGCL − GCC -1.50: mask +3.50)")  # like for like, seed by seed
    text = seed_differences_section([d], "sgcl", tmp_path / "d.png", tmp_path / "d.csv")
    t = -0.015 / (np.std([0.02, -0.05], ddof=1) / np.sqrt(2))
    assert d.p == pytest.approx(1 - 2 / np.pi * np.arctan(abs(t)))  # Student's t with 1 degree of freedom (Cauchy)
    assert "| x | 2 | +2.00 -5.00 | -1.50 | [" in text and f"| {d.p:.3g} |" in text
    assert (tmp_path / "d.png").stat().st_size > 1000
    lines = (tmp_path / "d.csv").read_text().splitlines()
    assert lines[1:] == ["x,accuracy,e2e,0,0.02000", "x,accuracy,e2e,1,-0.05000"]


# ----------------------------------------------------------------------------------------------- provenance


def test_provenance_counts_an_evaluation_once_though_each_metric_row_repeats_its_time():
    rows = [
        row("gcc", "kdd", 0.1, task="similarity_search", metric="hits@20", eval_seconds=60.0, pretrain_seconds=120.0),
        row("gcc", "kdd", 0.2, task="similarity_search", metric="hits@40", eval_seconds=60.0),
        row("gcc", "x", 0.5, eval_seconds=30.0),
        row("structural", "x", 0.5, mode="none", eval_seconds=6.0, steps=100),
        row("gcc ⊕ structural", "x", 0.6, eval_seconds=0.0), row("random init", "x", 0.4, steps=0, eval_seconds=0.0),
        row("gcc", "x", 0.55, eval_seconds=30.0, steps=200),
    ]
    p = provenance(rows)
    assert (p.eval_seconds, p.pretrain_seconds, p.encoders, p.rows) == (126.0, 120.0, 2, 7)  # joined, untrained: not
    assert p.budgets == [(0, 128, CORPUS, 1, 10, "gcc"), (100, 128, CORPUS, 1, 10, "gcc"),
                         (200, 128, CORPUS, 1, 10, "gcc")]


def test_an_index_of_two_budgets_rows_refuses_the_second_row_of_a_seed():
    with pytest.raises(ValueError, match=r"two rows for gcc e2e x .* seed 0: \(100, 128.*\(200, 128"):
        Rows([row("gcc", "x", 0.5), row("gcc", "x", 0.55, steps=200)])


def test_cv_settings_and_protocols_are_read_from_the_rows():
    rows = Rows([row("gcc", "x", 0.5, scores=[0.5] * 3), row("sgcl", "x", 0.5, scores=[0.5] * 3),
                    row("gcc", "y", 0.5, scores=[0.5] * 10)])
    assert cv_settings(rows, CLASSIFICATION) == [(3, 10), (10, 10)]
    assert protocols(rows.rows, CLASSIFICATION) == {"graph_classification": ["p"]}


def test_columns_follow_the_papers_dataset_order_whatever_order_the_rows_came_in():
    rows = Rows([row("gcc", "my-graph", 0.5), row("gcc", "imdb-multi", 0.5), row("gcc", "usa_airport", 0.5,
                                                                                   task="node_classification"),
                    row("gcc", "imdb-binary", 0.5), row("gcc", "h-index", 0.5, task="node_classification")])
    assert rows.datasets(CLASSIFICATION) == ["usa_airport", "h-index", "imdb-binary", "imdb-multi", "my-graph"]
    assert [d for d, _, _ in rows.columns(CLASSIFICATION)] == rows.datasets(CLASSIFICATION)


def test_progress_counts_frozen_and_fine_tuned_seeds_apart_and_the_columns_every_seed_covers():
    tuned = "graph_classification_finetuned"
    rows = Rows([row("sgcl", "x", 0.5), row("sgcl", "x", 0.5, seed=1), row("sgcl", "y", 0.5),  # y: seed 0 only
                    row(RANDOM_INIT, "x", 0.3), row("gcc", "x", 0.5), row("gcc", "x", 0.5, seed=1),
                    row("gcc", "y", 0.5), row("gcc", "y", 0.5, seed=1), row("gcc", "x", 0.6, task=tuned),
                    row("gcc ⊕ structural", "x", 0.5), row("structural", "x", 0.4, mode="none")])
    got = {p.method: (p.frozen, p.finetuned) for p in progress(rows)}
    assert list(got) == ["gcc", "sgcl", RANDOM_INIT]  # joined and training-free rows are not encoders
    assert got["gcc"] == (Coverage([0, 1], 2, 2), Coverage([0], 1, 1))  # fine-tuned: 1 seed, covered
    assert got["sgcl"] == (Coverage([0, 1], 1, 2), Coverage([], 0, 1))
    assert got[RANDOM_INIT][0] == Coverage([0], 1, 2)


def test_progress_table_marks_a_kind_without_rows_and_writes_its_csv(tmp_path):
    rows = Rows([row("gcc", "x", 0.5), row("gcc", "x", 0.5, seed=1), row("sgcl", "x", 0.5)])
    text = progress_section(progress(rows), tmp_path / "progress.csv")
    assert "| gcc | e2e | 2 (0 1) | 1 of 1 | – | – |" in text
    assert "| sgcl | e2e | 1 (0) | 1 of 1 | – | – |" in text
    lines = (tmp_path / "progress.csv").read_text().splitlines()
    assert lines[1] == "gcc,e2e,0 1,1,1,,0,0"
    assert progress_section([], tmp_path / "none.csv").startswith("_no pre-trained")
    assert (tmp_path / "none.csv").read_text().startswith("method,mode,")


# -------------------------------------------------------------------------------- budgets and random init


def table_of(rows, budget=(100, 128, CORPUS), sgcl_c=None) -> Rows:
    """The table's view (:class:`TableSpec`) of ``rows`` at ``budget``, its ``sgcl`` at ``sgcl_c``."""
    spec = table_spec(rows, budget, 0.3)
    return Rows((spec.at_sgcl_c(sgcl_c) if sgcl_c else spec).select(rows))


def test_tables_keep_one_budget_and_show_untrained_encoders_as_random_init():
    rows = [row("gcc", "x", 0.5, steps=100), row("gcc", "x", 0.6, steps=100, seed=1), row("gcc", "x", 0.3, steps=0),
            row("sgcl", "x", 0.31, steps=0), row("structural", "x", 0.4, mode="none")]
    assert table_budget(rows) == (100, 128, CORPUS)
    with pytest.raises(ValueError, match="2 pre-training budgets.*one per table"):
        table_budget(rows + [row("gcc", "x", 0.7, steps=300)])  # no vote between budgets
    kept = table_of(rows + [row("gcc", "x", 0.7, steps=300)])  # a declared budget: the 300-step row is the curve's
    assert kept.seeds("gcc", "e2e", "x", "graph_classification", "accuracy") == {0: 0.5, 1: 0.6}
    assert kept.seeds(RANDOM_INIT, "e2e", "x", "graph_classification", "accuracy") == {0: 0.3}
    assert kept.methods(classical=True) == ["structural"]


def test_random_init_is_the_untrained_encoders_at_each_modes_table_batch():
    big = [row("gcc", "x", 0.3 + s / 10, seed=s, steps=0, batch_size=256) for s in (0, 1)]
    small = [row("gcc", "x", 0.9, seed=0, steps=0, batch_size=128)]
    moco = [row("gcc", "x", 0.8, seed=0, mode="moco", steps=0, batch_size=32),
            row("gcc", "x", 0.6, seed=0, mode="moco", steps=100, batch_size=32)]
    kept = table_of([row("gcc", "x", 0.5)] + big + small + moco)
    assert kept.seeds(RANDOM_INIT, "e2e", "x", "graph_classification", "accuracy") == {0: 0.9}
    assert kept.seeds(RANDOM_INIT, "moco", "x", "graph_classification", "accuracy") == {0: 0.8}


def test_tables_take_moco_at_its_own_batch_and_refuse_a_row_under_another_protocol():
    rows = [row("gcc", "x", 0.5, steps=3000, batch_size=256), row("gcc", "x", 0.6, mode="moco", steps=3000,
                                                                 batch_size=32),
            row("gcc", "x", 0.9, mode="moco", steps=100, batch_size=32),
            row("spectral", "x", 0.3, mode="none"), row("gcc", "x", 0.2, steps=0, batch_size=256)]
    spec = table_spec(rows, (3000, 256, CORPUS))
    assert spec.batches == {"e2e": 256, "moco": 32}
    kept = Rows(spec.select(rows))
    assert kept.seeds("gcc", "moco", "x", "graph_classification", "accuracy") == {0: 0.6}
    assert kept.methods(classical=True) == ["spectral"]
    assert kept.seeds(RANDOM_INIT, "e2e", "x", "graph_classification", "accuracy") == {0: 0.2}
    for other in (row("structural", "x", 0.4, mode="none", scores=[0.4] * 3),  # 3 repetitions, not 1
                  row("gcc", "x", 0.1, steps=0, batch_size=256, scores=[0.1] * 3)):
        with pytest.raises(ValueError, match="evaluated under .* one protocol per table"):
            spec.select(rows + [other])
    with pytest.raises(ValueError, match="2 e2e batch sizes at 3000 steps"):
        table_spec(rows + [row("gcc", "x", 0.5, steps=3000, batch_size=64)], (3000, 128, CORPUS))


def test_tables_keep_fine_tuned_rows_under_their_own_protocol():
    """Fine-tuning is scored once per fold (1 repetition) while frozen encoders get 10: each kind has its own
    protocol, and fine-tuned rows of another recipe in the same table are an error, not outvoted."""
    frozen = [row(m, "x", 0.5, seed=s, scores=[0.5] * 10) for m in ("gcc", "sgcl") for s in (0, 1)]
    tuned = [row(m, "x", 0.6, task="graph_classification_finetuned", epochs=10, max_folds=3) for m in ("gcc", "sgcl")]
    kept = table_of(frozen + tuned)
    assert kept.seeds("gcc", "e2e", "x", "graph_classification", "accuracy") == {0: 0.5, 1: 0.5}
    assert kept.seeds("gcc", "e2e", "x", "graph_classification_finetuned", "accuracy") == {0: 0.6}
    other = row("gcc", "x", 0.9, seed=1, task="graph_classification_finetuned", epochs=2, max_folds=3)
    with pytest.raises(ValueError, match="2 fine-tuned evaluation protocols"):
        table_of(frozen + tuned + [other])


def test_the_table_spec_names_the_sgcl_row_and_is_written_beside_the_rows(tmp_path):
    rows = [row("gcc", "x", 0.5), row("sgcl", "x", 0.6, config={"augment": {"c": 0.3}}), row("sgcl[c=0.4]", "x", 0.7)]
    spec = table_spec(rows, (100, 128, CORPUS), 0.3)
    assert str(spec.sgcl) == "sgcl[c=0.3]" and str(spec.at_sgcl_c(0.4).sgcl) == "sgcl[c=0.4]"
    assert [r.method for r in spec.at_sgcl_c(0.4).select(rows)] == ["gcc", "sgcl[c=0.3]", "sgcl"]
    assert [r.method for r in rows] == ["gcc", "sgcl", "sgcl[c=0.4]"]  # the stored rows keep their names
    written = json.loads(spec.at_sgcl_c(0.4).write(tmp_path / "tables.json").read_text())
    assert (written["steps"], written["batches"], written["sgcl"]) == (100, {"e2e": 128}, "sgcl[c=0.4]")


def _grid_rows(scores: dict[str, tuple[float, float]]) -> list[ResultRow]:
    return [row(m, d, v, steps=3000) for m, pair in scores.items() for d, v in zip(("x", "y"), pair)]


def test_the_heatmaps_filter_cells_are_the_rows_at_the_chosen_c():
    """The pairs stage runs the similar / diverse presets at the tables' c: after the relabelling the heat-map's
    filter cells hold those rows, not the default-c ones, and the other cells are untouched."""
    rows = [row("gcc", "x", 0.6), row("sgcl-similar", "x", 0.3), row("sgcl-similar[c=0.4]", "x", 0.9),
            row("sgcl-crop+diverse[c=0.4]", "x", 0.66), row("sgcl-crop", "x", 0.54)]
    heat = heatmap_gains(table_of(rows, sgcl_c=0.4), "x", "e2e")
    crop, similar, diverse = (HEATMAP_STAGES.index(s) for s in ("crop", "similar", "diverse"))
    assert heat.gain[similar, similar] == pytest.approx(50.0)  # (0.9 - 0.6) / 0.6, the c = 0.4 row
    assert heat.gain[crop, diverse] == heat.gain[diverse, crop] == pytest.approx(10.0)
    assert heat.gain[crop, crop] == pytest.approx(-10.0)
    unlabelled = heatmap_gains(Rows(rows), "x", "e2e")  # before the grid is complete: the default c
    assert unlabelled.gain[similar, similar] == pytest.approx(-50.0) and np.isnan(unlabelled.gain[crop, diverse])


def test_c_is_chosen_on_the_shared_columns_and_the_chosen_variant_becomes_the_sgcl_row():
    rows = _grid_rows({"sgcl": (0.70, 0.60), "sgcl[c=0.2]": (0.72, 0.61), "sgcl[c=0.45]": (0.69, 0.80)})
    rows += [row("sgcl[c=0.2]", "z", 0.99, steps=3000),  # z: not every grid point has it, not used
             row("sgcl[c=0.2]", "x", 0.50, seed=1, steps=3000), row("sgcl", "x", 0.55, seed=1, steps=3000),
             row("sgcl[c=0.2] ⊕ structural", "x", 0.9, steps=3000), row("sgcl ⊕ structural", "x", 0.8, steps=3000)]
    choice = choose_c(Rows(rows), default_c=0.3)
    assert choice.scores == pytest.approx({0.2: 0.665, 0.3: 0.65, 0.45: 0.745}) and choice.best_c == 0.45
    assert choice.columns == ["x accuracy", "y accuracy"]
    relabelled = Rows(TableSpec(3000, CORPUS, {"e2e": 128}, {}, 0.3, 0.2).select(rows))
    assert relabelled.seeds("sgcl", "e2e", "x", "graph_classification", "accuracy") == {0: 0.72, 1: 0.50}
    assert relabelled.seeds("sgcl[c=0.3]", "e2e", "x", "graph_classification", "accuracy") == {0: 0.70, 1: 0.55}
    assert relabelled.seeds("sgcl ⊕ structural", "e2e", "x", "graph_classification", "accuracy") == {0: 0.9}
    assert relabelled.seeds("sgcl[c=0.3] ⊕ structural", "e2e", "x", "graph_classification", "accuracy") == {0: 0.8}
    same = TableSpec(3000, CORPUS, {"e2e": 128}, {}, 0.3, 0.3).select(rows)
    assert [r.method for r in same] == [r.method for r in rows]
    variants = [row(m, "x", 0.5) for m in ("sgcl[c=0.2,crop=random]", "sgcl[k=64]", "sgcl[permute=random]", "gcc",
                                            "sgcl-similar", "sgcl-crop+diverse[c=0.2]", "sgcl-crop", "structural")]
    assert [TableSpec(100, CORPUS, default_c=0.3, sgcl_c=0.2).label(r.method) for r in variants] == [
        "sgcl[crop=random]", "sgcl[c=0.3,k=64]", "sgcl[c=0.3,permute=random]", "gcc",
        "sgcl-similar[c=0.3]", "sgcl-crop+diverse", "sgcl-crop", "structural"]  # the filters at the chosen c
    tie = choose_c(Rows(_grid_rows({"sgcl": (0.7, 0.6), "sgcl[c=0.25]": (0.6, 0.7)})), default_c=0.3)
    assert tie.best_c == 0.3
    assert choose_c(Rows(_grid_rows({"sgcl": (0.7, 0.6)})), default_c=0.3) is None


def test_main_tables_leave_out_the_swapped_stage_ablation_at_any_c():
    methods = ["gcc", "sgcl", "sgcl[c=0.3]", "sgcl[crop=random]", "sgcl[c=0.3,permute=random]", "sgcl[k=64]",
               "sgcl-crop", "sgcl ⊕ structural", "grace"]
    rows = Rows([row(m, "x", 0.5) for m in methods])
    assert table_methods(rows, 0.3) == ["gcc", "sgcl", "sgcl[c=0.3]", "sgcl[k=64]", "grace", "sgcl ⊕ structural"]


def test_the_sweep_refuses_to_pick_c_from_an_incomplete_grid(tmp_path):
    store = tmp_path / "rows.jsonl"
    rows = _grid_rows({"gcc": (0.6, 0.6), "sgcl": (0.70, 0.60), "sgcl[c=0.2]": (0.72, 0.61)})
    rows.append(dataclasses.replace(_grid_rows({"sgcl": (0.5, 0.5)})[0], task="runtime", dataset="corpus"))
    RowStore(store).append(rows)
    assert missing_grid_points(Rows(rows), [0.2, 0.45], 0.3) == ["sgcl[c=0.45] on x accuracy",
                                                                        "sgcl[c=0.45] on y accuracy"]
    with pytest.raises(ValueError, match="c grid is incomplete.*2 rows missing.*sgcl\\[c=0.45\\] on x accuracy"):
        chosen_sgcl(store, [0.2, 0.45])
    assert chosen_sgcl(store, [0.2]) == chosen_sgcl(store) == "sgcl[c=0.2]"
    runtime = [r for r in TableSpec(3000, CORPUS, {"e2e": 128}, {}, 0.3, 0.2).select(rows) if r.task == "runtime"]
    assert [r.method for r in runtime] == ["sgcl[c=0.3]"]  # named by the c they timed, as every row


def test_join_verdicts_compare_the_joined_rows_with_each_part_alone():
    rows = Rows([row("gcc", "x", 0.70), row("gcc", "x", 0.74, seed=1), row("gcc ⊕ structural", "x", 0.80),
                    row("structural", "x", 0.75, mode="none"), row("sgcl", "x", 0.9)])
    (v,) = join_verdicts(rows, ["e2e"], CLASSIFICATION, ["gcc", "sgcl"])
    assert (v.method, v.seeds, v.encoder, v.structural, v.joined) == ("gcc", 1, 0.70, 0.75, 0.80)


def _curve_rows(gcc_points: dict[str, list[float]], steps=(0, 100, 300, 1000, 3000)) -> list[ResultRow]:
    rows = []
    for dataset, means in gcc_points.items():
        for s, m in zip(steps, means):
            rows.append(row("gcc", dataset, m, steps=s, batch_size=256))
            rows.append(row("sgcl[c=0.3]", dataset, m + 0.01, steps=s, batch_size=256))  # the curve's sgcl
    return rows


def test_learning_curves_follow_steps_for_each_method_and_column():
    rows = _curve_rows({"imdb-binary": [0.5, 0.6, 0.65, 0.7, 0.7]})
    rows.append(row("gcc", "imdb-binary", 0.1, steps=100, batch_size=128))  # another family: ignored
    rows.append(row("gcc", "imdb-binary", 0.9, steps=100, batch_size=256, seed=1))  # seed not at every step
    curves = learning_curves(rows)
    assert [(c.method, c.steps, c.seeds) for c in curves] == [("gcc", (0, 100, 300, 1000, 3000), (0,)),
                                                             ("sgcl[c=0.3]", (0, 100, 300, 1000, 3000), (0,))]
    assert curves[0].means == (0.5, 0.6, 0.65, 0.7, 0.7)
    assert curves[0].spreads == (0.01,) * 5  # one seed: its CV spread
    two = learning_curves(rows + [row("gcc", "imdb-binary", 0.8, steps=s, batch_size=256, seed=1)
                                  for s in (0, 300, 1000, 3000)])
    assert two[0].seeds == (0, 1) and two[0].means[0] == pytest.approx(0.65)
    assert two[0].spreads[0] == pytest.approx(np.std([0.5, 0.8], ddof=1))  # several seeds: std over them


def test_change_per_doubling_divides_the_change_by_the_doublings_between_counts():
    c = Curve("gcc", "x", "accuracy", (0, 100, 400), (0.1, 0.5, 0.52), (0,))
    assert change_per_doubling(c) == {400: pytest.approx(0.01)}  # +2 pt over two doublings
    assert changes_at([c], 400) == [(c, pytest.approx(0.01))] and changes_at([c], 100) == []  # 100: no earlier count


def test_budget_is_the_first_step_count_where_most_gcc_columns_change_less_than_half_a_point_per_doubling():
    # per-doubling changes at 300 / 1000 / 3000: a: big, small, small; b: big, big, small; c: big, small, small
    rows = _curve_rows({"a": [0.3, 0.50, 0.60, 0.602, 0.603], "b": [0.3, 0.50, 0.60, 0.65, 0.651],
                        "c": [0.3, 0.50, 0.55, 0.551, 0.552]})
    choice = choose_budget(learning_curves(rows))
    assert (choice.steps, choice.flat) == (1000, True)
    assert choice.flat_columns == {300: 0, 1000: 2, 3000: 3} and choice.measured_columns[1000] == 3


def test_budget_rule_says_so_when_no_step_count_flattens():
    rows = _curve_rows({"a": [0.1, 0.2, 0.3, 0.4, 0.5], "b": [0.1, 0.2, 0.3, 0.4, 0.5]})
    choice = choose_budget(learning_curves(rows))
    assert (choice.steps, choice.flat, choice.last, choice.flat_at(3000)) == (3000, False, 3000, False)
    assert choose_budget([]) is None


def test_tables_stay_at_the_curves_last_point_when_the_curve_flattens_earlier():
    # flat from 1000 steps on; a noisy column at 3000 steps breaks the rule there (1 of 2 flat)
    rows = _curve_rows({"a": [0.3, 0.50, 0.60, 0.602, 0.603], "b": [0.3, 0.50, 0.60, 0.601, 0.65]})
    family, _, choice, table = budget_study(rows)
    assert (choice.steps, choice.flat, choice.last, choice.flat_at(3000)) == (1000, True, 3000, False)
    assert table == (3000, *family)
    assert {r.steps for r in tables_of(rows)[-1].rows} == {0, 3000}  # 0: the random-init rows
    text = budget_text(choice, {1000: [], 3000: []})
    assert "**The curve flattens at 1000 steps**" in text and "the rule does not hold there (1 of 2" in text


def test_fine_tuned_rows_stand_beside_the_published_fine_tuned_scores_of_their_method():
    tuned = dict(task="node_classification_finetuned", metric="micro_f1", epochs=30)
    rows = [row("gcc", "usa_airport", 0.66, seed=0, **tuned), row("gcc", "usa_airport", 0.68, seed=1, **tuned),
            row("gcc", "usa_airport", 0.99, seed=2)]  # frozen: not compared
    items = {(p.method, p.dataset): p for p in published_finetuned(Rows(rows))}
    assert set(items) == {("gcc", "usa_airport"), ("sgcl", "usa_airport")}
    gcc = items["gcc", "usa_airport"]
    assert (gcc.published, gcc.measured, gcc.seeds) == (PUBLISHED_FINETUNED_E2E["gcc"]["usa_airport"],
                                                        pytest.approx(67.0), 2)
    assert gcc.difference == pytest.approx(67.0 - 68.3)
    assert items["sgcl", "usa_airport"].measured is None and items["sgcl", "usa_airport"].difference is None


def test_fidelity_compares_gcc_e2e_at_the_budget_with_the_published_numbers():
    rows = [row("gcc", "usa_airport", 0.640, task="node_classification", metric="micro_f1", seed=0),
            row("gcc", "usa_airport", 0.650, task="node_classification", metric="micro_f1", seed=1),
            row("gcc", "rdt-b", 0.80), row("gcc", "imdb-binary", 0.99, steps=300),
            row("gcc", "imdb-multi", 0.99, mode="moco"), row("sgcl", "collab", 0.747)]
    table = {f.dataset: f for f in fidelity(table_of(rows))}
    assert list(table) == list(PUBLISHED_GCC_E2E)
    assert table["usa_airport"].measured == pytest.approx(64.5) and table["usa_airport"].seeds == 2
    assert table["usa_airport"].within and table["usa_airport"].difference == pytest.approx(-0.3)
    assert table["rdt-b"].difference == pytest.approx(-7.5) and not table["rdt-b"].within
    assert all(table[d].measured is None for d in ("imdb-binary", "imdb-multi", "collab", "h-index"))
    assert not fidelity_passes(list(table.values()))
    floors = [row("structural", "rdt-b", 0.85, mode="none"), row("spectral", "rdt-b", 0.9, mode="none", seed=1),
              row("spectral", "rdt-b", 0.7, mode="none")]  # spectral's mean over seeds: 0.8
    table = {f.dataset: f for f in fidelity(table_of(rows + floors))}
    assert (table["rdt-b"].floor_method, table["rdt-b"].floor) == ("structural", pytest.approx(85.0))
    assert table["rdt-b"].measured == pytest.approx(80.0)
    assert table["collab"].floor is None


# ------------------------------------------------------------------------------------------ rendered report


def test_report_renders_the_budget_study_and_random_init_only_when_rows_exist(tmp_path):
    plain = tmp_path / "plain" / "rows.jsonl"
    RowStore(plain).append([row("gcc", "imdb-binary", 0.7), row("sgcl", "imdb-binary", 0.71)])
    text = build_report(plain, tmp_path / "plain.md", heatmap_dataset="imdb-binary")
    assert "Budget study" not in text and "| dataset | published | gcc | difference |" not in text
    assert "random init" not in text.split("### Does")[0]

    study = tmp_path / "study" / "rows.jsonl"
    points = {d: [0.3, 0.5, 0.6, 0.602, 0.603] for d in ("imdb-binary", "usa_airport")}
    RowStore(study).append(_curve_rows(points))
    text = build_report(study, tmp_path / "study.md", heatmap_dataset="imdb-binary")
    assert "**The curve flattens at 1000 steps**" in text
    assert "the tables are at the curve's last point, 3000 steps" in text
    assert "and the rule holds there too (2 of 2 columns flat)" in text
    assert "| `gcc` | 1000 | +0.115 | +0.115 | 2 of 2 |" in text  # (60.2 − 60.0) / log2(1000 / 300) per column
    assert "| `gcc` | 3000 | +0.063 | +0.063 | 2 of 2 |" in text  # (60.3 − 60.2) / log2(3000 / 1000)
    assert "| dataset | published | gcc | difference |" in text
    assert "| IMDB-B | 71.7 | 60.30 (1 seed) | -11.40 |" in text  # the tables' budget: 3000 steps
    assert "- IMDB-B: gcc 60.30, published 71.7 (-11.40 pt); no training-free row under this protocol yet." in text
    assert "| random init | 1 |" in text
    assert (study.parent / "learning_curve.png").stat().st_size > 1000
    assert (study.parent / "fidelity.csv").read_text().startswith("dataset,published,gcc,difference")


def test_report_keeps_the_default_c_while_the_grid_is_incomplete(tmp_path):
    store = tmp_path / "rows.jsonl"
    RowStore(store).append(_grid_rows({"gcc": (0.6, 0.6), "sgcl": (0.70, 0.60), "sgcl[c=0.2]": (0.72, 0.61)}))
    text = build_report(store, tmp_path / "r.md", heatmap_dataset="x", c_grid=[0.2, 0.45])
    assert "**The c grid is incomplete** (c = 0.45 without seed-0 rows" in text
    assert "stays at the default c = 0.3" in text and "Among the points run, c = 0.2 has the best" in text
    table = text.split("## Node and graph classification")[1].split("###")[0]
    assert "| sgcl | 1 | 70.00" in table  # the default-c rows, not c = 0.2's
    complete = build_report(store, tmp_path / "c.md", heatmap_dataset="x", c_grid=[0.2])
    assert "**The tables' `sgcl` row uses c = 0.2**" in complete


def test_report_lists_the_c_grid_and_the_default_c_row_beside_the_chosen_one(tmp_path):
    store = tmp_path / "rows.jsonl"
    grid = _grid_rows({"gcc": (0.6, 0.6), "sgcl": (0.70, 0.60), "sgcl[c=0.2]": (0.72, 0.61),
                       "sgcl[c=0.45]": (0.5, 0.5)})
    RowStore(store).append(grid + [row("gcc ⊕ structural", "x", 0.8, steps=3000),
                                   row("structural", "x", 0.75, mode="none")])
    text = build_report(store, tmp_path / "r.md", heatmap_dataset="x")
    assert "**The tables' `sgcl` row uses c = 0.2**" in text
    table = text.split("## Node and graph classification")[1].split("###")[0]
    assert [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| ") and "seeds" not in line] \
        == ["| gcc", "| sgcl", "| sgcl[c=0.3]", "| gcc ⊕ structural", "| structural (training-free)"]
    assert "| sgcl | 1 | 72.00" in table
    assert "`gcc ⊕ structural` 80.00; `structural` alone 75.00 (+5.00 pt from adding the encoder)" in text


def test_report_compares_fine_tuned_sgcl_and_gcc_seed_by_seed(tmp_path):
    store = tmp_path / "rows.jsonl"
    tuned = dict(task="graph_classification_finetuned", epochs=30)
    RowStore(store).append([row(m, "imdb-binary", v + step * s, seed=s, scores=repeats(v + step * s, 3), **kw)
                            for s in (0, 1) for kw in ({}, tuned) for m, v, step in (("gcc", 0.70, 0.01),
                                                                                     ("sgcl", 0.72, 0.02))]
                           + [row("gcc", "imdb-binary", 0.6, steps=0, scores=repeats(0.6, 3), **tuned)])
    text = build_report(store, tmp_path / "r.md", heatmap_dataset="x")
    tuned_part = text.split("## Fine-tuned encoders")[1].split("## Ablation")[0]
    assert "each seed's score is its mean over the folds" in tuned_part
    assert "| random init | 1 | 60.00 ± 1.00ᶜ |" in tuned_part  # the untrained encoder fine-tuned: training from scratch
    assert "`random init` fine-tunes the untrained encoder" in tuned_part
    assert "random init" not in finetune_intro(Rows([row("gcc", "x", 0.6, **tuned)]))  # said only with its rows
    assert "| IMDB-B | 2 | +2.00 +3.00 | +2.50 |" in tuned_part
    assert (tmp_path / "sgcl_minus_gcc_finetuned.csv").read_text().count("\n") == 3  # header + one line per seed


def test_similarity_section_shows_sgcl_minus_gcc_seed_by_seed_per_metric(tmp_path):
    store = tmp_path / "rows.jsonl"
    sim = dict(task="similarity_search")
    RowStore(store).append([row(m, "kdd_icdm", v + step * s, seed=s, metric=k, **sim) for s in (0, 1)
                            for k in ("hits@20", "hits@40") for m, v, step in (("gcc", 0.10, 0.01),
                                                                               ("sgcl", 0.12, 0.015))])
    text = build_report(store, tmp_path / "r.md", heatmap_dataset="x")
    part = text.split("## Top-k similarity search")[1].split("## Fine-tuned encoders")[0]
    assert "one HITS@k per seed" in part
    assert "| KDD-ICDM hits@20 | 2 | +2.00 +2.50 | +2.25 |" in part and "| KDD-ICDM hits@40 | 2 |" in part


def test_summary_sorts_columns_by_where_their_seed_interval_lies():
    def diffs(dataset, values, metric="accuracy"):
        task = "similarity_search" if metric.startswith("hits") else "graph_classification"
        return SeedDifferences(Column(dataset, task, metric, "e2e"), tuple(range(len(values))), tuple(values),
                                  summarize(values))
    frozen = [diffs("imdb-binary", [0.01, 0.02, 0.015]), diffs("rdt-b", [-0.02, -0.01, -0.03]),
              diffs("collab", [-0.01, 0.01, 0.0]), diffs("kdd_icdm", [0.02], "hits@20")]
    text = summary_lines(frozen, [])
    assert "above 0 on IMDB-B (+1.50 pp); below 0 on RDT-B (-2.00 pp); contains 0 on 1 column; one paired seed, " \
           "no interval, on KDD-ICDM hits@20." in text
    assert "(1–3 paired seeds, 4 columns)" in text and "Fine-tuned encoders: no paired seeds yet." in text
    # seed-level p 0.035 (IMDB-B), 0.074 (RDT-B), 1 (COLLAB); Holm over the 3: 0.105, 0.148, 1
    assert "With the 3 columns' seed-level t-tests as one family, Holm-corrected (family-wise error rate 5 %), the " \
           "difference is shown on no column." in text
    strong = [diffs("imdb-binary", [0.010, 0.011, 0.012]), *frozen[1:]]  # p 0.0038, Holm 0.011
    assert "the difference is shown on IMDB-B (+1.10 pp)." in summary_lines(strong, [])


def test_ablation_tests_sgcl_against_each_random_analogue_it_has_rows_for(tmp_path):
    # sgcl sits ≈5 pt above its crop=random control at every (seed, repetition) and level with gcc: the control
    # section shows the difference with ▲, while the table's marker (against gcc) stays empty for sgcl
    rows = []
    for seed in range(3):
        base = repeats(0.6 + 0.01 * seed)
        control = [v - 0.05 + 1e-4 * ((i * 7) % 5) for i, v in enumerate(base)]
        mine = [v + 1e-4 * ((i * 3) % 5 - 2) for i, v in enumerate(base)]
        rows += [row("gcc", "x", float(np.mean(base)), seed=seed, scores=base),
                 row("sgcl", "x", float(np.mean(mine)), seed=seed, scores=mine),
                 row("sgcl[crop=random]", "x", float(np.mean(control)), seed=seed, scores=control)]
    rows.append(row("sgcl", "x", 0.9, seed=3, scores=repeats(0.9)))  # a seed the control lacks: not paired
    stat, = statistics(Rows(rows), "sgcl", ["e2e"], ["graph_classification"], against="sgcl[crop=random]")
    assert (stat.seeds, stat.samples) == (3, 90)
    assert stat.p_seed_means == pytest.approx(0.25)
    assert 100 * (stat.mean - stat.baseline) == pytest.approx(5.0, abs=0.05)
    store = tmp_path / "rows.jsonl"
    RowStore(store).append(rows)
    text = build_report(store, tmp_path / "r.md", heatmap_dataset="x")
    section = text.split("### `sgcl` against `sgcl[crop=random]`")[1].split("##")[0]
    line, = [s for s in section.splitlines() if s.startswith("| x |")]
    assert "| +4.98 |" in line and "| ▲ |" in line
    assert "| sgcl | 4 | 69.34 ± 13.80 |" in text.split("## Ablation")[1]  # no marker against gcc
    assert "with n paired seeds the Wilcoxon test of the seed means cannot fall below 2/2^n (n = 3: 0.25)" in section
    assert "permute=random`:" not in text
    assert (tmp_path / "ablation_statistics_crop_random.csv").read_text().startswith(
        "dataset,mode,metric,seeds,samples,sgcl,sgcl[crop=random],difference")
    assert (tmp_path / "statistics.csv").read_text().startswith("dataset,mode,metric,seeds,samples,sgcl,gcc,")


def test_a_table_keeps_training_free_rows_beside_encoders_whose_rows_name_their_inference_views():
    rows = [row("gcc", "imdb-binary", 0.7, copies=2), row("sgcl", "imdb-binary", 0.71, copies=2),
            row("structural", "imdb-binary", 0.6, mode="none", steps=None, batch_size=None)]
    table = table_spec(rows, table_budget(rows)).select(rows)
    assert sorted((r.method, r.copies) for r in table) == [("gcc", 2), ("sgcl", 2), ("structural", None)]
    with pytest.raises(ValueError, match="one protocol per table"):  # 8 views: the views study's own store
        table_spec(rows, table_budget(rows)).select(rows + [row("sgcl", "imdb-binary", 0.72, seed=1, copies=8)])


def test_the_views_study_pairs_seeds_per_view_count_and_says_whether_the_verdict_moves(tmp_path):
    rows = [row(m, "usa_airport", base + 0.01 * s + (0.02 if m.startswith("sgcl") and c == 8 else 0.0), seed=s,
                task="node_classification", metric="micro_f1", copies=c)
            for m, base in (("gcc", 0.60), ("sgcl[c=0.4]", 0.59)) for s in (0, 1, 2) for c in (2, 8)]
    points = views_study(rows)
    assert [(p.copies, p.seeds) for p in points] == [(2, {"gcc": 3, "sgcl": 3}), (8, {"gcc": 3, "sgcl": 3})]
    assert points[0].difference.mean == pytest.approx(-0.01) and points[1].difference.mean == pytest.approx(0.01)
    text = views_section(points, tmp_path / "v.png", tmp_path / "v.csv")
    assert "GCC ahead" in text and "SGCL ahead" in text and "changes with the number of views on US-Airport" in text
    assert (tmp_path / "v.png").is_file()
    readme = views_headline(points, default=8)  # the README's sentence at the embeddings' default
    assert "changes on US-Airport micro_f1: SGCL ahead (+1.00 pp [+1.00, +1.00], 3 seeds), where 2 views read GCC " \
           "ahead" in readme and readme.startswith("At 8 views per node")
    assert views_headline(points, default=2) == "" and views_headline(points[:1], default=8) == ""
    steady = [dataclasses.replace(p, difference=points[0].difference) for p in points]  # the same reading at 8
    assert "on the 1 node-level columns, Holm-corrected, reads on every column as at 2" in views_headline(steady, 8)
    # +1 pp on 3 seeds with spread: its 90 % interval excludes 0 (p ≈ 0.057), Holm at 5 % does not call it ahead
    noisy = dataclasses.replace(points[1], difference=summarize([0.01, 0.02, 0.01], interval="t"))
    assert noisy.difference.ci_low > 0 and "2 views read GCC ahead" in views_headline([points[0], noisy], 8)
    assert "no difference shown (+1.33 pp" in views_headline([points[0], noisy], 8)


def test_the_view_count_rule_reads_node_classification_only_and_decides_at_eight_seeds():
    def rows(seeds, similarity_gain=0.0):
        out = [row(m, "usa_airport", 0.60 + 0.01 * s + (0.02 if c >= 8 else 0.0) + 0.001 * (-1) ** s * (c == 32),
                   seed=s, task="node_classification", metric="micro_f1", copies=c)
               for m in ("gcc", "sgcl[c=0.4]") for s in seeds for c in (2, 8, 32)]
        return out + [row(m, "kdd_icdm", 0.1 + similarity_gain * (c == 32) + 0.001 * s, seed=s,
                          task="similarity_search", metric="hits@20", copies=c)
                      for m in ("gcc", "sgcl[c=0.4]") for s in seeds for c in (2, 8, 32)]

    few = choose_views(rows(range(3)))
    assert few.copies is None and few.seeds == 3 and few.candidate == 8 and not few.still_rising
    assert {(g.method, g.fewer, g.more) for g in few.gains} == {(m, 2, k) for m in ("gcc", "sgcl") for k in (8, 32)}
    text = views_choice_lines(few, 2)
    assert "Undecided: the fewest seeds of a point is 3 of 8" in text and "would pick 8 views" in text
    assert "stays GCC's 2" in text
    decided = choose_views(rows(range(8), similarity_gain=0.5))  # a similarity gain at 32 views: not counted
    assert decided.copies == 8 and decided.seeds == 8 and all(g.dataset == "usa_airport" for g in decided.gains)
    assert "Decided on 8 seeds: 8 views." in views_choice_lines(decided, 8)
    assert "does not follow the evidence yet" in views_choice_lines(decided, 2)
    rising = choose_views([r for r in rows(range(8)) if r.copies != 32])  # 8 beats 2, nothing above 8
    assert rising.copies == 8 and rising.still_rising and "may still be rising" in views_choice_lines(rising, 8)


def test_the_code_default_view_count_follows_the_stored_evidence():
    from gcc_sgcl.engine.views import INFERENCE_COPIES
    from gcc_sgcl.experiments.studies.inference_views import views_store

    choice = choose_views(RowStore(views_store(ROWS_FILE)).load())
    if choice.copies is None:
        assert INFERENCE_COPIES == 2  # GCC's count until the rule decides
    else:
        assert INFERENCE_COPIES == choice.copies and not choice.still_rising


def test_the_tables_keep_gccs_two_views_whatever_the_embedding_default():
    from gcc_sgcl.engine.views import GCC_COPIES
    from gcc_sgcl.experiments.settings import SweepConfig
    from gcc_sgcl.settings import default_of

    assert default_of(SweepConfig, "copies") == GCC_COPIES == 2


def test_rescored_rows_are_paired_with_the_stored_evaluation_they_repeat():
    stored = [row("gcc", "usa_airport", 0.60, task="node_classification", metric="micro_f1", copies=2)]
    again = [dataclasses.replace(stored[0], mean=0.61), dataclasses.replace(stored[0], copies=8)]
    pairs = rescored(again, stored)
    assert pairs == [(stored[0], again[0])]
    assert "up to 1.00 pp (US-Airport micro_f1: 60.00 stored, 61.00 now)" in rescored_lines(pairs)


def test_leave_one_out_pairs_each_variant_with_sgcl_and_gcc_by_seed(tmp_path):
    rows = [row(m, "x", v + 0.01 * s, seed=s, steps=3000) for m, v in
            (("gcc", 0.60), ("sgcl[c=0.4]", 0.64), ("sgcl-no-align[c=0.4]", 0.67), ("sgcl-no-filter", 0.62))
            for s in (0, 1, 2)]
    rows.append(row("sgcl-no-align[c=0.4]", "x", 0.1, seed=5, steps=3000))  # no sgcl or gcc seed 5: unpaired
    spec = table_spec(rows, (3000, 128, CORPUS), 0.3).at_sgcl_c(0.4)
    items = {i.stage: i for i in leave_one_out(Rows(spec.select(rows)), ("filter", "crop", "align"))}
    assert set(items) == {"filter", "align"}  # no sgcl-no-crop rows
    align = items["align"]
    assert align.adds.seeds == (0, 1, 2) and align.adds.summary.mean == pytest.approx(-0.03)  # align costs 3 pp
    assert align.against_gcc.summary.mean == pytest.approx(0.07)
    assert items["filter"].adds.summary.mean == pytest.approx(0.02)
    text = leave_one_out_section(list(items.values()), tmp_path / "loo.csv")
    assert "| align | x | -3.00 [-3.00, -3.00] (3) | +7.00 [+7.00, +7.00] (3) |" in text
    assert (tmp_path / "loo.csv").read_text().splitlines()[0].startswith("stage,dataset,metric,mode,adds_seeds")
    reading = leave_one_out_reading(list(items.values()), seed_differences(Rows(spec.select(rows)),
                                                                                  SGCL, ("e2e",), CLASSIFICATION))
    assert "interval lies above 0 — filter: x (+2.00); it costs `sgcl` where the interval lies below 0 — align: x " \
           "(-3.00)." in reading and "behind GCC" not in reading and "These are 4 intervals, about 0.4" in reading
    plot_leave_one_out(list(items.values()), tmp_path / "loo.png")  # stage x column heat-map
    assert (tmp_path / "loo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_leave_one_out_section_says_how_many_seeds_each_stage_has(tmp_path):
    from gcc_sgcl.experiments.studies import leave_one_out as study
    from gcc_sgcl.experiments.studies.selection import Tables

    rows = [row(m, "x", v + 0.01 * s, seed=s, steps=3000) for m, v in
            (("gcc", 0.60), ("sgcl[c=0.4]", 0.64), ("sgcl-no-align[c=0.4]", 0.67), ("sgcl-no-filter", 0.62))
            for s in (0, 1, 2)]
    spec = table_spec(rows, (3000, 128, CORPUS), 0.3).at_sgcl_c(0.4)

    def text(kept):
        t = Tables(tmp_path / "rows.jsonl", tmp_path / "r.md", kept, (None, [], None, None), spec, kept, None, [],
                   Rows(spec.select(kept)), ["e2e"])
        return "\n".join(study.sections(t))

    assert "(3 seeds each)" in text(rows)
    partial = [r for r in rows if not (r.method == "sgcl-no-filter" and r.seed == 2)]
    assert "(2 to 3 seeds so far)" in text(partial)
    assert "(none yet)" in text([r for r in rows if r.method in ("gcc", "sgcl[c=0.4]")])


def test_method_names_round_trip_exactly_and_refuse_what_they_cannot_write():
    from gcc_sgcl.method import MethodSpec

    for name in ("sgcl[k=1000000]", "sgcl[c=0.1234567]", "sgcl[c=0.4,k=64] ⊕ structural", "random init", "sgcl[c=1]"):
        assert str(MethodSpec.parse(name)) == name and MethodSpec.parse(str(MethodSpec.parse(name))) == MethodSpec.parse(name)
    for bad in ("", "sgcl[c=high]", "a ⊕ b ⊕ c", "sgcl[]"):
        with pytest.raises(ValueError):
            MethodSpec.parse(bad)
    with pytest.raises(ValueError, match="c must be a float"):
        MethodSpec.of("sgcl", {"c": "0.4"})


def test_the_long_budget_study_pairs_seeds_per_budget_and_says_which_verdicts_change(tmp_path):
    from gcc_sgcl.experiments.studies.long_budget import long_store

    store = tmp_path / "rows.jsonl"
    table = [row(m, d, v + step * s, seed=s) for s in range(4) for d, base in (("imdb-binary", 0.70), ("x", 0.60))
             for m, v, step in (("gcc", base, 0.002), ("sgcl", base - 0.01 if d == "imdb-binary" else base + 0.01, 0.003))]
    RowStore(store).append(table)
    text = build_report(store, tmp_path / "r.md", heatmap_dataset="x")
    assert "_no long-budget rows yet_" in text
    RowStore(long_store(store)).append([row("gcc", "x", 0.6, seed=0, steps=400)])  # one side of a pair
    text = build_report(store, tmp_path / "r.md", heatmap_dataset="x")
    assert "_no seed pair at a longer budget yet_; rows so far: `gcc` at 400 steps (seed 0)." in text
    long_store(store).unlink()
    longer = [row(m, d, v + step * s, seed=s, steps=400) for s in range(3) for d, base in (("imdb-binary", 0.70),
              ("x", 0.60)) for m, v, step in (("gcc", base, 0.001), ("sgcl", base + 0.02, 0.002))]
    RowStore(long_store(store)).append(longer)
    text = build_report(store, tmp_path / "r.md", heatmap_dataset="x")
    section = text.split("## Longer budgets")[1].split("\n## ")[0]
    # the table budget is read on the long runs' seeds (0-2): -1.0, -0.9, -0.8 pp on IMDB-B (seed 3 left out)
    assert "| IMDB-B | -0.90 [-1.07, -0.73] (3) | +2.10 [+1.93, +2.27] (3) | SGCL ahead |" in section
    # the change, seed by seed: (+2.0, +2.1, +2.2) − (−1.0, −0.9, −0.8) = +3.0 pp each; sgcl moved (+3.0, +2.9, +2.8),
    # gcc's own change (0, −0.1, −0.2) has an interval containing 0
    assert ("From 100 to 400 steps (4×), the change of SGCL − GCC, seed-paired on 3 seeds, excludes 0 on IMDB-B "
            "(+3.00 pp [+3.00, +3.00]; moved: SGCL +2.90 pp)") in section
    assert "| IMDB-B | 3 | +3.00 pp [+3.00, +3.00] |" in section and "| change shown |" in section
    assert "Rows so far: `gcc` at 400 steps (seeds 0 1 2), `sgcl` at 400 steps (seeds 0 1 2)." in section
    assert (tmp_path / "long_budget.png").stat().st_size > 1000
    assert (tmp_path / "long_budget.csv").read_text().startswith("dataset,task,metric,steps,seeds,mean")
