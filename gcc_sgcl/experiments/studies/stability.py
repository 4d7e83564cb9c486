"""How far an embedding row moves under another view seed or another numbering of the graph's nodes
(``stability.csv``, measured by :mod:`gcc_sgcl.experiments.stability`): the report's table and the README's
sentence.

One name, one idea at 2 layers: :mod:`gcc_sgcl.experiments.stability` (the measurement),
:mod:`gcc_sgcl.experiments.studies.stability` (its report table).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from gcc_sgcl.experiments.stability import read as read_stability

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

from collections import defaultdict

import numpy as np

from gcc_sgcl.experiments.studies.markdown import and_joined, label, markdown_table


def stability_sentence(rows: list[dict]) -> str:
    """What a user should expect of a row, from the stability measurements: the range over encoders and datasets
    of the distance to the row under another seed or numbering, per view count, in % of the rows' norm.

    >>> print(stability_sentence([{"encoder": "e", "dataset": "usa_airport", "copies": c, "nodes": 5,
    ...                            "seed_distance": d, "numbering_distance": d} for c, d in ((2, 0.25), (8, 0.13))]))
    Another `seed`, or the same graph numbered in another order, moves a row by 25 % of its norm at 2 views and 13 % at 8 views (US-Airport; shipped encoder e).
    """
    if not rows:
        return "How far a row moves is not measured yet (`python -m gcc_sgcl.experiments.stability`)."
    by: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        by[r["copies"]] += [r["seed_distance"], r["numbering_distance"]]

    def span(values: list[float]) -> str:
        low, high = round(100 * min(values)), round(100 * max(values))
        return f"{low} %" if low == high else f"{low}–{high} %"

    joined = and_joined([f"{span(v)} of its norm at {c} views" if i == 0 else f"{span(v)} at {c} views"
                         for i, (c, v) in enumerate(sorted(by.items()))])
    datasets = ", ".join(dict.fromkeys(label(r["dataset"]) for r in rows))
    encoders = ", ".join(dict.fromkeys(r["encoder"] for r in rows))
    return (f"Another `seed`, or the same graph numbered in another order, moves a row by {joined} ({datasets}; "
            f"shipped encoder{'s' if ',' in encoders else ''} {encoders}).{cost_sentence(rows)}")


def ms_per_node(r: dict) -> float | None:
    """Milliseconds of embedding per node in one stability measurement (None where it was not timed)."""
    return None if r.get("seconds") is None else 1000 * r["seconds"] / r["nodes"]


def cost_sentence(rows: list[dict]) -> str:
    """The embedding's cost per node at each view count (median over the timed measurements), with a leading space;
    empty where none was timed.

    >>> print(cost_sentence([{"copies": c, "nodes": 1000, "seconds": s, "threads": 2} for c, s in ((2, 1.0), (8, 4.2))]))
     Embedding costs 1.0 ms per node at 2 views and 4.2 ms at 8 views (4.2× the time of 2 views; 2 threads (model + view builders), one run each).
    >>> print(cost_sentence([{"copies": c, "nodes": 1000, "seconds": 1.0, "threads": t}
    ...                      for c, t in ((2, 1), (8, 2))]).split("; ")[-1])
    1–2 threads (model + view builders), one run each).
    >>> cost_sentence([{"copies": 2, "nodes": 1000, "seconds": 1.0}])  # measured before threads were recorded
    ' Embedding costs 1.0 ms per node at 2 views (one run each).'
    """
    by: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        if (ms := ms_per_node(r)) is not None:
            by[r["copies"]].append(ms)
    if not by:
        return ""
    cost = [(c, float(np.median(v))) for c, v in sorted(by.items())]
    joined = and_joined([f"{ms:.1f} ms per node at {c} views" if i == 0 else f"{ms:.1f} ms at {c} views"
                         for i, (c, ms) in enumerate(cost)])
    (low, first), (high, last) = cost[0], cost[-1]
    ratio = f"{last / first:.1f}× the time of {low} views; " if high != low else ""
    return f" Embedding costs {joined} ({ratio}{_threads_phrase(rows)}one run each)."


def _threads_phrase(rows: list[dict]) -> str:
    """The measurements' threads (model + view builders), e.g. ``"1–2 threads (model + view builders), "``; empty
    for rows measured before the count was kept."""
    counts = sorted({r["threads"] for r in rows if r.get("threads")})
    if not counts:
        return ""
    if counts == [1]:  # too few views to stream: built between forwards
        return "1 thread, "
    span = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return f"{span} threads (model + view builders), "


def stability_table(rows: list[dict]) -> str:
    """The stability measurements (:mod:`gcc_sgcl.experiments.stability`), one line per encoder, dataset and view
    count, distances in % of the rows' norm.

    >>> print(stability_table([{"encoder": "e", "dataset": "usa_airport", "copies": 2, "nodes": 5,
    ...                         "seed_distance": 0.25, "numbering_distance": 0.26}]))
    | encoder | dataset | views | other seed (% of norm) | other numbering (% of norm) | ms per node |
    |---|---|---|---|---|---|
    | e | US-Airport | 2 | 25.0 | 26.0 | – |
    """
    if not rows:
        return "Not measured yet (the command above writes `docs/results/stability.csv`)."
    return markdown_table(["encoder", "dataset", "views", "other seed (% of norm)", "other numbering (% of norm)",
                           "ms per node"],
                          [[r["encoder"], label(r["dataset"]), r["copies"], f"{100 * r['seed_distance']:.1f}",
                            f"{100 * r['numbering_distance']:.1f}",
                            "–" if ms_per_node(r) is None else f"{ms_per_node(r):.2f}"] for r in rows])


def sections(t: Tables) -> list[str]:
    """How far a row moves under another view seed or node numbering (``stability.csv`` beside the rows, measured
    by :mod:`gcc_sgcl.experiments.stability`)."""
    return ["### How much a row moves",
            "The distance between a node's rows under two view seeds, and under two numberings of the same graph "
            "(its nodes in a random order, rows mapped back), relative to the rows' norm, with the shipped seed-0 "
            "encoders: `python -m gcc_sgcl.experiments.stability --encoders saved/pretrained/gcc_e2e_snap5_6000x256_s0 "
            "saved/pretrained/sgcl-c=0.4_e2e_snap5_6000x256_s0 --out docs/results/stability.csv`. Its times are one "
            "wall-clock run of embedding every node once, beside whatever else the machine ran: compare them with each "
            "other, not across machines.",
            stability_table(read_stability(t.folder / "stability.csv"))]
