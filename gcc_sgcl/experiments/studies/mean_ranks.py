"""The paper's mean ranks (its Fig. 3, which it calls a rank test): each entrant's rank per frozen column and its
mean rank over the datasets, as a figure and a table with the seeds behind every rank. Mean ranks alone test
nothing: the Friedman test, the Nemenyi critical difference and the Bayesian signed-rank test are
:mod:`~gcc_sgcl.experiments.studies.over_datasets`.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from gcc_sgcl.experiments.rows import CLASSICAL_MODE
from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, SIMILARITY, Rows
from gcc_sgcl.experiments.studies.markdown import pyplot, label, markdown_table, save_figure, write_csv

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

RANK_MIN_SEEDS = 3  # seeds a pre-trained method needs on a column to be ranked there


def average_ranks(scores: dict[str, float]) -> dict[str, float]:
    """Rank of each key by its score, 1 for the highest; tied scores share the mean of the ranks they span.

    >>> average_ranks({"a": 0.7, "b": 0.9, "c": 0.7, "d": 0.5})
    {'a': 2.5, 'b': 1.0, 'c': 2.5, 'd': 4.0}
    """
    order = sorted(scores, key=lambda k: -scores[k])
    ranks, i = {}, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in order[i:j + 1]:
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    return {k: ranks[k] for k in scores}


@dataclass(frozen=True)
class Ranked:
    """One entrant of the mean ranks: a method in one mode (``none`` for a training-free row), its rank on each
    column where it is ranked (column → (rank, seeds behind its mean, that mean)) and its mean rank over the
    datasets it is ranked on, each dataset weighing once (a dataset's metrics' ranks averaged first)."""

    method: str
    mode: str
    ranks: dict[tuple[str, str, str], tuple[float, int, float]]
    mean_rank: float
    datasets: int


@dataclass(frozen=True)
class MeanRanks:
    """The paper's mean ranks (its Fig. 3) on the frozen columns: the columns, every entrant ranked on at least one
    of them (complete entrants first, each group by mean rank) and the number of datasets."""

    columns: list[tuple[str, str, str]]
    entrants: list[Ranked]
    datasets: int

    def complete(self, entrant: Ranked) -> bool:
        """Whether ``entrant`` is ranked on every dataset (only such mean ranks compare with each other)."""
        return entrant.datasets == self.datasets


def mean_ranks(rows: Rows, modes: Sequence[str], tasks: Sequence[str], methods: Sequence[str],
              min_seeds: int = RANK_MIN_SEEDS) -> MeanRanks:
    """Rank every entrant on every column of ``tasks`` by its mean over seeds (:func:`average_ranks`: 1 = best,
    ties share). Entrants: each of ``methods`` (pre-trained) in each of ``modes``, on the columns where it has at
    least ``min_seeds`` seeds, and every training-free row (one seed) where it has one. An entrant's mean rank is
    over the datasets it is ranked on; entrants ranked on every dataset come first.

    >>> from gcc_sgcl.experiments.rows import ResultRow
    >>> def r(m, mode, d, x, seed=0):
    ...     return ResultRow(method=m, mode=mode, seed=seed, dataset=d, task="graph_classification",
    ...                      metric="accuracy", mean=x, std=0.0, std_kind="", n=1, protocol="p")
    >>> rows = Rows([r(m, "e2e", d, x, s) for m, d, x in [("gcc", "a", 0.8), ("gcc", "b", 0.6), ("sgcl", "a", 0.7),
    ...             ("sgcl", "b", 0.6)] for s in range(3)] + [r("structural", "none", "a", 0.75)])
    >>> test = mean_ranks(rows, ["e2e"], ["graph_classification"], ["gcc", "sgcl"])
    >>> [(e.method, e.mean_rank, e.datasets) for e in test.entrants]
    [('gcc', 1.25, 2), ('sgcl', 2.25, 2), ('structural', 2.0, 1)]
    """
    columns = rows.columns(tasks)
    entrants = [(m, mode) for mode in modes for m in methods] + [(m, CLASSICAL_MODE)
                                                                 for m in rows.methods(classical=True)]
    ranked: dict[tuple[str, str], dict[tuple[str, str, str], tuple[float, int, float]]] = defaultdict(dict)
    for column in columns:
        means, seeds = {}, {}
        for method, mode in entrants:
            scores = rows.seeds(method, mode, *column)
            if scores and (mode == CLASSICAL_MODE or len(scores) >= min_seeds):
                means[method, mode], seeds[method, mode] = float(np.mean(list(scores.values()))), len(scores)
        for entrant, rank in average_ranks(means).items():
            ranked[entrant][column] = (rank, seeds[entrant], means[entrant])
    out = []
    for (method, mode), by_column in ranked.items():
        per_dataset: dict[str, list[float]] = defaultdict(list)
        for (dataset, _, _), (rank, _, _) in by_column.items():
            per_dataset[dataset].append(rank)
        out.append(Ranked(method, mode, dict(by_column), float(np.mean([np.mean(v) for v in per_dataset.values()])),
                          len(per_dataset)))
    n_datasets = len(dict.fromkeys(d for d, _, _ in columns))
    out.sort(key=lambda e: (e.datasets != n_datasets, e.mean_rank))
    return MeanRanks(columns, out, n_datasets)


def entrant_name(method: str, mode: str) -> str:
    """A rank-test entrant's name: the method with its mode, or marked training-free.

    >>> entrant_name("sgcl", "moco"), entrant_name("prone", "none")
    ('sgcl (MoCo)', 'prone (training-free)')
    """
    return f"{method} ({'training-free' if mode == 'none' else {'moco': 'MoCo', 'e2e': 'E2E'}.get(mode, mode)})"


def rank_section(test: MeanRanks, png: Path, csv_path: Path) -> str:
    """The mean ranks: every entrant's rank per column with the seeds behind it, and its mean rank over the datasets
    it is ranked on, as Markdown, CSV (one line per entrant and column, and one per entrant for the mean) and the
    dot plot ``png``."""
    if not test.entrants:
        return "_no rows to rank_"
    many = {d for d, _, _ in test.columns if sum(c[0] == d for c in test.columns) > 1}
    titles = [f"{label(d)} {m}" if d in many else label(d) for d, _, m in test.columns]
    flat = [[e.method, e.mode, d, m, e.ranks[(d, t, m)][1], e.ranks[(d, t, m)][2], e.ranks[(d, t, m)][0]]
            for e in test.entrants for (d, t, m) in test.columns if (d, t, m) in e.ranks]
    flat += [[e.method, e.mode, "mean over datasets", "", "", "", e.mean_rank] for e in test.entrants]
    write_csv(csv_path, ["method", "mode", "dataset", "metric", "seeds", "mean_score", "rank"], flat)
    plot_ranks(test, png)
    body = []
    for e in test.entrants:
        cells = [f"{e.ranks[c][0]:g} ({e.ranks[c][1]})" if c in e.ranks else "–" for c in test.columns]
        mean = f"{e.mean_rank:.2f}" if test.complete(e) else f"({e.mean_rank:.2f})"
        body.append([entrant_name(e.method, e.mode), mean, f"{e.datasets} of {test.datasets}", *cells])
    return markdown_table(["method", "mean rank", "datasets", *titles], body)


def plot_ranks(test: MeanRanks, png: Path) -> None:
    """Each entrant's rank on every column (dots, coloured by task) and its mean rank (diamond), entrants top to
    bottom in the table's order; hollow diamonds: entrants ranked on some datasets only."""
    plt = pyplot()
    names = [entrant_name(e.method, e.mode) for e in test.entrants]
    fig, ax = plt.subplots(figsize=(9.0, 0.34 * len(names) + 1.6))
    colours = {"node_classification": "tab:blue", "graph_classification": "tab:orange",
               "similarity_search": "tab:green"}
    offsets = np.linspace(-0.25, 0.25, len(test.columns)) if len(test.columns) > 1 else np.zeros(1)
    seen = set()
    for y, e in enumerate(test.entrants):
        for off, column in zip(offsets, test.columns):
            if column in e.ranks:
                task = column[1]
                ax.plot(e.ranks[column][0], y + off, "o", color=colours.get(task, "grey"), markersize=3.5, alpha=0.7,
                        label=None if task in seen else task.replace("_", " "))
                seen.add(task)
        full = test.complete(e)
        ax.plot(e.mean_rank, y, "D", markersize=7, markerfacecolor="black" if full else "white",
                markeredgecolor="black", zorder=3, label=None if "mean" in seen or not full else "mean rank")
        if full:
            seen.add("mean")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("rank (1 = best)")
    ax.set_title(f"Mean ranks over {len(test.columns)} frozen columns ({test.datasets} datasets); hollow diamond: "
                 "ranked on some datasets only", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, png, dpi=120)


