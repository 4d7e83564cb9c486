"""The task CLIs on a temporary load path, with tiny in-test datasets standing in for the data layer."""
import csv
from types import SimpleNamespace

import dgl
import numpy as np
import pytest

from gcc_sgcl.tasks import graph_classification, node_classification, similarity_search
from gcc_sgcl.tasks.records import CSV_COLUMNS, RESULTS_FILE

HIDDEN = 8
N_NODES = 60


def empty_graph(n: int) -> dgl.DGLGraph:
    return dgl.graph((np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)), num_nodes=n)


def node_loader(name: str, data_dir: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(name=name, graph=empty_graph(N_NODES), labels=np.arange(N_NODES) % 3)


def graph_loader(name: str, data_dir: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(name=name, graphs=[empty_graph(3)] * 40, labels=np.arange(40) % 2)


def similarity_loader(name: str, data_dir: str | None = None) -> SimpleNamespace:
    pairs = np.stack([np.arange(25), np.arange(25)[::-1]], axis=1).astype(np.int64)
    return SimpleNamespace(name=name, graph_1=empty_graph(30), graph_2=empty_graph(25), pairs=pairs)


def save_embeddings(load_path, dataset: str, rows: int, hidden: int = HIDDEN) -> None:
    rng = np.random.default_rng(0)
    np.save(load_path / f"{dataset}.npy", rng.normal(size=(rows, hidden)).astype(np.float32))


def read_csv(path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="") as f:
        header = next(csv.reader(f))
    with open(path, newline="") as f:
        return header, list(csv.DictReader(f))


def test_node_cli_prints_a_table_and_appends_csv_rows_with_one_header(tmp_path, capsys):
    save_embeddings(tmp_path, "toy", N_NODES)
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "toy", "--folds", "5", "--repeats", "2"]
    first = node_classification.main(argv, loader=node_loader)
    node_classification.main(argv, loader=node_loader)
    out = capsys.readouterr().out
    assert "toy" in out and "micro_f1" in out and "±" in out
    assert "std over 2 repeats of 5-fold CV, bootstrapped test folds" in out
    header, rows = read_csv(tmp_path / RESULTS_FILE)
    assert tuple(header) == CSV_COLUMNS
    assert len(rows) == 2
    assert rows[0]["task"] == "node_classification" and rows[0]["dataset"] == "toy"
    assert float(rows[0]["mean"]) == pytest.approx(first[0].mean)
    assert rows[0]["n"] == str(N_NODES) and rows[0]["seed"] == "0" and rows[0]["load_path"] == str(tmp_path)
    assert rows[0]["n_scores"] == "2"


@pytest.mark.parametrize(
    "cli, rows, loader, extra",
    [(node_classification, N_NODES, node_loader, []), (graph_classification, 40, graph_loader, ["--svc", "c1"])],
)
def test_repeats_and_no_bootstrap_flags_reach_the_protocol(cli, rows, loader, extra, tmp_path):
    save_embeddings(tmp_path, "toy", rows)
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "toy", "--folds", "4"]
    (result,) = cli.main(argv + ["--repeats", "3", "--no-bootstrap", *extra], loader=loader)
    assert result.scores.shape == (3,) and result.correct.shape == (3, rows)
    assert "bootstrapped" not in result.protocol and "3x repeated stratified 4-fold CV" in result.protocol
    _, logged = read_csv(tmp_path / RESULTS_FILE)
    assert logged[0]["n_scores"] == "3" and logged[0]["std_kind"] == "std over 3 repeats of 4-fold CV"


def test_graph_cli_evaluates_every_dataset_with_gccs_svc_by_default(tmp_path, capsys):
    for name in ("a", "b"):
        save_embeddings(tmp_path, name, 40)
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "a", "b", "--seed", "3"]
    results = graph_classification.main(argv, loader=graph_loader)
    assert [r.dataset for r in results] == ["a", "b"]
    assert all("C=100000, gamma=1/n_features" in r.protocol and r.seed == 3 for r in results)
    # The defaults are the paper's protocol: 10 repetitions of 10-fold CV with bootstrapped test folds.
    assert all("10x repeated stratified 10-fold CV, bootstrapped test folds" in r.protocol for r in results)
    _, rows = read_csv(tmp_path / RESULTS_FILE)
    assert [(r["dataset"], r["metric"], r["n_scores"]) for r in rows] == [(d, "accuracy", "10") for d in "ab"]


