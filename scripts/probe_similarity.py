#!/usr/bin/env python
"""Why the demo's similarity column shows SGCL behind GCC: a probe of the shipped encoders on the demo's task.

The demo's similarity task (``synthetic-similarity``) matches each node of a Holme–Kim graph to its copy in a
node-permuted copy with a fraction of edges moved. For the shipped table encoders (E2E, 6000 steps, seeds 0–2) of GCC,
SGCL and SGCL without one stage each, on the demo's generator at 600 nodes, it measures:

- **numbering**: the mean distance between a node's row and its exact copy's row (nothing moved) over the mean
  distance between two rows of the same node drawn with other view seeds; about 1 means the rows do not depend on
  the numbering (``tests/test_demo_similarity.py`` holds it);
- **noise / spacing**: the mean distance between two re-seeded rows of a node over the mean distance from a row to
  its nearest other node's row, at 2 views per row (GCC's protocol, the demo's): above 1, a row's own noise exceeds
  the gap to its neighbour, so the copy is often out-ranked;
- **hits@20** of the copy at 2, 8 and 32 views per row and 0 %, 5 % (the demo's) and 10 % of edges moved.

    .venv/bin/python scripts/probe_similarity.py                       tables on stdout (about 10 min on 2 cores)
    .venv/bin/python scripts/probe_similarity.py --write docs/first_runs.md

Unit-normalised rows, Euclidean distances; ``evaluate_similarity_search`` scores the hits as the demo does.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "saved" / "pretrained"
METHODS = ["gcc", "sgcl-c=0.4", "sgcl-no-align-c=0.4", "sgcl-no-crop-c=0.4", "sgcl-no-filter", "sgcl-no-mask-c=0.4",
           "sgcl-no-reorder-c=0.4"]
SEEDS = (0, 1, 2)
NODES = 600
VIEWS = (2, 8, 32)
MOVED = (0.0, 0.05, 0.10)
MARKER = "<!-- similarity probe -->"


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def nearest_other(rows: np.ndarray) -> np.ndarray:
    """Distance from each row to the nearest other row."""
    sq = np.sum(rows**2, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2 * rows @ rows.T
    np.fill_diagonal(d2, np.inf)
    return np.sqrt(np.maximum(d2.min(axis=1), 0))


def probe(method: str, seed: int, full: bool) -> dict:
    import gcc_sgcl
    from gcc_sgcl.data.synthetic import build_similarity_pair
    from gcc_sgcl.tasks.similarity_search import evaluate_similarity_search

    enc = gcc_sgcl.load_encoder(SHIPPED / f"{method}_e2e_snap5_6000x256_s{seed}")
    out = {}
    exact = build_similarity_pair(num_nodes=NODES, rewire=0.0)
    perm = exact.pairs[:, 1]
    a = unit(enc.embed_nodes(exact.graph_1, copies=2, seed=0))
    b = unit(enc.embed_nodes(exact.graph_1, copies=2, seed=1))
    copy = unit(enc.embed_nodes(exact.graph_2, copies=2, seed=0))[perm]
    reseed = np.linalg.norm(a - b, axis=1).mean()
    out["numbering"] = np.linalg.norm(a - copy, axis=1).mean() / reseed
    out["noise/spacing"] = reseed / nearest_other(a).mean()
    for moved in MOVED if full else (0.05,):
        pair = build_similarity_pair(num_nodes=NODES, rewire=moved)
        for views in VIEWS if full else (2,):
            e1 = enc.embed_nodes(pair.graph_1, copies=views, seed=0)
            e2 = enc.embed_nodes(pair.graph_2, copies=views, seed=0)
            out[f"hits@20 {views}v {moved:.0%}"] = evaluate_similarity_search(e1, e2, pair.pairs)[0].mean
    return out


def mean_sd(values: list[float], scale: float = 1.0) -> str:
    v = np.asarray(values) * scale
    return f"{v.mean():.2f} ± {v.std(ddof=1):.2f}" if len(v) > 1 else f"{v[0]:.2f}"


def tables(results: dict[str, list[dict]]) -> str:
    lines = ["Mean ± sd over seeds 0–2 of the shipped encoders (E2E, 6000 steps); 600-node pair of the demo's generator.",
             "", "| encoder | numbering (copy / re-seed) | noise / spacing at 2 views | hits@20, 2 views, 5 % moved |",
             "|---|---|---|---|"]
    for method, runs in results.items():
        lines.append(f"| {method} | {mean_sd([r['numbering'] for r in runs])} | "
                     f"{mean_sd([r['noise/spacing'] for r in runs])} | "
                     f"{mean_sd([r['hits@20 2v 5%'] for r in runs], 100)} |")
    full = {m: runs for m, runs in results.items() if "hits@20 32v 0%" in runs[0]}
    lines += ["", "hits@20 (%) of the copy against views per row and edges moved:", "",
              "| encoder | moved | " + " | ".join(f"{v} views" for v in VIEWS) + " |",
              "|---|---|" + "---|" * len(VIEWS)]
    for method, runs in full.items():
        for moved in MOVED:
            cells = [mean_sd([r[f"hits@20 {v}v {moved:.0%}"] for r in runs], 100) for v in VIEWS]
            lines.append(f"| {method} | {moved:.0%} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", help="a markdown file whose part after the marker line is replaced")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    results = {}
    for method in METHODS:
        results[method] = []
        for seed in SEEDS:
            results[method].append(probe(method, seed, full=method in ("gcc", "sgcl-c=0.4")))
            print(f"{method} s{seed}: {results[method][-1]}", file=sys.stderr)
    text = tables(results)
    if args.write:
        path = Path(args.write)
        head = path.read_text().split(MARKER)[0]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(f"{head}{MARKER}\n\n{text}\n")
        os.replace(tmp, path)
    print(text)


if __name__ == "__main__":
    main()
