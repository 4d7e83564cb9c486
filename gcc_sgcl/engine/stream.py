"""Streamed embedding: views built chunk by chunk beside the model, a running sum per row, bounded memory.

A dataset's rows are embedded in *units* of work: the views of one chunk of items (``chunk`` of them, a multiple of
the batch size) for one copy. Units come chunk after chunk, each chunk's copies one after the other, from
``builders`` DataLoader worker processes (one BLAS thread each) that build the next units while this process
encodes the current one; the chunk's rows are a running sum over its copies, divided by the copies once the last
one is added, and written into the output. At most ``builders x prefetch + 1`` units of views are alive at a time
and beyond the output nothing grows with the graph, so memory is bounded by the graph and the output.

Rows are those of embedding each copy whole and averaging (:func:`gcc_sgcl.engine.inference.embed_parts`): a view
is a pure function of ``(seed, item, copy)`` (:mod:`gcc_sgcl.sampling.dataset`), the model sees the same batches
(a chunk is a multiple of the batch size, so batches start at the same items), and the sum over copies is taken in
copy order in float32, as ``np.mean`` over the copies takes it. They do not depend on the number of builders; the
model's thread count may change float reductions (~1e-7). A ``share`` of ``(rank, world)`` embeds a contiguous run of
the chunks only (:func:`share_of`), so that ``torchrun`` processes together give one process's rows.
"""
from __future__ import annotations

import copy as copying
import json
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from gcc_sgcl.engine.threads import ThreadPlan, model_threads, plan_threads
from gcc_sgcl.fileio import atomic_target, refuse_link, remove_stale_temporaries
from gcc_sgcl.models import GraphEncoder, to_model_input
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.dataset import (
    GraphViewDataset,
    NodeViewDataset,
    collate_views,
    loader_batches,
    sampling_threads,
    worker_init,
)

# Views per unit of work, rounded to a multiple of the batch size: large enough that a unit's fixed costs (a
# DataLoader round trip, the batched eigh calls) stay small, small enough that a few units in flight take tens of
# MB (an RWR view of the default settings holds ~15 KB of arrays).
CHUNK_VIEWS = 1024
PREFETCH = 2  # units each builder keeps ready: enough to hide the jitter of unit times
# Below this many views (items x copies) a run builds its views in this process unless builders are given: forking
# workers costs more than it saves on a small graph.
MIN_STREAMED_VIEWS = 4 * CHUNK_VIEWS


@dataclass(frozen=True)
class ViewSource:
    """The views of one part of a dataset: ``copies`` views of each of ``items`` (dataset indices, one output row
    each) from ``dataset``, whose ``copy`` is set per view set (copy ``c`` draws from the keys of copy ``c``)."""

    dataset: NodeViewDataset | GraphViewDataset
    items: np.ndarray
    copies: int

    def __post_init__(self) -> None:
        if self.copies < 1:
            raise ValueError(f"copies must be >= 1, got {self.copies}")

    def __len__(self) -> int:
        return len(self.items)

    def build(self, copy: int, rows: slice) -> ViewBatch:
        """Views of copy ``copy`` of ``items[rows]``, with what the encoder reads (:meth:`ViewBatch.encoder_part`)."""
        dataset = copying.copy(self.dataset)  # shallow: the sampler and its graph index are shared
        dataset.copy = copy
        return dataset.__getitems__(self.items[rows]).encoder_part()


@dataclass(frozen=True)
class Unit:
    """One unit of work: copy ``copy`` of rows ``start:stop`` of part ``part``."""

    part: int
    start: int
    stop: int
    copy: int


PROGRESS_UNITS = 8  # a copy of a dataset of few, costly items (RDT-B's 2 000 graphs) is split in this many units


