"""The mean ranks (the paper's Fig. 3) on hand-made rows: ranks per column, ties, who enters, the mean rank."""
from gcc_sgcl.experiments.rows import ResultRow
from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, SIMILARITY, Rows
from gcc_sgcl.experiments.studies.mean_ranks import average_ranks, mean_ranks, rank_section


def row(method, dataset, mean, seed=0, mode="e2e", task="graph_classification", metric="accuracy"):
    return ResultRow(method=method, mode=mode, seed=seed, dataset=dataset, task=task, metric=metric, mean=mean,
                     std=0.0, std_kind="", n=1, protocol="p")


def seeded(method, dataset, means, **kw):
    return [row(method, dataset, m, seed=s, **kw) for s, m in enumerate(means)]


def test_tied_scores_share_the_mean_of_their_ranks_and_the_best_is_rank_one():
    assert average_ranks({"a": 0.5, "b": 0.5, "c": 0.5}) == {"a": 2.0, "b": 2.0, "c": 2.0}
    assert average_ranks({"a": 0.9, "b": 0.1, "c": 0.5, "d": 0.5}) == {"a": 1.0, "b": 4.0, "c": 2.5, "d": 2.5}
    assert average_ranks({}) == {}


def test_a_pre_trained_method_enters_a_column_only_with_enough_seeds_and_training_free_rows_always():
    rows = Rows(seeded("gcc", "imdb-binary", [0.7, 0.7, 0.7]) + seeded("sgcl", "imdb-binary", [0.9, 0.9])
                   + [row("structural", "imdb-binary", 0.6, mode="none")])
    test = mean_ranks(rows, ["e2e"], CLASSIFICATION, ["gcc", "sgcl"])
    assert [(e.method, e.mode, e.ranks[("imdb-binary", "graph_classification", "accuracy")][:2])
            for e in test.entrants] == [("gcc", "e2e", (1.0, 3)), ("structural", "none", (2.0, 1))]
    assert [e.method for e in mean_ranks(rows, ["e2e"], CLASSIFICATION, ["gcc", "sgcl"], 2).entrants] == [
        "sgcl", "gcc", "structural"]


def test_each_dataset_weighs_once_in_the_mean_rank_and_partial_entrants_come_last():
    sim = dict(task="similarity_search")
    rows = Rows(
        seeded("gcc", "usa_airport", [0.6] * 3, task="node_classification", metric="micro_f1")
        + seeded("sgcl", "usa_airport", [0.5] * 3, task="node_classification", metric="micro_f1")
        + seeded("gcc", "kdd_icdm", [0.1] * 3, metric="hits@20", **sim)
        + seeded("sgcl", "kdd_icdm", [0.2] * 3, metric="hits@20", **sim)
        + seeded("gcc", "kdd_icdm", [0.3] * 3, metric="hits@40", **sim)
        + seeded("sgcl", "kdd_icdm", [0.2] * 3, metric="hits@40", **sim)
        + [row("prone", "usa_airport", 0.9, mode="none", task="node_classification", metric="micro_f1")])
    test = mean_ranks(rows, ["e2e"], CLASSIFICATION + SIMILARITY, ["gcc", "sgcl"])
    means = {e.method: (e.mean_rank, e.datasets) for e in test.entrants}
    # usa_airport: prone 1, gcc 2, sgcl 3; kdd_icdm: gcc (2 + 1) / 2, sgcl (1 + 2) / 2 — one dataset, not two columns
    assert means == {"gcc": (1.75, 2), "sgcl": (2.25, 2), "prone": (1.0, 1)}
    assert [e.method for e in test.entrants] == ["gcc", "sgcl", "prone"]
    assert not test.complete(test.entrants[-1])


def test_rank_section_writes_the_table_csv_and_figure_with_the_seeds_behind_each_rank(tmp_path):
    rows = Rows(seeded("gcc", "imdb-binary", [0.7] * 3) + seeded("gcc", "imdb-binary", [0.8] * 3, mode="moco")
                   + [row("structural", "imdb-binary", 0.6, mode="none")])
    test = mean_ranks(rows, ["moco", "e2e"], CLASSIFICATION, ["gcc"])
    text = rank_section(test, tmp_path / "rank.png", tmp_path / "rank.csv")
    assert "| gcc (MoCo) | 1.00 | 1 of 1 | 1 (3) |" in text
    assert "| structural (training-free) | 3.00 | 1 of 1 | 3 (1) |" in text
    assert (tmp_path / "rank.png").stat().st_size > 0
    lines = (tmp_path / "rank.csv").read_text().splitlines()
    assert lines[0] == "method,mode,dataset,metric,seeds,mean_score,rank" and len(lines) == 1 + 3 + 3