def sections(t: Tables) -> list[str]:
    """The paper's mean ranks (its Fig. 3) on every frozen column: ``mean_ranks.png`` and its table; the pre-trained
    entrants are the tables' presets (:attr:`~gcc_sgcl.experiments.studies.selection.Tables.presets`: unjoined, no
    bracketed settings)."""
    rows, modes, folder = t.rows, t.modes, t.folder
    test = mean_ranks(rows, modes, CLASSIFICATION + SIMILARITY, t.presets)
    png = folder / "mean_ranks.png"
    text = rank_section(test, png, folder / "mean_ranks.csv")
    return ["## Mean ranks (the paper's Fig. 3; frozen encoders, every column)",
            "Mean ranks only, as the paper's Fig. 3 (which calls them a rank test): they test nothing; the "
            "Friedman test, the Nemenyi critical difference and the Bayesian signed-rank test follow in \"Tests over "
            "datasets\". As the paper's Fig. 3: on each frozen column (classification and similarity search, each HITS@k its own "
            "column) the entrants are ranked by their mean over seeds, 1 = best, tied means sharing the mean of "
            "their ranks; an entrant's mean rank averages its ranks over the datasets it is ranked on, each dataset "
            "once (a similarity dataset's two HITS@k ranks averaged first). Entrants: the presets of the tables "
            f"(`gcc`, `sgcl` and the contrastive baselines) in each training mode, on the columns where they have "
            f"at least {RANK_MIN_SEEDS} seeds, and every training-free row (one seed: deterministic, or seed 0); "
            "bracketed variants (other c, k = 64), joined `… ⊕ structural` rows, the ablation and pair presets and "
            "`random init` (a control, not a method) do not enter. Each cell gives the rank and, in brackets, the "
            "seeds behind the mean it ranks. Mean ranks compare only between entrants ranked on every dataset; the "
            "task-specific training-free rows (node-level `prone` and `graphwave`, graph-level rows, similarity "
            "rows) are ranked on their own columns only, their mean rank in brackets. A rank says nothing about "
            "the size of a difference or its noise: the tables and their tests above do.",
            *([f"![mean ranks]({t.link(png)})"] if test.entrants else []), text]