def test_similarity_cli_splits_rows_into_the_two_graphs_and_logs_both_ks(tmp_path, capsys):
    save_embeddings(tmp_path, "kdd_icdm", 30 + 25)
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "kdd_icdm"]
    results = similarity_search.main(argv, loader=similarity_loader)
    assert [r.metric for r in results] == ["hits@20", "hits@40"]
    assert "bootstrap s.e." in capsys.readouterr().out
    _, rows = read_csv(tmp_path / RESULTS_FILE)
    assert [r["metric"] for r in rows] == ["hits@20", "hits@40"]


def test_missing_embeddings_file_names_the_path_and_the_generate_script(tmp_path):
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "toy"]
    with pytest.raises(SystemExit, match=r"toy\.npy not found.*scripts/generate\.sh"):
        node_classification.main(argv, loader=node_loader)


def test_row_count_mismatch_names_both_numbers(tmp_path):
    save_embeddings(tmp_path, "kdd_icdm", 54)
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "kdd_icdm"]
    with pytest.raises(SystemExit, match=r"has 54 rows but there are 55 nodes in kdd_icdm \(30 \+ 25\)"):
        similarity_search.main(argv, loader=similarity_loader)


def test_hidden_size_mismatch_names_both_numbers(tmp_path):
    save_embeddings(tmp_path, "toy", N_NODES, hidden=16)
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "toy"]
    with pytest.raises(SystemExit, match=f"hidden size 16 but --hidden is {HIDDEN}"):
        node_classification.main(argv, loader=node_loader)


def test_non_finite_embeddings_are_refused(tmp_path):
    emb = np.ones((40, HIDDEN), dtype=np.float32)
    emb[3, 2] = np.nan
    np.save(tmp_path / "toy.npy", emb)
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "toy"]
    with pytest.raises(SystemExit, match="1 non-finite"):
        graph_classification.main(argv, loader=graph_loader)


def test_results_csv_with_a_foreign_header_is_left_untouched(tmp_path):
    save_embeddings(tmp_path, "toy", N_NODES)
    (tmp_path / RESULTS_FILE).write_text("dataset,score\nx,1\n")
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "toy", "--folds", "3", "--repeats", "1"]
    loaded = []

    def counted_loader(*args, **kwargs):
        loaded.append(args)
        return node_loader(*args, **kwargs)

    with pytest.raises(SystemExit, match="exists with header"):
        node_classification.main(argv, loader=counted_loader)
    assert (tmp_path / RESULTS_FILE).read_text() == "dataset,score\nx,1\n"
    assert not loaded  # refused before anything was read or evaluated


def test_a_checkpoint_file_as_load_path_reads_and_logs_in_its_folder(tmp_path):
    """generate.sh writes next to a checkpoint file given as --load-path; the tasks read and log there too."""
    (tmp_path / "checkpoint.pt").write_bytes(b"")
    save_embeddings(tmp_path, "a", 40)
    argv = ["--load-path", str(tmp_path / "checkpoint.pt"), "--hidden", str(HIDDEN), "--dataset", "a", "--folds", "2",
            "--repeats", "1"]
    assert graph_classification.main(argv, loader=graph_loader)[0].dataset == "a"
    _, rows = read_csv(tmp_path / RESULTS_FILE)
    assert [r["dataset"] for r in rows] == ["a"]


def test_a_damaged_embeddings_file_is_named(tmp_path):
    np.save(tmp_path / "a.npy", np.array([{"not": "an array"}], dtype=object))
    argv = ["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", "a"]
    with pytest.raises(SystemExit, match=r"a\.npy: not a readable \.npy array"):
        graph_classification.main(argv, loader=graph_loader)


def test_a_registered_dataset_of_another_kind_is_refused_by_name_not_sent_to_generate(tmp_path):
    for task, name, message in ((node_classification, "rdt-b", "'rdt-b' is a graph dataset, expected a node"),
                                (graph_classification, "ca-grqc", "'ca-grqc' is a pretrain dataset, expected a graph"),
                                (similarity_search, "usa_airport", "'usa_airport' is a node dataset, expected a simi")):
        with pytest.raises(SystemExit, match=message):
            task.main(["--load-path", str(tmp_path), "--hidden", str(HIDDEN), "--dataset", name])
    assert not (tmp_path / RESULTS_FILE).exists()
