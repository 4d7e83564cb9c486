"""What each stage of a method's pair pipeline does to the views, measured on a corpus: how often the
similar / diverse filter finds a passing pair (and in how many tries), for every later step the share of
query and key views it changes and the nodes they keep, what a crop leaves of the views it crops
(:func:`crop_shape`: pieces, the centre's edges, the degrees of the nodes kept and dropped), and how well the align
step's Procrustes rotation is determined by the views it rotates (:func:`align_fit`).

A step *changes* a view when the view's nodes, edges or positional embedding differ from what the step was given
(a crop that drops nothing, a mask of zero columns or a reorder whose order is the identity change nothing).
Pairs are drawn exactly as pre-training draws them (:meth:`~gcc_sgcl.augment.pipeline.PairPipeline.stages`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import dgl
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from gcc_sgcl.augment.align import Align
from gcc_sgcl.augment.base import Both, PairTransform, Split, Transform
from gcc_sgcl.augment.crop import CROPS
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
class AlignFit:
    """Per view the align step rotated (query and key views alike), :func:`align_fit`'s measures."""

    rank: list[int] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)
    determined: list[float] = field(default_factory=list)
    fit: list[float] = field(default_factory=list)

    def add(self, views: ViewBatch) -> None:
        """Measure ``views`` (as the align step is given them)."""
        rank, determined, fit = align_fit(views.padded(views.pe), views.padded(views.global_rows))
        self.rank += rank.tolist()
        self.columns += views.num_valid.tolist()
        self.determined += determined.tolist()
        self.fit += fit.tolist()


@dataclass
class CropShape:
    """Over the views a crop step changed (query and key views alike), :func:`crop_shape`'s measures: per view
    the share of nodes kept, and counts pooled over views and nodes."""

    kept: list[float] = field(default_factory=list)
    split: int = 0  # views the crop cut into more connected pieces
    centre_alone: int = 0  # views whose centre has no edge left (and other nodes)
    degree_kept: float = 0.0  # summed degree (in the uncropped view) of the nodes kept …
    nodes_kept: int = 0
    degree_dropped: float = 0.0  # … and of those dropped
    nodes_dropped: int = 0

    def add(self, before: ViewBatch, after: ViewBatch) -> None:
        """Measure views cropped from ``before`` to ``after`` (the same views, in order)."""
        keep, split, centre_alone = crop_shape(before, after)
        degree = before.in_degrees()
        self.kept += (after.num_nodes / before.num_nodes).tolist()
        self.split += int(split.sum())
        self.centre_alone += int(centre_alone.sum())
        self.degree_kept += float(degree[keep].sum())
        self.nodes_kept += int(keep.sum())
        self.degree_dropped += float(degree[~keep].sum())
        self.nodes_dropped += int((~keep).sum())


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
    align: AlignFit | None = None  # None: the pipeline has no align step
    crop: CropShape | None = None  # None: the pipeline has no crop step


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


