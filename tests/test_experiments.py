"""The runtime benchmark and the demo's table (their numbers come from real measurements)."""
import csv
import shutil

import numpy as np

from gcc_sgcl.engine.generate import GenerateConfig, generate
from gcc_sgcl.engine.views import GCC_COPIES, INFERENCE_COPIES
from gcc_sgcl.experiments.demo import GRAPH_SET, NODE_SET, SIMILARITY_SET, evaluate_run, format_table
from gcc_sgcl.experiments.runtime import format_report, measure
from gcc_sgcl.tasks.records import TaskResult


def test_runtime_benchmark_times_every_method_and_reports_ratios(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))
    results = measure(["gcc", "sgcl"], ["synthetic"], batch_size=2, batches=2)
    assert list(results) == ["gcc", "sgcl"]
    for r in results.values():
        assert r["data_s"] > 0 and r["step_s"] > 0 and np.isclose(r["total_s"], r["data_s"] + r["step_s"])
    assert results["gcc"]["setup_s"] < 0.01 < results["sgcl"]["setup_s"]  # only sgcl computes E_t
    report = format_report(results)
    assert "| gcc |" in report and report.splitlines()[2].count("1.00") == 2


def test_demo_table_puts_methods_in_rows_and_metrics_in_columns():
    def result(dataset, metric, mean):
        return TaskResult("t", dataset, metric, np.array([mean]), mean, 0.01, "std over 10 folds", 1, "p", 0)

    rows = {m: [result("roles", "micro_f1", v), result("sim", "hits@20", v / 2)] for m, v in (("gcc", 0.5), ("sgcl", 0.6))}
    table = format_table(rows, {"gcc": 1.0, "sgcl": 1.5}).splitlines()
    assert [c.strip() for c in table[0].split("|")[1:4]] == ["method", "roles micro_f1", "sim hits@20"]
    assert table[2].startswith("| gcc ") and "50.00 ± 1.00" in table[2] and "25.00 ± 1.00" in table[2]
    assert table[3].startswith("| sgcl ") and "1.5" in table[3]


def test_the_demo_logs_what_its_rows_are_as_the_task_commands_do(tiny_encoder, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(tiny_encoder, run)
    generate(run, [NODE_SET, GRAPH_SET, SIMILARITY_SET], GenerateConfig(copies=GCC_COPIES), progress=False)
    results = evaluate_run(run, repeats=1)
    # the tables' 2 views per row, and the similarity column again at the views a user's own graph gets
    assert {(r.encoder_step, r.views, r.joined) for r in results} == {(3, GCC_COPIES, None), (3, INFERENCE_COPIES, None)}
    assert [(r.dataset, r.metric) for r in results if r.views == INFERENCE_COPIES] == [(SIMILARITY_SET, "hits@20")]
    with open(run / "results.csv", newline="") as f:
        assert {(row["encoder_step"], row["views"]) for row in csv.DictReader(f)} == {
            ("3", str(GCC_COPIES)), ("3", str(INFERENCE_COPIES))}
    table = format_table({"tiny": results}, {"tiny": 0.0}).splitlines()[0]
    assert f"{SIMILARITY_SET} hits@20 ({INFERENCE_COPIES} views)" in table


def test_the_demos_reading_states_the_gap_at_both_view_counts_from_the_rows():
    from gcc_sgcl.experiments.demo import reading

    def hits(mean, views):
        return TaskResult("t", SIMILARITY_SET, "hits@20", np.array([mean]), mean, 0.01, "s.e.", 1, "p", 0,
                          views=views)

    rows = {"gcc": [hits(0.392, GCC_COPIES), hits(0.617, INFERENCE_COPIES)],
            "sgcl": [hits(0.278, GCC_COPIES), hits(0.583, INFERENCE_COPIES)]}
    text = reading(rows)
    assert "-11.4 pp at GCC's 2 views per row" in text and "-3.4 pp at 32" in text
    assert "pp" not in reading({"gcc": rows["gcc"]})  # one method: no gap to state
