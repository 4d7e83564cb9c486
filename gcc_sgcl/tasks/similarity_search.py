"""Top-k similarity search between two graphs (GCC's Panther/AMiner co-author task), HITS@20 and HITS@40.

    python -m gcc_sgcl.tasks.similarity_search --load-path saved/run --hidden 64 --dataset kdd_icdm
    python -m gcc_sgcl.tasks.similarity_search --load-path saved/run --hidden 64 --dataset a.edgelist \
        b.edgelist --pairs pairs.txt

The embeddings file of a registered similarity dataset holds graph_1's node rows followed by graph_2's; two
graphs given by path have one embeddings file each (``<stem>.npy``, as ``generate.sh`` writes for a path),
and the pairs file names nodes by their ids in the two graph files.
"""
from __future__ import annotations

import argparse
from typing import Callable, Sequence

import numpy as np

from gcc_sgcl.cli import user_errors
from gcc_sgcl.config import InputConfig
from gcc_sgcl.settings import from_args
from gcc_sgcl.tasks.commands import run_datasets, task_parser
from gcc_sgcl.tasks.embeddings import check_ids, check_rows, checked_embeddings, load_embeddings
from gcc_sgcl.tasks.records import TaskResult, with_embeddings
from gcc_sgcl.tasks.settings import EvalConfig, TaskConfig

TASK = "similarity_search"
N_BOOTSTRAP = 1000
# Scores within this of the true match's score count as ties. Nodes with identical neighbourhoods get
# identical embeddings, yet their dot products may differ in the last bits depending on BLAS blocking.
TIE_ATOL = 1e-9
_QUERY_CHUNK = 1024  # bounds the (queries x candidates) score matrix held at once


