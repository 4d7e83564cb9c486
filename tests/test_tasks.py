"""The downstream evaluators on synthetic embeddings whose right answer is known."""
import os
import signal
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from gcc_sgcl.tasks.cv import (
    bootstrap_indices,
    check_features,
    class_labels,
    cv_jobs,
    fold_predictions,
    forked_jobs,
    repeated_stratified_folds,
)
from gcc_sgcl.tasks.graph_classification import (
    C_GRID,
    INNER_FOLDS,
    SVC_PROTOCOLS,
    evaluate_graph_classification,
    svc_fit_predict,
)
from gcc_sgcl.tasks.node_classification import evaluate_node_classification
from gcc_sgcl.tasks.settings import EvalConfig
from gcc_sgcl.tasks.similarity_search import bootstrap_se, evaluate_similarity_search, pair_hits


def blobs(n_per_class: int, n_classes: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Well separated Gaussian blobs, one per class."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(n_classes), n_per_class)
    centres = 20.0 * np.eye(n_classes, dim)
    return centres[labels] + rng.normal(size=(len(labels), dim)), labels


def random_embeddings(n_per_class: int, n_classes: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Embeddings independent of the labels."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.repeat(np.arange(n_classes), n_per_class))
    return rng.normal(size=(len(labels), dim)), labels


# ---------------------------------------------------------------- shared helpers


def test_every_repetition_is_a_stratified_partition_and_repetitions_differ():
    labels = np.repeat(np.arange(4), [10, 20, 30, 40])
    repetitions = repeated_stratified_folds(labels, folds=10, repeats=3, seed=3)
    assert [len(r) for r in repetitions] == [10, 10, 10]
    for splits in repetitions:
        for train, test in splits:
            assert set(labels[test]) == {0, 1, 2, 3}
            assert len(np.intersect1d(train, test)) == 0
        assert np.array_equal(np.sort(np.concatenate([test for _, test in splits])), np.arange(len(labels)))
    assert not np.array_equal(repetitions[0][0][1], repetitions[1][0][1])


def test_folds_fitted_in_parallel_processes_give_the_same_scores_and_predictions_in_order():
    x, y = random_embeddings(30, 3, 8, seed=4)  # near chance: fits differ fold to fold
    for evaluate in (evaluate_graph_classification, evaluate_node_classification):
        one = evaluate(x, y, folds=5, repeats=3, jobs=1)
        two = evaluate(x, y, folds=5, repeats=3, jobs=2)
        assert np.array_equal(one.scores, two.scores) and np.array_equal(one.correct, two.correct)
    sizes = [2] * 5
    assert [f.predictions.tolist() for f in fold_predictions(lambda i: np.arange(i, i + 2) * i, sizes, jobs=2)] == \
        [[k * k, (k + 1) * k] for k in range(5)]
    with pytest.raises(ZeroDivisionError):  # a worker's error reaches the caller
        fold_predictions(lambda i: 1 / 0, sizes, jobs=2)
    with pytest.raises(BrokenProcessPool):  # a worker that dies (e.g. out of memory) does not hang the caller
        fold_predictions(lambda i: os.kill(os.getpid(), signal.SIGKILL), sizes, jobs=2)
    with pytest.raises(ValueError, match="fold cache needs"):
        fold_predictions(lambda i: np.zeros(2), sizes, cache=Path("unused"))
    assert cv_jobs(0) >= 1 and cv_jobs(3) == 3
    assert forked_jobs(3, 2) == 2 and forked_jobs(2, 5) == 2 and forked_jobs(0, 1) == 1  # never more than tasks
    for bad in (lambda: cv_jobs(-1), lambda: forked_jobs(-1, 4)):
        with pytest.raises(ValueError, match="jobs must be >= 0"):
            bad()


def test_repeated_folds_depend_only_on_the_seed():
    labels = np.repeat(np.arange(3), 20)
    a, b, c = (repeated_stratified_folds(labels, 5, 2, seed) for seed in (0, 0, 1))
    tests = lambda reps: [test for splits in reps for _, test in splits]  # noqa: E731
    assert all(np.array_equal(x, y) for x, y in zip(tests(a), tests(b)))
    assert not all(np.array_equal(x, y) for x, y in zip(tests(a), tests(c)))


def test_bootstrap_indices_resample_the_fold_reproducibly_per_repeat_and_fold():
    idx = bootstrap_indices(50, seed=0, repeat=1, fold=2)
    assert idx.shape == (50,) and idx.min() >= 0 and idx.max() < 50
    assert len(np.unique(idx)) < 50  # with replacement: 50 draws from 50 almost surely repeat one
    assert np.array_equal(idx, bootstrap_indices(50, seed=0, repeat=1, fold=2))
    assert not np.array_equal(idx, bootstrap_indices(50, seed=0, repeat=2, fold=1))
    assert not np.array_equal(idx, bootstrap_indices(50, seed=1, repeat=1, fold=2))


def test_labels_must_be_a_class_vector():
    assert np.array_equal(class_labels([2, 0, 1]), [2, 0, 1])
    with pytest.raises(ValueError, match=r"1-D class vector, got shape \(2, 3\)"):
        class_labels(np.eye(3)[:2])


def test_row_mismatch_between_embeddings_and_labels_names_both_counts():
    with pytest.raises(ValueError, match="5 rows but there are 4 labels"):
        check_features(np.zeros((5, 3)), np.zeros(4))


# ---------------------------------------------------------------- the paper's protocol


def test_protocol_reports_one_score_per_repetition_and_their_sample_std():
    emb, labels = random_embeddings(20, 3, 4, seed=6)
    result = evaluate_node_classification(emb, labels, folds=4, repeats=6, seed=0)
    assert result.scores.shape == (6,) and result.correct.shape == (6, 60) and result.correct.dtype == bool
    assert result.mean == pytest.approx(result.scores.mean())
    assert result.std == pytest.approx(np.std(result.scores, ddof=1))
    assert result.std_kind == "std over 6 repeats of 4-fold CV, bootstrapped test folds"
    assert result.row()["n_scores"] == 6


def test_correct_records_the_unbootstrapped_out_of_fold_predictions():
    # 60 examples, 3 classes, 5 folds: every test fold holds 12, so the mean of fold accuracies is the
    # pooled accuracy of the repetition.
    emb, labels = random_embeddings(20, 3, 4, seed=7)
    plain = evaluate_node_classification(emb, labels, folds=5, repeats=4, bootstrap=False)
    resampled = evaluate_node_classification(emb, labels, folds=5, repeats=4, bootstrap=True)
    assert np.allclose(plain.correct.mean(axis=1), plain.scores)
    assert np.array_equal(plain.correct, resampled.correct)
    assert "bootstrapped" not in plain.protocol and "bootstrapped" in resampled.protocol


def test_bootstrap_moves_the_scores_of_a_noisy_problem_but_not_their_expectation():
    rng = np.random.default_rng(8)
    labels = np.repeat([0, 1], 100)
    emb = rng.normal(size=(200, 2)) + 0.5 * labels[:, None]  # about 64 % accuracy
    plain = evaluate_graph_classification(emb, labels, folds=10, repeats=10, svc="c1", bootstrap=False)
    resampled = evaluate_graph_classification(emb, labels, folds=10, repeats=10, svc="c1", bootstrap=True)
    assert not np.allclose(plain.scores, resampled.scores)
    # 100 resampled folds of 20: the two means differ by about sqrt(0.64 * 0.36 / 20 / 100) = 0.011.
    assert abs(plain.mean - resampled.mean) < 0.04
    assert resampled.std > plain.std


def test_protocol_refuses_zero_repeats_and_negative_seeds():
    emb, labels = blobs(10, 2, 3, seed=9)
    with pytest.raises(ValueError, match="repeats must be at least 1, got 0"):
        evaluate_node_classification(emb, labels, folds=2, repeats=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got -1"):
        evaluate_graph_classification(emb, labels, folds=2, seed=-1)


# ---------------------------------------------------------------- node classification


def test_node_classification_scores_one_on_separable_blobs():
    emb, labels = blobs(30, 3, 8, seed=0)
    result = evaluate_node_classification(emb, labels, folds=10, repeats=3, seed=0, dataset="blobs")
    assert result.mean == pytest.approx(1.0) and result.correct.all()
    assert (result.task, result.dataset, result.metric) == ("node_classification", "blobs", "micro_f1")
    assert result.n == 90


def test_node_classification_is_near_chance_on_random_embeddings():
    emb, labels = random_embeddings(100, 3, 8, seed=1)
    result = evaluate_node_classification(emb, labels, folds=10, repeats=3, seed=0)
    assert abs(result.mean - 1 / 3) < 0.08


def test_node_classification_is_deterministic_under_the_seed():
    emb, labels = random_embeddings(40, 3, 8, seed=2)
    a, b, c = (evaluate_node_classification(emb, labels, folds=5, repeats=2, seed=seed) for seed in (7, 7, 8))
    assert np.array_equal(a.scores, b.scores) and np.array_equal(a.correct, b.correct)
    assert not np.array_equal(a.scores, c.scores)


# ---------------------------------------------------------------- graph classification


@pytest.mark.parametrize("svc", ["gcc", "gcc-scale", "grid", "c1"])
def test_graph_classification_scores_one_on_separable_blobs(svc):
    emb, labels = blobs(20, 2, 6, seed=3)
    result = evaluate_graph_classification(emb, labels, folds=5, repeats=1, seed=0, svc=svc)
    assert result.mean == pytest.approx(1.0)
    assert result.metric == "accuracy" and result.scores.shape == (1,) and result.std == 0.0
    assert result.protocol.startswith(SVC_PROTOCOLS[svc].description)


@pytest.mark.parametrize("kind", ["node", "graph"])
def test_registry_tasks_score_only_the_labelled_rows(kind):
    from types import SimpleNamespace

    from gcc_sgcl.tasks.registry import TASKS

    emb, labels = blobs(20, 2, 6, seed=3)
    marked = labels.copy()
    marked[::4] = -1  # unlabelled rows, as a dataset without a label for every item marks them
    protocol = EvalConfig(folds=5, repeats=1)
    (result,) = TASKS[kind].evaluate(emb, SimpleNamespace(labels=marked), "toy", protocol)
    assert result.n == int((marked >= 0).sum()) == 30


def _overlapping(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Three overlapping Gaussian classes (neither trivial nor chance) and one stratified train/test split."""
    rng = np.random.default_rng(seed)
    labels = np.repeat([0, 1, 2], 40)
    emb = rng.normal(size=(120, 5)) * rng.uniform(0.5, 3.0, size=5) + 0.8 * labels[:, None]
    train, test = repeated_stratified_folds(labels, 4, 1, seed)[0][0]
    return emb, labels, train, test


@pytest.mark.parametrize("svc, reference", [
    ("gcc", SVC(kernel="rbf", C=100000.0, gamma="auto")),
    ("gcc-scale", SVC(kernel="rbf", C=100000.0, gamma="scale")),
    ("c1", SVC(kernel="rbf", C=1.0, gamma="scale")),
])
def test_precomputed_gram_predicts_as_an_rbf_svc_on_the_features(svc, reference):
    emb, labels, train, test = _overlapping(11)
    got = svc_fit_predict(emb, labels, svc)(train, test)
    expected = reference.fit(emb[train], labels[train]).predict(emb[test])
    assert np.array_equal(got, expected)
    assert 0.4 < np.mean(expected == labels[test]) < 1.0


def test_precomputed_grid_search_picks_c_and_predicts_as_a_grid_search_on_the_features():
    emb, labels, train, test = _overlapping(12)
    gamma = 1.0 / (emb.shape[1] * emb[train].var())
    inner = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=3)
    reference = GridSearchCV(SVC(kernel="rbf", gamma=gamma), {"C": list(C_GRID)}, cv=inner, scoring="accuracy")
    expected = reference.fit(emb[train], labels[train]).predict(emb[test])
    assert np.array_equal(svc_fit_predict(emb, labels, "grid", seed=3)(train, test), expected)


def test_gcc_svc_uses_c_100000_and_gamma_one_over_n_features():
    assert (SVC_PROTOCOLS["gcc"].C, SVC_PROTOCOLS["gcc"].gamma) == (100000.0, "auto")
    with pytest.raises(ValueError, match="unknown SVC protocol 'rbf'"):
        svc_fit_predict(np.zeros((4, 2)), np.array([0, 1, 0, 1]), "rbf")


def test_graph_classification_is_near_chance_on_random_embeddings():
    emb, labels = random_embeddings(100, 2, 6, seed=4)
    result = evaluate_graph_classification(emb, labels, folds=10, repeats=3, seed=0, svc="c1")
    assert abs(result.mean - 1 / 2) < 0.1


def test_graph_classification_is_deterministic_under_the_seed():
    emb, labels = random_embeddings(25, 2, 6, seed=5)
    a, b, c = (evaluate_graph_classification(emb, labels, folds=3, repeats=1, seed=seed) for seed in (1, 1, 2))
    assert np.array_equal(a.scores, b.scores)
    assert not np.array_equal(a.scores, c.scores)


# ---------------------------------------------------------------- similarity search


def matched_pairs(n: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """emb_2 is emb_1 with its rows permuted; pairs map each graph_1 node to its copy."""
    rng = np.random.default_rng(seed)
    emb_1 = rng.normal(size=(n, dim))
    perm = rng.permutation(n)
    emb_2 = np.empty_like(emb_1)
    emb_2[perm] = emb_1
    return emb_1, emb_2, np.stack([np.arange(n), perm], axis=1)


def test_similarity_search_finds_every_match_of_identical_embeddings():
    emb_1, emb_2, pairs = matched_pairs(200, 16, seed=0)
    results = evaluate_similarity_search(emb_1, emb_2, pairs, dataset="copy")
    assert [r.metric for r in results] == ["hits@20", "hits@40"]
    assert [r.mean for r in results] == [1.0, 1.0]
    assert all(r.std == 0.0 and r.n == 200 for r in results)


def test_similarity_search_random_embeddings_hit_at_rate_k_over_candidates():
    rng = np.random.default_rng(1)
    n_candidates = 400
    pairs = np.stack([np.arange(n_candidates), rng.permutation(n_candidates)], axis=1)
    hits = pair_hits(rng.normal(size=(n_candidates, 16)), rng.normal(size=(n_candidates, 16)), pairs, (20, 40))
    assert hits.mean(axis=0) == pytest.approx([20 / n_candidates, 40 / n_candidates], abs=0.035)


def test_similarity_search_candidates_are_only_the_paired_graph_2_nodes():
    emb_1, emb_2, pairs = matched_pairs(30, 8, seed=2)
    # Unpaired graph_2 nodes equal to every query would outrank the true match if they were candidates.
    decoys = np.repeat(emb_1.mean(axis=0, keepdims=True), 100, axis=0)
    hits = pair_hits(emb_1, np.vstack([emb_2, decoys]), pairs, (1,))
    assert hits.mean() == 1.0


def test_true_match_ranked_21st_misses_hits_at_20_and_counts_at_40():
    # Candidate j has cosine 1 - j / 100 with the query, so it is ranked j + 1; pairing the query with
    # every candidate makes all of them part of the candidate set.
    cos = 1.0 - np.arange(50) / 100.0
    emb_2 = np.stack([cos, np.sqrt(1.0 - cos**2)], axis=1)
    pairs = np.stack([np.zeros(50, dtype=np.int64), np.arange(50)], axis=1)
    hits = pair_hits(np.array([[1.0, 0.0]]), emb_2, pairs, (20, 40))
    assert hits[19].tolist() == [1.0, 1.0]
    assert hits[20].tolist() == [0.0, 1.0]
    assert hits[40].tolist() == [0.0, 0.0]


def test_tied_candidates_count_by_expected_hit():
    # The true match ties with 3 other candidates right at the cut-off: 1 of 4 orders puts it in the top 1.
    emb_2 = np.array([[1.0, 0.0]] * 4 + [[0.0, 1.0]] * 6)
    pairs = np.array([[0, j] for j in range(10)])
    hits = pair_hits(np.array([[1.0, 0.0]]), emb_2, pairs, (1, 2, 4))
    assert hits[0].tolist() == pytest.approx([0.25, 0.5, 1.0])


def test_all_zero_embedding_rows_do_not_produce_nan():
    emb_1, emb_2, pairs = matched_pairs(30, 4, seed=3)
    emb_1[0] = 0.0
    hits = pair_hits(emb_1, emb_2, pairs, (20, 40))
    assert np.isfinite(hits).all() and hits[0].tolist() == pytest.approx([20 / 30, 1.0])  # ties with all 30


def test_bootstrap_se_is_seeded_and_close_to_the_analytic_standard_error():
    values = (np.arange(400) % 4 == 0).astype(float)  # p = 0.25
    a = bootstrap_se(values, np.random.default_rng(0))
    assert a == bootstrap_se(values, np.random.default_rng(0))
    assert a == pytest.approx(np.sqrt(0.25 * 0.75 / 400), rel=0.15)


def test_similarity_search_std_is_labelled_as_bootstrap_standard_error():
    rng = np.random.default_rng(4)
    pairs = np.stack([np.arange(100), rng.permutation(100)], axis=1)
    results = evaluate_similarity_search(rng.normal(size=(100, 8)), rng.normal(size=(100, 8)), pairs, seed=5)
    assert all("bootstrap s.e. over 100 query pairs" in r.std_kind for r in results)
    assert all(r.std > 0 for r in results)


def test_out_of_range_pairs_name_the_graph_and_its_size():
    emb_1, emb_2, pairs = matched_pairs(10, 4, seed=5)
    with pytest.raises(ValueError, match="graph_2 has 9 embedding rows"):
        pair_hits(emb_1, emb_2[:9], pairs, (20,))


def test_similarity_cut_offs_below_one_are_refused():
    emb = np.eye(4)
    pairs = np.stack([np.arange(4), np.arange(4)], axis=1)
    with pytest.raises(ValueError, match=r"--ks: every cut-off k must be >= 1, got \[20, 0\]"):
        evaluate_similarity_search(emb, emb, pairs, ks=(20, 0))
