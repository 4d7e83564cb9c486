"""How stable an embedding row is: the distance between a node's rows under two view seeds, and under two numberings
of the same graph, relative to the rows' norm, at each number of inference views.

    python -m gcc_sgcl.experiments.stability --encoders saved/pretrained/gcc_... saved/pretrained/sgcl-... \
        --datasets usa_airport h-index --copies 2 8 32 64 --out docs/results/stability.csv

A row is the mean over ``copies`` random RWR views (:meth:`gcc_sgcl.api.Encoder.embed_nodes`); its randomness is
keyed by the view seed and the node's position, so another seed, or the same graph with its nodes numbered in
another order (a file read in another order, a networkx graph), gives other walks. Both distances shrink as more
views are averaged; the report states them per view count.

One name, one idea at 2 layers: :mod:`gcc_sgcl.experiments.stability` (the measurement),
:mod:`gcc_sgcl.experiments.studies.stability` (its report table).
"""
from __future__ import annotations

import argparse
import csv
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gcc_sgcl.cli import user_errors
from gcc_sgcl.fileio import atomic_target
from gcc_sgcl.settings import OneLineParser, Settings, add_arguments, at_least, from_args, setting


@dataclass
class StabilityConfig(Settings):
    """How much an embedding row moves with the view seed and the node numbering
    (``python -m gcc_sgcl.experiments.stability``)."""

    encoders: list[str] = setting(help="encoder folders (e.g. saved/pretrained/<name>)")
    datasets: list[str] = setting(["usa_airport", "h-index"], "node datasets")
    copies: list[int] = setting([2, 8, 32, 64], "inference view counts", valid=at_least(1))
    data_dir: str | None = setting(None, "data root (default: $GCC_SGCL_DATA, else ./data)")
    out: str = setting("docs/results/stability.csv", "CSV file to write")


FIELDS = ("encoder", "dataset", "copies", "nodes", "seed_distance", "numbering_distance", "seconds", "threads")
"""The columns of ``stability.csv``; ``threads``: the embedding's model threads plus its view-building workers (its
:attr:`~gcc_sgcl.api.Encoder.last_plan`; rows measured before streamed embedding hold the torch thread count)."""


def relative_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over rows of ``‖a_i − b_i‖`` divided by the mean row norm of ``a`` and ``b``.

    >>> relative_distance(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]))
    1.4142135623730951
    """
    norm = (np.linalg.norm(a, axis=1).mean() + np.linalg.norm(b, axis=1).mean()) / 2
    return float(np.linalg.norm(a - b, axis=1).mean() / norm)


def stability(encoder, graph, copies: int, seed: int = 0) -> tuple[float, float, float]:
    """(seed distance, numbering distance, seconds) of ``encoder``'s rows of every node of the DGL ``graph``: views
    of seed ``seed`` against seed ``seed + 1``, and the graph against itself with its nodes in a random order (drawn
    from ``seed``), rows mapped back to the same nodes; seconds: the wall time of embedding every node once."""
    import dgl

    start = time.perf_counter()
    base = encoder.embed_nodes(graph, seed=seed, copies=copies)
    seconds = time.perf_counter() - start
    other_seed = encoder.embed_nodes(graph, seed=seed + 1, copies=copies)
    order = np.random.default_rng(seed).permutation(graph.num_nodes())  # new id of node v: position of v in order
    new_id = np.empty_like(order)
    new_id[order] = np.arange(len(order))
    src, dst = (t.numpy() for t in graph.edges())
    renumbered = dgl.graph((new_id[src], new_id[dst]), num_nodes=graph.num_nodes())
    other_order = encoder.embed_nodes(renumbered, seed=seed, copies=copies)[new_id]
    return relative_distance(base, other_seed), relative_distance(base, other_order), seconds


def measure(encoders: list[str], datasets: list[str], copies: list[int], data_dir: str | None,
            out: Path) -> list[dict]:
    """Every (encoder, dataset, copies) of :func:`stability`, written to ``out`` (CSV) as each lands, beside the
    measurements ``out`` already holds: one stored for the same (encoder, dataset, copies) is kept, not measured
    again (delete the file to measure afresh), so a run cut off resumes where it stopped. Returns every row of
    ``out``, ordered by encoder, dataset (first seen) and view count."""
    import torch

    from gcc_sgcl.api import load_encoder
    from gcc_sgcl.data import load_any

    rows = read(out)
    done = {key(r) for r in rows}
    todo = [(path, name, c) for path in encoders for name in datasets for c in copies
            if (Path(path).name, name, c) not in done]  # the key() of its row
    print(f"{out}: {len(rows)} measurements stored, {len(todo)} to measure", flush=True)
    graphs = {name: load_any(name, data_dir).graph for name in dict.fromkeys(n for _, n, _ in todo)}  # read once
    loaded = {}
    for path, name, c in todo:
        if path not in loaded:
            loaded[path] = load_encoder(path)
        graph = graphs[name]
        seed_d, order_d, seconds = stability(loaded[path], graph, c)
        plan = loaded[path].last_plan  # the embedding's model threads and view builders
        threads = plan.model + plan.builders if plan else torch.get_num_threads()
        rows = ordered(rows + [dict(zip(FIELDS, (Path(path).name, name, c, graph.num_nodes(), seed_d, order_d,
                                                 seconds, threads)))])
        print(f"{Path(path).name} {name} copies={c}: seed {seed_d:.3f}, numbering {order_d:.3f}, "
              f"{seconds:.1f} s", flush=True)
        write(out, rows)
    return rows


def write(path: Path, rows: list[dict]) -> None:
    """``rows`` as the CSV that :func:`read` reads, through a temporary file."""
    with atomic_target(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def key(row: dict) -> tuple[str, str, int]:
    """What a measurement is of: (encoder folder name, dataset, view count)."""
    return row["encoder"], row["dataset"], row["copies"]


def ordered(rows: list[dict]) -> list[dict]:
    """``rows`` grouped by encoder, then dataset (each in order of first appearance), then by view count.

    >>> [key(r) for r in ordered([{"encoder": "b", "dataset": "x", "copies": 8}, {"encoder": "a", "dataset": "y",
    ...  "copies": 2}, {"encoder": "b", "dataset": "x", "copies": 2}])]
    [('b', 'x', 2), ('b', 'x', 8), ('a', 'y', 2)]
    """
    first = {}
    for r in rows:
        first.setdefault(r["encoder"], len(first))
        first.setdefault((r["encoder"], r["dataset"]), len(first))
    return sorted(rows, key=lambda r: (first[r["encoder"]], first[(r["encoder"], r["dataset"])], r["copies"]))


def read(path: Path) -> list[dict]:
    """The stored measurements (empty without a file; ``seconds`` and ``threads`` None in a file older than them)."""
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return [{**r, "copies": int(r["copies"]), "nodes": int(r["nodes"]), "seed_distance": float(r["seed_distance"]),
                 "numbering_distance": float(r["numbering_distance"]),
                 "seconds": float(r["seconds"]) if r.get("seconds") else None,
                 "threads": int(r["threads"]) if r.get("threads") else None} for r in csv.DictReader(f)]


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point (:class:`StabilityConfig`)."""
    p = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p, StabilityConfig)
    a = from_args(StabilityConfig, p.parse_args(argv))
    with user_errors():
        measure(a.encoders, a.datasets, a.copies, a.data_dir, Path(a.out))


if __name__ == "__main__":
    main()