def _unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm in float64; all-zero rows stay zero (GCC would divide by zero)."""
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def pair_hits(emb_1: np.ndarray, emb_2: np.ndarray, pairs: np.ndarray, ks: Sequence[int]) -> np.ndarray:
    """``(m, len(ks))`` hit@k of each ground-truth pair ``(a, b)``, in [0, 1].

    As GCC: rows are L2-normalised, the candidates are the distinct graph_2 nodes of ``pairs[:, 1]``, and
    ``emb_1[a]`` scores each candidate by dot product; hit@k is 1 when ``b`` is among the top k. Ties with
    ``b``'s score (GCC's ``argsort`` broke them arbitrarily) count by their expected value under a uniformly
    random tie order: with ``g`` candidates strictly better and ``t`` others tied, hit@k =
    ``clip((k - g) / (t + 1), 0, 1)``.
    """
    pairs = np.asarray(pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
        raise ValueError(f"pairs must be an (m, 2) integer array, got shape {pairs.shape} dtype {pairs.dtype}")
    if emb_1.ndim != 2 or emb_2.ndim != 2 or emb_1.shape[1] != emb_2.shape[1]:
        raise ValueError(f"emb_1 {emb_1.shape} and emb_2 {emb_2.shape} must be 2-D with the same hidden size")
    for col, emb, graph in ((0, emb_1, "graph_1"), (1, emb_2, "graph_2")):
        if len(pairs) and (pairs[:, col].min() < 0 or pairs[:, col].max() >= len(emb)):
            raise ValueError(
                f"pairs[:, {col}] holds ids in [{pairs[:, col].min()}, {pairs[:, col].max()}] but {graph} has "
                f"{len(emb)} embedding rows"
            )
    candidates, true_col = np.unique(pairs[:, 1], return_inverse=True)
    cand = _unit_rows(emb_2)[candidates]
    queries = _unit_rows(emb_1)[pairs[:, 0]]
    ks_arr = np.asarray(ks, dtype=np.float64)
    hits = np.empty((len(pairs), len(ks_arr)))
    for start in range(0, len(pairs), _QUERY_CHUNK):
        rows = slice(start, start + _QUERY_CHUNK)
        scores = queries[rows] @ cand.T
        true = scores[np.arange(scores.shape[0]), true_col[rows]][:, None]
        better = (scores > true + TIE_ATOL).sum(axis=1)
        tied_others = (np.abs(scores - true) <= TIE_ATOL).sum(axis=1) - 1
        hits[rows] = np.clip((ks_arr[None, :] - better[:, None]) / (tied_others[:, None] + 1), 0.0, 1.0)
    return hits


def bootstrap_se(values: np.ndarray, rng: np.random.Generator, resamples: int = N_BOOTSTRAP) -> float:
    """Bootstrap standard error of ``values.mean()`` (resampling the values with replacement)."""
    chunk = max(1, min(resamples, 10**7 // max(1, len(values))))  # cap memory at ~10^7 indices per draw
    means = []
    for done in range(0, resamples, chunk):
        idx = rng.integers(0, len(values), size=(min(chunk, resamples - done), len(values)))
        means.append(values[idx].mean(axis=1))
    return float(np.concatenate(means).std(ddof=1))


def evaluate_similarity_search(
    emb_1: np.ndarray,
    emb_2: np.ndarray,
    pairs: np.ndarray,
    ks: Sequence[int] = (20, 40),
    seed: int = 0,
    dataset: str = "",
) -> list[TaskResult]:
    """HITS@k for each ``k`` in ``ks`` (see ``pair_hits``); one ``TaskResult`` per k.

    ``scores`` are the per-pair hits, ``mean`` is HITS@k and ``std`` the bootstrap standard error of that
    mean over query pairs (1000 resamples from ``numpy.random.default_rng(seed)``).

    >>> rng = np.random.default_rng(0)
    >>> e1 = rng.normal(size=(50, 8))
    >>> pairs = np.stack([np.arange(50), rng.permutation(50)], axis=1)
    >>> e2 = np.empty_like(e1); e2[pairs[:, 1]] = e1[pairs[:, 0]]
    >>> [r.mean for r in evaluate_similarity_search(e1, e2, pairs)]
    [1.0, 1.0]
    """
    if any(k < 1 for k in ks):
        raise ValueError(f"--ks: every cut-off k must be >= 1, got {list(ks)}")
    hits = pair_hits(emb_1, emb_2, pairs, ks)
    rng = np.random.default_rng(seed)
    n_candidates = len(np.unique(np.asarray(pairs)[:, 1]))
    return [
        TaskResult(
            task=TASK,
            dataset=dataset,
            metric=f"hits@{k}",
            scores=hits[:, i],
            mean=float(hits[:, i].mean()),
            std=bootstrap_se(hits[:, i], rng),
            std_kind=f"bootstrap s.e. over {len(hits)} query pairs, {N_BOOTSTRAP} resamples",
            n=len(hits),
            protocol=f"cosine top-{k} among {n_candidates} graph_2 candidates, ties by expected value",
            seed=seed,
        )
        for i, k in enumerate(ks)
    ]


def command_line() -> argparse.ArgumentParser:
    """The command line (:func:`~gcc_sgcl.tasks.commands.task_parser`)."""
    return task_parser(TASK, "Top-k similarity search on saved embeddings (HITS@k).", ("pairs", "ks"), ("seed",))


def main(argv: Sequence[str] | None = None, loader: Callable | None = None) -> list[TaskResult]:
    """CLI: evaluate ``<load_path>/<dataset>.npy`` for each dataset, or with ``--pairs`` the two graphs given
    by path; ``loader`` defaults to the data layer's ``load_similarity_dataset(name, data_dir[, pairs])``
    (returns ``.name``, ``.graph_1``, ``.graph_2``, ``.pairs`` and ``.ids_1``/``.ids_2`` or None)."""
    parser = command_line()
    args = parser.parse_args(argv)
    where, task, seed = from_args(InputConfig, args), from_args(TaskConfig, args), from_args(EvalConfig, args).seed
    if task.pairs is not None and len(where.dataset) != 2:
        parser.error(f"--pairs needs exactly two graphs as --dataset PATH_1 PATH_2, got {len(where.dataset)}")
    kinds = ("similarity",) if loader is None else ()  # a registered name of another kind is refused before any work
    if loader is None:
        from gcc_sgcl.data import load_similarity_dataset as loader

    def evaluate(name: str | tuple[str, str]) -> list[TaskResult]:
        if isinstance(name, tuple):
            emb_1, emb_2 = (load_embeddings(where.load_path, n, task.hidden) for n in name)
            data = loader(name, data_dir=where.data_dir, pairs=task.pairs)
            for emb, g, ids, n in zip((emb_1, emb_2), (data.graph_1, data.graph_2), (data.ids_1, data.ids_2), name):
                check_rows(emb, where.load_path, n, g.num_nodes(), f"nodes in {n}")
                check_ids(where.load_path, n, ids)
            evaluated = [(name[0], [data.graph_1]), (name[1], [data.graph_2])]
        else:
            emb = load_embeddings(where.load_path, name, task.hidden)
            data = loader(name, data_dir=where.data_dir)
            n1, n2 = data.graph_1.num_nodes(), data.graph_2.num_nodes()
            check_rows(emb, where.load_path, name, n1 + n2, f"nodes in {name} ({n1} + {n2})")
            emb_1, emb_2 = emb[:n1], emb[n1:]
            evaluated = [(name, [data.graph_1, data.graph_2])]
        source = checked_embeddings(where.load_path, evaluated)
        results = evaluate_similarity_search(emb_1, emb_2, data.pairs, ks=task.ks, seed=seed, dataset=data.name)
        return with_embeddings(results, source)

    datasets = [tuple(where.dataset)] if task.pairs is not None else where.dataset
    with user_errors():
        return run_datasets(TASK, where.load_path, datasets, evaluate, kinds)

if __name__ == "__main__":
    main()
