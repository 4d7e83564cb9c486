"""Rows of views: the embedding loops behind ``generate`` and the API (a row is the mean of its views'
embeddings), the ``⊕ structural`` join, and the check that the rows are finite.

Views are embedded ``batch_size`` at a time in eval mode; built copies (:func:`~gcc_sgcl.engine.views.cached_views`)
are embedded whole and averaged, streamed parts (:class:`~gcc_sgcl.engine.stream.ViewSource`) go through
:func:`~gcc_sgcl.engine.stream.streamed_rows`, which gives the same rows without holding a copy in memory.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from gcc_sgcl.classical import joined, structural_vector
from gcc_sgcl.engine.stream import ResumeState, ViewSource, streamed_rows
from gcc_sgcl.engine.threads import ThreadPlan, model_threads
from gcc_sgcl.engine.views import LoadedDataset, Parts
from gcc_sgcl.models import GraphEncoder, to_model_input
from gcc_sgcl.sampling.batch import ViewBatch


def check_finite_rows(emb: np.ndarray, checkpoint: Path, dataset: str, path: Path) -> None:
    """A ValueError naming the ``checkpoint`` and ``dataset`` when the embedding holds NaN or inf (``path`` is then
    not written)."""
    bad = int(emb.size - np.count_nonzero(np.isfinite(emb)))
    if bad:
        raise ValueError(f"{checkpoint}: the encoder gives {bad} non-finite values (NaN/inf) of {emb.size} on "
                         f"{dataset}; {path} not written")


@torch.no_grad()
def embed(model: GraphEncoder, views: ViewBatch, batch_size: int = 256, desc: str = "embed",
          progress: bool = True) -> np.ndarray:
    """Encode every view of ``views`` in order, ``batch_size`` at a time; a float32 (len(views), hidden) array."""
    device = next(model.parameters()).device
    starts = range(0, len(views), batch_size)
    out = [model(to_model_input(views.select(np.arange(a, min(a + batch_size, len(views)))), device)).cpu()
           for a in tqdm(starts, desc=desc, disable=not progress, unit="batch")]
    return torch.cat(out).numpy().astype(np.float32)


def embed_parts(model: GraphEncoder, parts: Sequence[ViewSource] | Parts | Sequence[Iterable[ViewBatch]],
                batch_size: int = 256, desc: str = "embed", progress: bool = True,
                plan: ThreadPlan | None = None, share: tuple[int, int] = (0, 1),
                resume: ResumeState | None = None) -> np.ndarray:
    """The rows of a dataset: per part the mean of its copies' embeddings, parts one after the other.

    Args:
        model: the encoder (eval mode).
        parts: :class:`~gcc_sgcl.engine.stream.ViewSource` parts (:func:`~gcc_sgcl.engine.views.view_sources`),
            streamed: views built chunk by chunk beside the model, a running sum per row
            (:func:`~gcc_sgcl.engine.stream.streamed_rows`); or built copies
            (:func:`~gcc_sgcl.engine.views.cached_views`), or iterators of them
            (:func:`~gcc_sgcl.engine.views.dataset_views`: each copy embedded as it comes and dropped before the next
            is built), each copy's bar labelled with its number, and its part's when there are several
            (``usa_airport view 3``, ``kdd_icdm graph 2 view 3``). Both give the same rows.
        batch_size: views per forward pass.
        desc: the progress bars' label.
        progress: show progress bars.
        plan: the model's threads and the view builders (default: decided from the cores,
            :func:`~gcc_sgcl.engine.stream.stream_plan`; built copies use only its model threads).
        share: ``(rank, world)``: only this rank's share of the rows (streamed parts only).
        resume: where finished chunks are kept, to go on from them (streamed parts only; :class:`ResumeState`).
    """
    if parts and all(isinstance(part, ViewSource) for part in parts):
        return streamed_rows(model, parts, batch_size, plan, desc, progress, share=share, resume=resume)
    with model_threads(plan.model if plan else torch.get_num_threads()):
        return _built_rows(model, parts, batch_size, desc, progress)


def _built_rows(model: GraphEncoder, parts: Parts | Sequence[Iterable[ViewBatch]], batch_size: int, desc: str,
                progress: bool) -> np.ndarray:
    """:func:`embed_parts` of built copies: each copy embedded whole, the copies averaged."""
    def rows(copies: Iterable[ViewBatch], label: str) -> np.ndarray:
        out, copies = [], iter(copies)
        while (views := next(copies, None)) is not None:
            out.append(embed(model, views, batch_size, f"{label} view {len(out) + 1}", progress))
            del views  # so that building the next copy does not hold this one too
        if not out:
            raise ValueError("a part with no copies (an iterator of dataset_views read twice? list() it to reuse it)")
        return np.mean(out, axis=0)

    labels = [f"{desc} graph {p + 1}" for p in range(len(parts))] if len(parts) > 1 else [desc]
    return np.concatenate([rows(copies, label) for copies, label in zip(parts, labels)]).astype(np.float32)


def joined_rows(emb: np.ndarray, data: LoadedDataset) -> np.ndarray:
    """The ``⊕ structural`` rows of dataset ``data``: its encoder rows ``emb`` joined
    (:func:`~gcc_sgcl.classical.joined`) to the structural vector (:func:`~gcc_sgcl.classical.structural_vector`) of
    every node of its graphs, z-scored over all of them (both graphs of a similarity pair), or of each graph."""
    from gcc_sgcl.data import kind_of_data

    kind = kind_of_data(data)
    return joined(emb, structural_vector(kind.graphs(data), kind.per_graph))
