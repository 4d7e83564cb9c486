"""What the task commands share (``python -m gcc_sgcl.tasks.<task>``): GCC's ``<load_path> <hidden> <datasets...>``
command line (:func:`task_parser`), the loop that evaluates each dataset, prints its table line and logs it to
``results.csv`` (:func:`run_datasets`), and the one entry point of node and graph classification
(:func:`classification_main`).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from gcc_sgcl.cli import PlainHelpParser, user_errors
from gcc_sgcl.config import InputConfig
from gcc_sgcl.data.kinds import KINDS
from gcc_sgcl.engine.threads import processes_line
from gcc_sgcl.fileio import folder_of
from gcc_sgcl.settings import add_arguments, from_args
from gcc_sgcl.tasks.cv import cv_jobs
from gcc_sgcl.tasks.embeddings import (
    check_classes,
    check_embeddings_exist,
    check_ids,
    check_rows,
    checked_embeddings,
    load_embeddings,
)
from gcc_sgcl.tasks.records import RESULTS_FILE, TaskResult, append_results_csv, check_results_csv, with_embeddings
from gcc_sgcl.tasks.settings import EvalConfig, TaskConfig

JOINED_ROWS_HELP = ("Embeddings written by generate.sh --with-structural (each row joined to the structural vector of "
                    "its node or graph, as the tables' '<method> ⊕ structural' rows) are read as they are; --hidden "
                    "is then the encoder's size (their record says how many structural columns follow) or the rows' "
                    "whole width.")


def task_parser(task: str, description: str, fields: Sequence[str], evaluation: Sequence[str],
                choices: dict[str, Iterable[str]] | None = None) -> argparse.ArgumentParser:
    """A task's command line: GCC's ``<load_path> <hidden> <datasets...>`` and the data root
    (:class:`~gcc_sgcl.config.InputConfig`, :class:`~gcc_sgcl.tasks.settings.TaskConfig`), the task's ``fields`` of
    ``TaskConfig`` and its ``evaluation`` settings (:class:`~gcc_sgcl.tasks.settings.EvalConfig`, valid values
    ``choices``)."""
    parser = PlainHelpParser(prog=f"python -m gcc_sgcl.tasks.{task}", description=description,
                                     epilog=JOINED_ROWS_HELP)
    add_arguments(parser, InputConfig, only=("load_path", "dataset", "data_dir"), required=("load_path", "dataset"))
    add_arguments(parser, TaskConfig, only=("hidden", *fields))
    add_arguments(parser, EvalConfig, only=evaluation, choices=choices)
    return parser


def labels_by_dataset(parser: argparse.ArgumentParser, datasets: Sequence[str], labels: Sequence[str]) -> dict:
    """``{dataset: {"labels": file}}`` pairing the ``--labels`` files with the datasets given by path in order
    (a parser error if the counts differ); keyword arguments for the loader."""
    from gcc_sgcl.data import is_dataset_path

    paths = [d for d in datasets if is_dataset_path(d)]
    if labels and len(labels) != len(paths):
        parser.error(f"--labels gives {len(labels)} file(s) for {len(paths)} dataset(s) given by path")
    return {d: {"labels": f} for d, f in zip(paths, labels)}


def run_datasets(
    task: str,
    load_path: str | Path,
    datasets: Sequence[str | tuple[str, str]],
    evaluate: Callable[[str | tuple[str, str]], list[TaskResult]],
    kinds: Sequence[str] = (),
    jobs: int | None = None,
) -> list[TaskResult]:
    """Evaluate each dataset, print a table line per metric as it finishes and log it to ``results.csv``. Checked
    first: the ``results.csv`` header (:func:`~gcc_sgcl.tasks.records.check_results_csv`), given ``kinds``, that each
    dataset is a registered one of those kinds or a path (:func:`~gcc_sgcl.data.check_dataset_names`), and that each
    embeddings file exists, so nothing is printed before an input error. ``jobs`` (the ``--jobs`` flag) puts the
    fold processes in the header line."""
    if kinds:
        from gcc_sgcl.data import check_dataset_names

        check_dataset_names([n for d in datasets for n in (d if isinstance(d, tuple) else (d,))], kinds, "--dataset")
    check_results_csv(folder_of(load_path) / RESULTS_FILE)
    check_embeddings_exist(load_path, [n for d in datasets for n in (d if isinstance(d, tuple) else (d,))])
    threads = "" if jobs is None else "  " + processes_line(cv_jobs(jobs), jobs)
    print(f"{task}  load_path={load_path}{threads}")
    print(f"{'dataset':<16} | {'metric':<9} | mean ± std (%)")
    everything: list[TaskResult] = []
    for name in datasets:
        results = evaluate(name)
        for result in results:
            print(result.line(), flush=True)
        append_results_csv(folder_of(load_path) / RESULTS_FILE, results, load_path)
        everything.extend(results)
    return everything


Classify = Callable[[np.ndarray, np.ndarray, str, EvalConfig], TaskResult]
"""A classification of one dataset's rows, ``(emb, labels, dataset, protocol) -> result``, scoring the labelled rows
(:func:`~gcc_sgcl.tasks.node_classification.node_classification_under`,
:func:`~gcc_sgcl.tasks.graph_classification.graph_classification_under`)."""


def classification_main(parser: argparse.ArgumentParser, task: str, kind: str, classify: Classify,
                        argv: Sequence[str] | None = None, loader: Callable | None = None) -> list[TaskResult]:
    """The command of node or graph classification (``kind``: ``"node"`` or ``"graph"``, as
    :data:`~gcc_sgcl.data.kinds.KINDS` names them): ``argv`` parsed by ``parser`` (:func:`task_parser`), then for each
    dataset ``<load_path>/<dataset>.npy`` is loaded, checked against the dataset (one row per item of the kind, the
    node ids of a file, the record) and scored by ``classify`` (:func:`run_datasets`). ``loader`` defaults to the
    data layer's ``load_<kind>_dataset(name, data_dir[, labels])``, which returns an object with ``.name``, the
    kind's graphs (``.graph`` or ``.graphs``), ``.labels`` (``-1`` for unlabelled items, which are not evaluated)
    and, for nodes, ``.ids`` or None."""
    args = parser.parse_args(argv)
    where, given, p = from_args(InputConfig, args), from_args(TaskConfig, args), from_args(EvalConfig, args)
    labels = labels_by_dataset(parser, where.dataset, given.labels)
    kinds = (kind,) if loader is None else ()  # a registered name of another kind is refused before any work
    loader = loader or _dataset_loader(kind)
    layout = KINDS[kind]

    def evaluate(name: str) -> list[TaskResult]:
        emb = load_embeddings(where.load_path, name, given.hidden)
        data = loader(name, data_dir=where.data_dir, **labels.get(name, {}))
        check_classes(data.labels, labels.get(name, {}).get("labels", name))  # a --labels file by its name
        graphs = layout.graphs(data)
        rows = len(graphs) if layout.per_graph else sum(g.num_nodes() for g in graphs)
        check_rows(emb, where.load_path, name, rows, f"{layout.rows} in {name}")
        check_ids(where.load_path, name, getattr(data, "ids", None))
        source = checked_embeddings(where.load_path, [(name, graphs)])
        return with_embeddings([classify(emb, data.labels, data.name, p)], source)

    with user_errors():
        return run_datasets(task, where.load_path, where.dataset, evaluate, kinds, p.jobs)


def _dataset_loader(kind: str) -> Callable:
    """The data layer's loader of a ``kind`` (``"node"`` or ``"graph"``) dataset."""
    from gcc_sgcl.data import load_graph_dataset, load_node_dataset

    return {"node": load_node_dataset, "graph": load_graph_dataset}[kind]
