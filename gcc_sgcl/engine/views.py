"""A dataset's views for embedding, and their cache.

:class:`ViewOptions` is what a dataset's views depend on besides its graphs (the encoder's sampling settings, the
seed, the views per row with its default decided in :meth:`ViewOptions.resolved`, the walks' budget rule), not on
the encoder, so a sweep over encoders builds them once: :func:`view_sources` gives them to the streamed embedding of
:mod:`gcc_sgcl.engine.generate` (built chunk by chunk beside the model), :func:`dataset_views` copy by copy, and
:func:`cached_views` stores them in the cache directory (``$GCC_SGCL_CACHE``) under a key that includes the code that
builds views (:func:`views_code_digest`).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy
import torch

import gcc_sgcl.sampling as sampling_package
from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.data.containers import GraphLabelData, NodeLabelData, SimilarityPairData
from gcc_sgcl.data.graphs import graphs_digest
from gcc_sgcl.data.kinds import DatasetKind
from gcc_sgcl.data.paths import CACHE_ENV, resolve_cache_dir
from gcc_sgcl.engine.stream import ViewSource
from gcc_sgcl.fileio import atomic_target
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.dataset import GraphViewDataset, NodeViewDataset, all_views


# GCC's generate.py averages the embeddings of a query and a key view: the results tables' protocol, whatever the
# defaults below say.
GCC_COPIES: int = 2
# The default views per row of a node (generate.sh --copies on node and similarity datasets, embed_nodes(copies=...)):
# the count the views study chose on 8 seeds (docs/results.md, "Inference views"; a test keeps the two equal).
INFERENCE_COPIES: int = 32
# The default for a whole graph (graph datasets, embed_graphs): GCC's, as the views study measured node columns only.
GRAPH_COPIES: int = GCC_COPIES


@dataclass(frozen=True)
class ViewOptions:
    """What a dataset's views depend on besides its graphs, and not on the encoder (so a sweep over encoders builds
    them once, :func:`cached_views`): the encoder's ``sampling`` settings, the ``seed``, the views averaged per row
    (``copies``; None: the default of the dataset's kind, decided by :meth:`resolved`) and the walks' budget rule
    ``visit_budget`` (node views only)."""

    sampling: SamplingConfig
    seed: int = 0
    copies: int | None = None
    visit_budget: str = "pretrain"

    def resolved(self, per_graph: bool, registered: bool = False) -> ViewOptions:
        """These options with ``copies`` decided: as given, or the default of the kind of view: :data:`GRAPH_COPIES`
        for whole graphs (``per_graph``); for a node's walks :data:`GCC_COPIES` on a ``registered`` benchmark dataset
        (so that GCC's workflow, ``generate.sh <gpu> <run> usa_airport``, gives the tables' protocol as written) and
        :data:`INFERENCE_COPIES` on the user's own graphs (files, the Python API), where the views study's count
        serves best.

        >>> options = ViewOptions(SamplingConfig())
        >>> options.resolved(per_graph=False).copies, options.resolved(per_graph=True).copies
        (32, 2)
        >>> options.resolved(per_graph=False, registered=True).copies
        2
        >>> dataclasses.replace(options, copies=8).resolved(per_graph=False).copies
        8
        """
        if self.copies is not None:
            return self
        return dataclasses.replace(self, copies=GRAPH_COPIES if per_graph else GCC_COPIES if registered
                                   else INFERENCE_COPIES)

    def record(self) -> dict[str, int | str | None]:
        """The ``views`` entry of the embeddings record (:func:`~gcc_sgcl.engine.provenance.embeddings_record`)."""
        return {"copies": self.copies, "seed": self.seed, "visit_budget": self.visit_budget}


LoadedDataset = NodeLabelData | GraphLabelData | SimilarityPairData


Parts = list[list[ViewBatch]]
"""A dataset's views: one entry per graph of the dataset kind (two for similarity pairs), each a list of
``copies`` view batches of the same items."""


def dataset_views(name: str, options: ViewOptions, data_dir: str | None = None, *, data: LoadedDataset | None = None,
                  num_workers: int = 0, progress: bool = True) -> list[Iterator[ViewBatch]]:
    """The views ``generate`` encodes for dataset ``name`` under ``options``: per part an iterator over its copies,
    each copy built (batched; ``num_workers`` DataLoader workers) when the iteration reaches it, so that embedding
    them (:func:`~gcc_sgcl.engine.inference.embed_parts`) holds one copy's views in memory at a time; each iterator can
    be read once (``list()`` it, or use :func:`cached_views`, to reuse the views). ``data`` is the dataset already
    loaded (else it is loaded here)."""
    data, kind, options = _embedded(name, options, data_dir, data)
    if options.copies < 1:
        raise ValueError(f"copies must be >= 1, got {options.copies}")
    graphs = kind.graphs(data)
    sampling, seed = options.sampling, options.seed
    if kind.per_graph:
        makers = [lambda c: GraphViewDataset(graphs, sampling, seed, c)]
    else:  # one part per graph, its rows one per node (similarity pairs: graph 1, then graph 2)
        makers = [lambda c, g=g: NodeViewDataset(g, sampling, seed, c, options.visit_budget) for g in graphs]
    labels = [f"views {name} graph {p + 1}" for p in range(len(makers))] if len(makers) > 1 else [f"views {name}"]
    return [_copies(make, options.copies, num_workers, label, progress) for make, label in zip(makers, labels)]


def view_sources(name: str, options: ViewOptions, data_dir: str | None = None, *,
                 data: LoadedDataset | None = None) -> list[ViewSource]:
    """The views of :func:`dataset_views` as :class:`~gcc_sgcl.engine.stream.ViewSource` parts, which
    :func:`~gcc_sgcl.engine.inference.embed_parts` streams: nothing is built until the model asks for it, chunk by chunk.

    Args:
        name: a registered dataset or a graph file path.
        options: the views' settings.
        data_dir: the data root (default ``$GCC_SGCL_DATA``).
        data: the dataset already loaded (else loaded here).
    """
    data, kind, options = _embedded(name, options, data_dir, data)
    graphs = kind.graphs(data)
    sampling, seed, copies = options.sampling, options.seed, options.copies
    if kind.per_graph:
        return [ViewSource(GraphViewDataset(graphs, sampling, seed), np.arange(len(graphs)), copies)]
    return [ViewSource(NodeViewDataset(g, sampling, seed, 0, options.visit_budget), np.arange(g.num_nodes()), copies)
            for g in graphs]


def _copies(make: Callable[[int], NodeViewDataset | GraphViewDataset], copies: int, num_workers: int, desc: str,
            progress: bool) -> Iterator[ViewBatch]:
    """The views of copies ``0..copies-1`` of ``make``, each built when the iteration reaches it."""
    for c in range(copies):
        yield all_views(make(c), num_workers, desc=f"{desc} {c + 1}/{copies}", progress=progress)


def _check_embedded(kind: DatasetKind, name: str) -> DatasetKind:
    if not kind.embedded:
        raise ValueError(f"dataset {name!r} is a {kind.name} dataset; generate embeds node, graph or similarity "
                         "datasets")
    return kind


def _embedded(name: str, options: ViewOptions, data_dir: str | None,
              data: LoadedDataset | None) -> tuple[LoadedDataset, DatasetKind, ViewOptions]:
    """Dataset ``name`` (``data`` if already loaded), its kind, refusing a kind ``generate`` does not embed (a
    registered name before its files are read), and ``options`` with the copies decided for that kind
    (:meth:`ViewOptions.resolved`)."""
    from gcc_sgcl.data import KINDS, dataset_kind, is_dataset_path, kind_of_data, load_any

    if data is None and not is_dataset_path(name):
        _check_embedded(KINDS[dataset_kind(name)], name)
    data = load_any(name, data_dir) if data is None else data
    kind = _check_embedded(kind_of_data(data), name)
    return data, kind, options.resolved(kind.per_graph)


@functools.lru_cache(maxsize=None)
def views_code_digest() -> str:
    """SHA-256 of the code that builds views (the sampling package and this module) and of the numpy, scipy and
    torch versions, part of the view cache's key: views cached by other code or libraries are never read back. (A
    version number bumped by hand was once left alone when the walks' random streams changed, and rows scored on
    2026-11-23 may have read views of older code from the cache; ``docs/reproducibility.md``.)"""
    digest = hashlib.sha256(f"numpy {np.__version__} scipy {scipy.__version__} torch {torch.__version__}".encode())
    for path in [*sorted(Path(sampling_package.__file__).parent.glob("*.py")), Path(__file__)]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def cached_views(name: str, options: ViewOptions, data_dir: str | None = None, *, data: LoadedDataset | None = None,
                 num_workers: int = 0, progress: bool = True) -> Parts:
    """:func:`dataset_views`, stored as a ``.npz`` in the cache directory (``$GCC_SGCL_CACHE``) under the dataset's
    name and a key made of its kind and graphs (:func:`~gcc_sgcl.data.graphs.graphs_digest`: a file edited, or
    a data root holding other graphs under the same name, gets new views), the sampling settings, the seed, the
    copies, the code that builds views (:func:`views_code_digest`) and, for node views, the visit budget, and read
    back on later calls. ``data`` is the dataset already loaded (else it is loaded here)."""
    from gcc_sgcl.data import dataset_name

    data, kind, options = _embedded(name, options, data_dir, data)
    fields = [kind.name, graphs_digest(kind.graphs(data)), dataclasses.asdict(options.sampling), options.seed,
              options.copies, views_code_digest()]
    if not kind.per_graph:  # whole-graph views have no walks
        fields.append(options.visit_budget)
    key = hashlib.sha256(json.dumps(fields).encode())
    path = resolve_cache_dir() / "views" / f"{dataset_name(name)}-{key.hexdigest()[:16]}.npz"
    if path.exists():
        try:
            return _read_views(path)
        except (OSError, ValueError, EOFError, KeyError, IndexError, zipfile.BadZipFile) as error:
            _notice(f"{path}: damaged view-cache entry ({_reason(error)}); rebuilding it")
    parts = [list(part) for part in dataset_views(name, options, data_dir, data=data, num_workers=num_workers,
                                                  progress=progress)]
    try:
        _write_views(path, parts)
    except OSError as error:
        _notice(f"{path}: cannot write the view cache (${CACHE_ENV}={path.parent.parent}: {_reason(error)}); going on "
                f"without caching the views of {name}")
    return parts


def _read_views(path: Path) -> Parts:
    """The views stored in the view-cache entry ``path`` (a truncated or foreign file raises)."""
    with np.load(path) as stored:
        arrays = dict(stored)
    layout = arrays.pop("layout")
    return [[ViewBatch.from_arrays(arrays, f"{p}_{c}_") for c in range(layout[p])] for p in range(len(layout))]


def _write_views(path: Path, parts: Parts) -> None:
    """Store ``parts`` as the view-cache entry ``path``, atomically."""
    arrays = {f"{p}_{c}_{key}": value for p, part in enumerate(parts) for c, views in enumerate(part)
              for key, value in views.to_arrays().items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, layout=np.array([len(part) for part in parts]), **arrays)


def _reason(error: BaseException) -> str:
    """The first line of ``error``'s message (its OS reason when it has one)."""
    text = getattr(error, "reason", None) or getattr(error, "strerror", None) or str(error).strip()
    text = text or type(error).__name__
    return text.splitlines()[0]


def _notice(message: str) -> None:
    """One line on stderr: a cache is an optimisation, so its trouble never stops a command."""
    print(message, file=sys.stderr, flush=True)