def align_fit(x: np.ndarray, n: np.ndarray, tol: float = 1e-2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How far the orthogonal Procrustes problem ``min_Q ||x Q - n||`` of each batch entry (``x``, ``n``:
    ``(B, rows, k)``, a view's positional embedding and its global-embedding rows, zero-padded) determines ``Q``.

    With ``x^T n = U S V^T``, ``Q* = U V^T`` is fixed only on the directions ``U_r`` whose singular values exceed
    ``tol`` times the largest; the rest of ``x`` is turned by whatever completion the SVD returns. Per entry:
    that rank ``r``; the share ``||x U_r||^2 / ||x||^2`` of ``x`` on those directions; and the fit
    ``sum(S) / (||x|| ||n||)``, the cosine between ``x Q*`` and ``n`` (the largest over orthogonal ``Q``: 1 when
    ``x`` is a scaled rotation of ``n``, 0 when they are orthogonal). NaN where ``x`` or ``n`` is zero.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(1, 6, 3)); q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    >>> [np.round(a, 6).tolist() for a in align_fit(x, 2 * x @ q)]
    [[3], [1.0], [1.0]]
    """
    x, n = np.asarray(x, dtype=np.float64), np.asarray(n, dtype=np.float64)
    u, s, _ = np.linalg.svd(np.swapaxes(x, -1, -2) @ n)
    rank = ((s > tol * s[:, :1]) & (s > 0)).sum(axis=1)
    along = (np.square(x @ u).sum(axis=1) * (np.arange(s.shape[1]) < rank[:, None])).sum(axis=1)
    norm_x, norm_n = np.linalg.norm(x, axis=(1, 2)), np.linalg.norm(n, axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        determined = np.where(norm_x > 0, along / np.square(norm_x), np.nan)
        fit = np.where((norm_x > 0) & (norm_n > 0), s.sum(axis=1) / (norm_x * norm_n), np.nan)
    return rank, determined, fit


def view_pieces(views: ViewBatch) -> np.ndarray:
    """``(B,)`` the connected pieces of each view (edges taken as undirected)."""
    base = np.repeat(views.node_ptr[:-1], views.num_edges)
    n = int(views.num_nodes.sum())
    adjacency = sp.coo_matrix((np.ones(len(views.src)), (views.src + base, views.dst + base)), shape=(n, n))
    _, labels = connected_components(adjacency, directed=True, connection="weak")
    first = np.zeros(n, dtype=bool)
    first[np.unique(labels, return_index=True)[1]] = True  # one node per piece; pieces never span two views
    return np.bincount(views.node_view[first], minlength=len(views))


def crop_shape(before: ViewBatch, after: ViewBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a crop did to each view: ``(keep, split, centre_alone)`` -- ``(N,)`` whether each node of ``before``
    is in the same view of ``after`` (views keep their parent ids), ``(B,)`` whether the view has more connected
    pieces after than before, and ``(B,)`` whether its centre has no edge left while other nodes remain (views hold
    both directions of each edge, so no in-edge means no edge).

    >>> path = ViewBatch(num_nodes=np.array([5]), num_edges=np.array([8]), src=np.array([0, 1, 1, 2, 2, 3, 3, 4]),
    ...     dst=np.array([1, 0, 2, 1, 3, 2, 4, 3]), nid=np.arange(5), seed_pos=np.array([2]),
    ...     pe=np.zeros((5, 2), np.float32), eigvec=np.zeros((5, 2), np.float32), eigval=np.zeros((1, 2), np.float32))
    >>> keep, split, alone = crop_shape(path, path.induce(np.array([True, True, True, False, True])))
    >>> keep.tolist(), split.tolist(), alone.tolist()
    ([True, True, True, False, True], [True], [False])
    """
    if len(before) != len(after) or np.any(after.num_nodes > before.num_nodes):
        raise ValueError("crop_shape takes the same views before and after a crop (after: no more nodes)")
    span = int(max(before.nid.max(initial=0), after.nid.max(initial=0))) + 1
    keep = np.isin(before.node_view * span + before.nid, after.node_view * span + after.nid)
    centre_alone = (after.in_degrees()[after.node_ptr[:-1] + after.seed_pos] == 0) & (after.num_nodes > 1)
    return keep, view_pieces(after) > view_pieces(before), centre_alone


def measure_effects(graphs: Sequence[dgl.DGLGraph], methods: Sequence[str], batch_size: int, batches: int,
                    seed: int = 0) -> dict[str, Effects]:
    """``{method: Effects}`` over ``batches`` batches of ``batch_size`` pairs (items ``0, 1, …`` of seed ``seed``)."""
    out = {}
    for method in methods:
        ds = pair_dataset(graphs, method, batch_size * batches, seed)
        if ds.pipeline.filter is None and not ds.pipeline.steps:  # GCC's plain pairs: nothing to measure
            out[method] = Effects(pairs=batch_size * batches)
            continue
        crops = [_crops(s) for s in ds.pipeline.steps]
        eff = Effects(has_filter=ds.pipeline.filter is not None,
                      steps=[StageEffect(step_name(s)) for s in ds.pipeline.steps],
                      align=AlignFit() if any(isinstance(s, Align) for s in ds.pipeline.steps) else None,
                      crop=CropShape() if any(crops) else None)
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
                for step, crop, st, (_, q0, k0, _), (_, q1, k1, _) in zip(ds.pipeline.steps, crops, eff.steps, stages,
                                                                           stages[1:]):
                    changed_q, changed_k = changed_views(q0, q1), changed_views(k0, k1)
                    st.changed_q += int(changed_q.sum())
                    st.changed_k += int(changed_k.sum())
                    if isinstance(step, Align):
                        eff.align.add(q0.select(np.flatnonzero(changed_q)))
                        eff.align.add(k0.select(np.flatnonzero(changed_k)))
                    if crop:
                        for before, after, changed in ((q0, q1, changed_q), (k0, k1, changed_k)):
                            rows = np.flatnonzero(changed)
                            eff.crop.add(before.select(rows), after.select(rows))
                    st.nodes_before += int(q0.num_nodes.sum() + k0.num_nodes.sum())
                    st.nodes_after += int(q1.num_nodes.sum() + k1.num_nodes.sum())
        out[method] = eff
    return out


def _crops(step: PairTransform) -> bool:
    """Whether ``step`` crops views (a spectral or random crop among its alternatives)."""
    kinds = {CROPS[kind].__name__ for kind in CROPS}
    return any(name in kinds for name in step_name(step).split(" or "))


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "–"


def _median(values: list[float], digits: int) -> str:
    kept = np.asarray(values, dtype=np.float64)
    kept = kept[~np.isnan(kept)]
    return f"{np.median(kept):.{digits}f}" if kept.size else "–"


def format_effects(results: dict[str, Effects], batch_size: int, batches: int) -> str:
    """Markdown tables: the filter's outcome per method, each step's share of changed views, and (for methods
    with an align step) the Procrustes fit of the views it rotates."""
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
    align = ["| method | views rotated | eigen columns (median) | rank of XᵀN (median) | share of ‖X‖² "
             "the rank determines (median) | fit cos(XQ*, N) (median) |", "|---|---|---|---|---|---|"]
    for method, e in results.items():
        if e.align is not None:
            a = e.align
            align.append(f"| {method} | {len(a.rank)} | {_median(a.columns, 0)} | {_median(a.rank, 0)} | "
                         f"{_median(a.determined, 2)} | {_median(a.fit, 2)} |")
    crop = ["| method | views cropped | nodes kept (median share) | cut into more pieces | centre left without "
            "edges | mean degree of the nodes kept | mean degree of the nodes dropped |",
            "|---|---|---|---|---|---|---|"]
    for method, e in results.items():
        if e.crop is not None:
            c = e.crop
            crop.append(f"| {method} | {len(c.kept)} | {_median(c.kept, 2)} | {_pct(c.split, len(c.kept))} | "
                        f"{_pct(c.centre_alone, len(c.kept))} | "
                        + (f"{c.degree_kept / c.nodes_kept:.2f}" if c.nodes_kept else "–") + " | "
                        + (f"{c.degree_dropped / c.nodes_dropped:.2f}" if c.nodes_dropped else "–") + " |")
    cropped = [] if len(crop) == 2 else [
        "", "crop (the views a crop step changed; pieces: connected components; degrees: in-degrees in the view "
        "before the crop):", *crop]
    rotation = [] if len(align) == 2 else [
        "", "align (Procrustes against the global-embedding rows N of the views it rotates, X their positional "
        "embedding; Q* is fixed only on the directions whose singular values of XᵀN exceed 1 % of the largest, "
        "the rest of X is turned by whatever completion the SVD returns):", *align]
    return "\n".join([head, "", "filter (similar / diverse, before the views are built):", *filt, "",
                      "steps after the filter, in order:", *steps, *cropped, *rotation])
