"""What each stage of a method's pair pipeline does to the views, measured on a corpus: how often the
similar / diverse filter finds a passing pair (and in how many tries), and for every later step the share of
query and key views it changes and the nodes they keep.

A step *changes* a view when the view's nodes, edges or positional embedding differ from what the step was given
(a crop that drops nothing, a mask of zero columns or a reorder whose order is the identity change nothing).
Pairs are drawn exactly as pre-training draws them (:meth:`~gcc_sgcl.augment.pipeline.PairPipeline.stages`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import dgl
import numpy as np

from gcc_sgcl.augment.base import Both, PairTransform, Split, Transform
from gcc_sgcl.augment.pipeline import PairPipeline
from gcc_sgcl.bench.sampler import pair_dataset
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.dataset import sampling_threads


@dataclass
class StageEffect:
    """One step of the pipeline over all measured pairs (one query and one key view each): views changed and
    node counts."""

    name: str
    changed_q: int = 0
    changed_k: int = 0
    nodes_before: int = 0
    nodes_after: int = 0


@dataclass
class Effects:
    """The filter's outcome (pair counts, all 0 when ``has_filter`` is false) and every step's
    :class:`StageEffect`."""

    pairs: int = 0
    filtered: int = 0
    passed_first: int = 0
    passed_later: int = 0
    tries: int = 0  # candidates drawn for the filtered pairs
    has_filter: bool = False
    steps: list[StageEffect] = field(default_factory=list)


def step_name(step: PairTransform) -> str:
    """The transforms a step applies, through its wrappers (view transforms, ``Both``, ``Split``, held as
    attributes or lists of them) and without the identity: ``"SpectralCrop"``, ``"Mask or Reorder"``."""
    def leaves(t: object) -> list[str]:
        inner = [x for v in vars(t).values() for x in (v if isinstance(v, list) else [v])
                 if isinstance(x, (Transform, Both, Split))]
        return [n for x in inner for n in leaves(x)] if inner else [type(t).__name__]

    names = [n for n in leaves(step) if n != "Identity"]
    return " or ".join(dict.fromkeys(names)) or "Identity"


def changed_views(before: ViewBatch, after: ViewBatch) -> np.ndarray:
    """``(B,)`` whether each view's node ids, edges or positional embedding differ between the two batches."""
    diff = (before.num_nodes != after.num_nodes) | (before.num_edges != after.num_edges)
    same = np.flatnonzero(~diff)
    b, a = before.select(same), after.select(same)
    node_diff = (b.nid != a.nid) | np.any(b.pe != a.pe, axis=1)
    edge_diff = (b.src != a.src) | (b.dst != a.dst)
    diff[same] |= np.bincount(b.node_view, weights=node_diff, minlength=len(same)) > 0
    diff[same] |= np.bincount(b.edge_view, weights=edge_diff, minlength=len(same)) > 0
    return diff


def measure_effects(graphs: Sequence[dgl.DGLGraph], methods: Sequence[str], batch_size: int, batches: int,
                    seed: int = 0) -> dict[str, Effects]:
    """``{method: Effects}`` over ``batches`` batches of ``batch_size`` pairs (items ``0, 1, …`` of seed ``seed``)."""
    out = {}
    for method in methods:
        ds = pair_dataset(graphs, method, batch_size * batches, seed)
        if not isinstance(ds.pipeline, PairPipeline):  # GCC's plain pairs: nothing to measure
            out[method] = Effects(pairs=batch_size * batches)
            continue
        eff = Effects(has_filter=ds.pipeline.filter is not None,
                      steps=[StageEffect(step_name(s)) for s in ds.pipeline.steps])
        with sampling_threads():
            for b in range(batches):
                starts, rng = ds.item_keys(range(b * batch_size, (b + 1) * batch_size))
                stages = list(ds.pipeline.stages(ds.sampler, starts, rng))
                _, _, _, outcome = stages[0]
                eff.pairs += batch_size
                if outcome is not None:
                    filtered = outcome.filtered
                    eff.filtered += int(filtered.sum())
                    eff.passed_first += int((filtered & outcome.passed & (outcome.tries == 1)).sum())
                    eff.passed_later += int((filtered & outcome.passed & (outcome.tries > 1)).sum())
                    eff.tries += int(outcome.tries[filtered].sum())
                for st, (_, q0, k0, _), (_, q1, k1, _) in zip(eff.steps, stages, stages[1:]):
                    st.changed_q += int(changed_views(q0, q1).sum())
                    st.changed_k += int(changed_views(k0, k1).sum())
                    st.nodes_before += int(q0.num_nodes.sum() + k0.num_nodes.sum())
                    st.nodes_after += int(q1.num_nodes.sum() + k1.num_nodes.sum())
        out[method] = eff
    return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "–"


def format_effects(results: dict[str, Effects], batch_size: int, batches: int) -> str:
    """Two Markdown tables: the filter's outcome per method, and each step's share of changed views."""
    filt = ["| method | pairs | filtered | of those: pass at 1st try | pass after redraws | never pass (last kept) "
            "| mean tries |", "|---|---|---|---|---|---|---|"]
    steps = ["| method | step | query views changed | key views changed | nodes kept |", "|---|---|---|---|---|"]
    for method, e in results.items():
        if e.has_filter:
            never = e.filtered - e.passed_first - e.passed_later
            filt.append(f"| {method} | {e.pairs} | {_pct(e.filtered, e.pairs)} | {_pct(e.passed_first, e.filtered)} | "
                        f"{_pct(e.passed_later, e.filtered)} | {_pct(never, e.filtered)} | "
                        + (f"{e.tries / e.filtered:.2f}" if e.filtered else "–") + " |")
        for i, st in enumerate(e.steps):
            steps.append(f"| {method} | {i}: {st.name} | {_pct(st.changed_q, e.pairs)} | "
                         f"{_pct(st.changed_k, e.pairs)} | {_pct(st.nodes_after, st.nodes_before)} |")
    head = (f"{batches} batches of {batch_size} pairs per method, drawn as pre-training draws them; a step changes a "
            "view when its node ids, edges or positional embedding differ from the step's input; nodes kept: nodes "
            "after / before the step, over all views")
    return "\n".join([head, "", "filter (similar / diverse, before the views are built):", *filt, "",
                      "steps after the filter, in order:", *steps])