def chunk_size(batch_size: int, views: int = CHUNK_VIEWS, items: int | None = None) -> int:
    """Views per unit: ``views`` rounded to a multiple of ``batch_size`` (at least one batch); with ``items`` (the
    largest part's item count), no more than about ``items / PROGRESS_UNITS``, so that the progress bar and its
    estimate move within minutes even where a view is costly. The rows do not depend on it: a unit is a whole
    number of the model's batches.

    >>> chunk_size(256), chunk_size(300), chunk_size(4096), chunk_size(256, items=2000), chunk_size(256, items=10**6)
    (1024, 900, 4096, 256, 1024)
    """
    if items is not None:
        views = min(views, -(-items // PROGRESS_UNITS))
    return batch_size * max(1, round(views / batch_size))


def plan_units(sizes: Sequence[int], copies: Sequence[int], chunk: int) -> list[Unit]:
    """Units of parts of ``sizes`` rows with ``copies`` views each: part by part, chunk by chunk, copy by copy.

    >>> [(u.start, u.stop, u.copy) for u in plan_units([3], [2], 2)]
    [(0, 2, 0), (0, 2, 1), (2, 3, 0), (2, 3, 1)]
    """
    return [Unit(p, a, min(a + chunk, n), c) for p, (n, k) in enumerate(zip(sizes, copies))
            for a in range(0, n, chunk) for c in range(k)]


class UnitViews(torch.utils.data.Dataset):
    """Item ``i`` is unit ``i``'s views (what a DataLoader worker builds)."""

    def __init__(self, sources: Sequence[ViewSource], units: Sequence[Unit]) -> None:
        self.sources = list(sources)
        self.units = list(units)

    def __len__(self) -> int:
        return len(self.units)

    def __getitem__(self, i: int) -> ViewBatch:
        u = self.units[i]
        return self.sources[u.part].build(u.copy, slice(u.start, u.stop))


class SharedUnitViews(UnitViews):
    """Item ``i`` is unit ``i``'s views as torch tensors (:meth:`ViewBatch.to_arrays`): DataLoader workers hand
    tensors over in shared memory, where numpy arrays go pickled through a pipe (measured on a 1 024-view unit of
    12 MB: 7 + 2 ms of CPU in the worker and the caller instead of 23-40 + 15-19)."""

    def __getitem__(self, i: int) -> dict[str, torch.Tensor | np.ndarray]:
        return {name: torch.from_numpy(a) if a.ndim else a for name, a in super().__getitem__(i).to_arrays().items()}


def from_shared(arrays: dict[str, torch.Tensor | np.ndarray]) -> ViewBatch:
    """The views of a :class:`SharedUnitViews` item (numpy arrays over the tensors' memory, not copies)."""
    return ViewBatch.from_arrays({name: a.numpy() if isinstance(a, torch.Tensor) else a for name, a in arrays.items()})


def unit_views(sources: Sequence[ViewSource], units: Sequence[Unit], builders: int) -> Iterator[ViewBatch]:
    """The views of ``units`` in order: built by ``builders`` worker processes ahead of the caller (at most
    ``builders x PREFETCH`` units waiting), or in this process under one thread when ``builders`` is 0."""
    if not builders:
        dataset = UnitViews(sources, units)
        for i in range(len(dataset)):
            with sampling_threads():
                views = dataset[i]
            yield views
            del views  # before the next unit is built
        return
    loader = torch.utils.data.DataLoader(SharedUnitViews(sources, units), batch_size=None, collate_fn=collate_views,
                                         num_workers=builders, worker_init_fn=worker_init, prefetch_factor=PREFETCH)
    for arrays in loader_batches(loader):
        views = from_shared(arrays)
        del arrays
        yield views
        del views  # before the next unit is taken from the loader


@torch.no_grad()
def encode(model: GraphEncoder, views: ViewBatch, batch_size: int, path: str | None = None) -> torch.Tensor:
    """``(len(views), hidden)`` float32 CPU embeddings of ``views``, ``batch_size`` views per forward, by the
    encoder path ``path`` (default :func:`~gcc_sgcl.models.flat.model_path` of the model's device)."""
    device = next(model.parameters()).device
    out = [model(to_model_input(views.span(a, min(a + batch_size, len(views))), device, path)).cpu()
           for a in range(0, len(views), batch_size)]
    return torch.cat(out)


class ResumeState:
    """The finished chunks of a streamed run, kept so that a stopped run (Ctrl-C, a kill, a crash) goes on from them
    and gives the rows a straight run gives (a row is a function of its item, the seed and the copies only).

    The rows are held in memory; every ``interval`` seconds, and when the run stops on an error or a signal, the
    chunks finished since the last save are written into ``<prefix>.partial.npy`` (a ``.npy`` updated in place)
    and then ``<prefix>.partial.json`` names every chunk the file holds and what they are rows of (``key``),
    replaced through a temporary file, so the pair agrees whenever the run is stopped. A run shorter than
    ``interval`` that ends normally writes nothing. A state of another key (another encoder, dataset, views, chunking
    or share) is not read: the run starts over and replaces it (a new rows file is written whole through a temporary
    file). A symbolic link in place of either file is refused, when the state is made and at every save
    (:class:`~gcc_sgcl.fileio.LinkRefusedError`), never written through. :meth:`discard` removes both files.

    >>> import tempfile
    >>> state = ResumeState(Path(tempfile.mkdtemp()) / "g", {"copies": 2})
    >>> rows = state.rows(4, 3)
    >>> rows[:2] = 1.0
    >>> state.finished((0, 0), slice(0, 2)); state.save()
    >>> again = ResumeState(state.prefix, {"copies": 2})
    >>> again.rows(4, 3)[:2].tolist(), again.done
    ([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], {(0, 0)})
    >>> ResumeState(state.prefix, {"copies": 32}).done  # other views: nothing of it is taken
    set()
    """

    def __init__(self, prefix: str | os.PathLike, key: dict, interval: float = 30.0) -> None:
        self.prefix, self.key, self.interval = Path(prefix), json.loads(json.dumps(key)), interval
        self.done: set[tuple[int, int]] = set()
        self._rows: np.ndarray | None = None
        self._unsaved: dict[tuple[int, int], slice] = {}
        self._own_file = False  # the rows file is this run's: read back by it, or written by it
        self._saved = time.monotonic()
        self._refuse_links()
        remove_stale_temporaries(self.rows_path)  # of a killed run's save
        record = self._read()
        if record is not None and record.get("key") == self.key and self.rows_path.is_file():
            self.done = {(int(p), int(a)) for p, a in record["chunks"]}

    @property
    def rows_path(self) -> Path:
        return self.prefix.with_name(self.prefix.name + ".partial.npy")

    @property
    def record_path(self) -> Path:
        return self.prefix.with_name(self.prefix.name + ".partial.json")

    def _refuse_links(self) -> None:
        for path in (self.rows_path, self.record_path):
            refuse_link(path)

    def _read(self) -> dict | None:
        try:
            return json.loads(self.record_path.read_text())
        except (OSError, ValueError):
            return None

    def rows(self, rows: int, width: int | None = None) -> np.ndarray:
        """The ``(rows, width)`` float32 rows in memory: those of the finished chunks read back, the rest to be
        written (nothing is read when the stored file has another shape); ``width`` may be left out when chunks
        are stored."""
        if self._rows is None:
            if self.done:
                stored = np.load(self.rows_path, mmap_mode="r")
                if stored.shape[0] == rows and width in (None, stored.shape[1]) and stored.dtype == np.float32:
                    self._rows, self._own_file = np.array(stored), True
                    return self._rows
                self.done = set()
            if width is None:
                raise ValueError(f"{self.rows_path}: no stored rows to take the width from")
            self._rows = np.empty((int(rows), int(width)), dtype=np.float32)
        return self._rows

    def finished(self, chunk: tuple[int, int], rows: slice) -> None:
        """Chunk ``(part, start)``'s rows (``rows`` of :meth:`rows`) are final: recorded, and saved when
        ``interval`` has passed."""
        self.done.add(chunk)
        self._unsaved[chunk] = rows
        if time.monotonic() - self._saved >= self.interval:
            self.save()

    def save(self) -> None:
        """Write the chunks finished since the last save into the rows file, then record every stored chunk
        (through a temporary file)."""
        if not self._unsaved:
            return
        self._refuse_links()
        if self._own_file and self.rows_path.is_file():
            stored = np.load(self.rows_path, mmap_mode="r+")
            for rows in self._unsaved.values():
                stored[rows] = self._rows[rows]
            stored.flush()
            del stored
        else:  # a new file (another run's is replaced), written whole: its unfinished rows are named by no record
            self.record_path.unlink(missing_ok=True)
            with atomic_target(self.rows_path) as tmp:
                stored = np.lib.format.open_memmap(tmp, "w+", np.float32, self._rows.shape)
                stored[:] = self._rows
                stored.flush()
                del stored
            self._own_file = True
        with atomic_target(self.record_path) as tmp:
            tmp.write_text(json.dumps({"key": self.key, "chunks": sorted(self.done)}))
        self._unsaved = {}
        self._saved = time.monotonic()

    def discard(self) -> None:
        """Remove both files (the rows are written elsewhere)."""
        self._rows = None
        self.record_path.unlink(missing_ok=True)
        self.rows_path.unlink(missing_ok=True)


def streamed_rows(model: GraphEncoder, sources: Sequence[ViewSource], batch_size: int = 256,
                  plan: ThreadPlan | None = None, desc: str = "embed", progress: bool = True,
                  chunk: int | None = None, path: str | None = None, share: tuple[int, int] = (0, 1),
                  resume: ResumeState | None = None) -> np.ndarray:
    """The rows of ``sources`` one after the other, each the mean of its item's views' embeddings.

    Args:
        model: the encoder (eval mode).
        sources: the dataset's parts (:class:`ViewSource`).
        batch_size: views per forward pass.
        plan: model threads and view builders (default :func:`stream_plan`); the model's torch threads are set to
            ``plan.model`` for the call and restored after it.
        desc: the progress bar's label.
        progress: show a progress bar over the views.
        chunk: views per unit (default :func:`chunk_size`); a multiple of ``batch_size`` keeps the model's batches
            those of embedding each copy whole.
        path: the encoder path (``"dgl"`` or ``"plain"``; default that of the model's device).
        share: ``(rank, world)``: only the rows of :func:`share_of` this rank's share, a contiguous run of them
            (the shares of ranks ``0..world-1`` concatenated are the rows of one process).
        resume: where the finished chunks are kept (:class:`ResumeState`): chunks it holds are not embedded again,
            and the chunks finished by this call are saved however it ends. Its key must name everything the rows
            depend on besides the chunk (the caller's: encoder, dataset, views).
    """
    plan = plan or stream_plan(model, sources)
    units = share_of(plan_units([len(s) for s in sources], [s.copies for s in sources],
                                chunk or chunk_size(batch_size, items=max(len(s) for s in sources))), *share)
    if not units:
        raise ValueError("nothing to embed: no items" if share[1] == 1 else f"rank {share[0]} has no rows to embed")
    starts = np.cumsum([0] + [len(s) for s in sources])
    first = starts[units[0].part] + units[0].start
    rows = starts[units[-1].part] + units[-1].stop - first
    todo = [u for u in units if resume is None or (u.part, u.start) not in resume.done]
    bar = tqdm(total=sum(u.stop - u.start for u in units), initial=sum(u.stop - u.start for u in units) - sum(
        u.stop - u.start for u in todo), desc=desc, unit="view", disable=not progress)
    try:
        with model_threads(plan.model):
            return _summed_rows(model, sources, todo, plan.builders, batch_size, path, starts - first, rows, bar,
                                resume)
    except BaseException:  # Ctrl-C, SIGTERM as Ctrl-C, an error: what is finished is kept
        if resume is not None:
            resume.save()
        raise
    finally:
        bar.close()


def _summed_rows(model: GraphEncoder, sources: Sequence[ViewSource], units: Sequence[Unit], builders: int,
                 batch_size: int, path: str | None, starts: np.ndarray, rows: int, bar: tqdm,
                 resume: ResumeState | None = None) -> np.ndarray:
    """The loop of :func:`streamed_rows`: each unit encoded as it comes, its chunk's running sum over the copies
    divided into ``rows`` rows (part ``p``'s chunk ``a:b`` at ``starts[p] + a``) at its last copy (into
    ``resume``'s rows, the chunk then recorded as finished, when given)."""
    if not units:  # every chunk was finished before (a resumed run)
        return resume.rows(rows)
    total, out, done = None, None, 0  # no enumerate(): its reused result tuple would keep a unit's views alive
    for views in unit_views(sources, units, builders):  # read to its end, so that the workers exit
        unit, done = units[done], done + 1
        emb = encode(model, views, batch_size, path).numpy()
        total = emb if unit.copy == 0 else total + emb  # float32, in copy order: np.mean's sum over the copies
        if out is None:
            out = np.empty((rows, emb.shape[1]), dtype=np.float32) if resume is None else resume.rows(rows, emb.shape[1])
        if unit.copy == sources[unit.part].copies - 1:
            out[starts[unit.part] + unit.start:starts[unit.part] + unit.stop] = total / (unit.copy + 1)
            if resume is not None:
                resume.finished((unit.part, unit.start),
                                slice(starts[unit.part] + unit.start, starts[unit.part] + unit.stop))
        bar.update(len(views))
        del views, emb  # before the next unit arrives
    return out


def share_of(units: Sequence[Unit], rank: int, world: int) -> list[Unit]:
    """Rank ``rank``'s share of ``units`` among ``world`` processes: a contiguous run of about ``1/world`` of the
    chunks, each with all its copies, so that every rank's rows are those one process gives them.

    >>> [(u.start, u.copy) for u in share_of(plan_units([5], [2], 2), 1, 2)]
    [(2, 0), (2, 1), (4, 0), (4, 1)]
    """
    if not 0 <= rank < world:
        raise ValueError(f"rank must be in 0..{world - 1}, got {rank}")
    chunks = list(dict.fromkeys((u.part, u.start) for u in units))
    mine = set(chunks[rank * len(chunks) // world:(rank + 1) * len(chunks) // world])
    return [u for u in units if (u.part, u.start) in mine]


def stream_plan(model: GraphEncoder, sources: Sequence[ViewSource], threads: int | None = None,
                builders: int | None = None, cores: int | None = None) -> ThreadPlan:
    """:func:`~gcc_sgcl.engine.threads.plan_threads` for embedding ``sources`` with ``model`` on ``cores`` (default:
    all this process may use); without ``builders`` given, fewer than :data:`MIN_STREAMED_VIEWS` views are built
    in this process (no workers to fork)."""
    on_gpu = next(model.parameters()).device.type != "cpu"
    if builders is None and sum(len(s) * s.copies for s in sources) < MIN_STREAMED_VIEWS:
        plan = plan_threads(threads, None, cores, on_gpu)
        return ThreadPlan(plan.model, 0, plan.cores, plan.chosen)
    return plan_threads(threads, builders, cores, on_gpu)
