"""DGL view datasets, a whole batch per call: RWR pairs for pre-training, views of nodes or graphs for embedding.

PyTorch's DataLoader calls ``dataset.__getitems__(indices)`` with a whole batch of indices; each dataset here
builds the batch's views together (:mod:`.views`) as one :class:`~gcc_sgcl.sampling.batch.ViewBatch`, and the
collate functions turn it into a batched ``DGLGraph`` directly from the concatenated arrays.

Every item is a pure function of ``(seed, index)``: its random numbers come from a counter-based generator keyed
by them (:mod:`.keys`). Items therefore do not depend on the batch they are in, on the number of DataLoader
workers, and resuming at step ``s`` replays exactly the batches a straight run would have drawn.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Protocol, Sequence

import dgl
import numpy as np
import torch
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from gcc_sgcl.cli import ignore_signals, signals_held
from gcc_sgcl.config import SamplingConfig, visit_budget_power
from gcc_sgcl.sampling.batch import NodeSets, ViewBatch, concat
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.induced import GraphIndex, build_views, rwr_node_sets, whole_graph_views

Pair = tuple[ViewBatch, ViewBatch]


class ViewSampler:
    """Walks and view building on a graph (a corpus is the disjoint union of its graphs), for a pair pipeline.

    ``global_embeddings`` (one ``(n_i, d)`` array per graph) are stacked in union order, for the pipelines that
    filter pairs or align views. ``visit_budget`` names the walks' budget rule (:data:`~gcc_sgcl.config.VISIT_BUDGETS`).
    """

    def __init__(
        self,
        graphs: dgl.DGLGraph | Sequence[dgl.DGLGraph],
        sampling: SamplingConfig,
        global_embeddings: Sequence[np.ndarray] | None = None,
        visit_budget: str = "pretrain",
    ) -> None:
        self.index = GraphIndex.of(graphs)
        self.sampling = sampling
        self.budget_power = visit_budget_power(visit_budget)
        self.global_embedding = (
            None if global_embeddings is None else np.concatenate(global_embeddings).astype(np.float32)
        )
        if self.global_embedding is not None and len(self.global_embedding) != self.index.num_nodes:
            raise ValueError(
                f"global embeddings have {len(self.global_embedding)} rows for {self.index.num_nodes} nodes"
            )

    def walk(self, starts: np.ndarray, rng: KeyedRandom) -> NodeSets:
        """Node sets of one RWR view per start node."""
        s = self.sampling
        return rwr_node_sets(self.index, starts, s.rw_hops, s.restart_prob, s.walk_length, rng, self.budget_power)

    def build(self, sets: NodeSets, rng: KeyedRandom, global_rows: bool = False) -> ViewBatch:
        """Views of node sets (signs from ``rng``), with their global-embedding rows when asked."""
        s = self.sampling
        views = build_views(self.index, sets, s.positional_embedding_size, s.pe_sign, rng)
        if not global_rows:
            return views
        if self.global_embedding is None:
            raise ValueError("views with global-embedding rows need the sampler's global embeddings")
        return views.replace(global_rows=self.global_embedding[views.nid])

    def views(self, starts: np.ndarray, rng: KeyedRandom) -> ViewBatch:
        """One RWR view per start node."""
        return self.build(self.walk(starts, rng.child("walk")), rng)


class PairSource(Protocol):
    """What turns start nodes into (query, key) views: a pair pipeline (:class:`gcc_sgcl.augment.pipeline.PairPipeline`),
    which may filter walks and transform views; GCC's plain pairs are ``PairPipeline()``, two independent RWR views
    of each start node."""

    needs_global: bool

    def __call__(self, sampler: ViewSampler, starts: np.ndarray, rng: KeyedRandom) -> Pair: ...


def limit_threads() -> None:
    """One BLAS/OpenMP thread for sampling: many tiny eigendecompositions are ~7× slower oversubscribed."""
    torch.set_num_threads(1)
    threadpool_limits(1)


def worker_init(_worker_id: int) -> None:
    """DataLoader ``worker_init_fn``: limit threads (items seed themselves from their index) and leave Ctrl-C and
    SIGTERM to the main process, which ends the workers itself (a worker's own ``KeyboardInterrupt`` prints a
    traceback, and one ended by SIGTERM fails the main process's next step). Workers forked by
    :func:`loader_batches` hold both back until here (one that comes during the fork is dropped)."""
    ignore_signals()
    threading.excepthook = quiet_handover_errors
    limit_threads()


def quiet_handover_errors(args: threading.ExceptHookArgs) -> None:
    """A worker's ``threading.excepthook``: silent when a thread's connection to the main process broke (the thread
    that hands tensors over in shared memory, when the main process stops on Ctrl-C or SIGTERM mid-handover: its
    traceback would follow the one-line message), the default hook otherwise."""
    if not issubclass(args.exc_type, (BrokenPipeError, ConnectionResetError, EOFError)):
        threading.__excepthook__(args)


@contextlib.contextmanager
def sampling_threads() -> Iterator[None]:
    """One torch / BLAS thread inside the block, the caller's settings restored after it: batches built in the
    training process (no DataLoader workers) run single-threaded without changing the model step's threads."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        torch.set_num_threads(previous)


def loader_batches(loader: torch.utils.data.DataLoader) -> Iterator:
    """The batches of ``loader``; when it has no workers each batch is built under :func:`sampling_threads`. Its
    workers are forked with Ctrl-C and SIGTERM held back (:func:`~gcc_sgcl.cli.signals_held`) until their
    :func:`worker_init` ignores them."""
    with signals_held():
        batches = iter(loader)
    while True:
        if loader.num_workers == 0:
            with sampling_threads():
                batch = next(batches, None)
        else:
            batch = next(batches, None)
        if batch is None:
            return
        yield batch


class PretrainPairDataset(torch.utils.data.Dataset):
    """Query/key RWR views of start nodes drawn ∝ in-degree^0.75 over a corpus of graphs (GCC).

    Index ``i`` is the ``i``-th sample of the whole run (step ``i // batch_size``). ``pipeline`` makes the pairs;
    ``global_embeddings`` (one array per graph) feed its filter and alignment.
    """

    def __init__(
        self,
        graphs: Sequence[dgl.DGLGraph],
        sampling: SamplingConfig,
        seed: int,
        length: int,
        pipeline: PairSource,
        global_embeddings: Sequence[np.ndarray] | None = None,
    ) -> None:
        if not graphs:
            raise ValueError("pre-training corpus is empty")
        self.pipeline = pipeline
        if self.pipeline.needs_global and global_embeddings is None:
            raise ValueError("the augmentation pipeline needs global embeddings (filter/align)")
        self.sampler = ViewSampler(graphs, sampling, global_embeddings)
        self.seed = seed
        self.length = length
        weights = self.sampler.index.in_degree.astype(np.float64) ** 0.75
        if weights.sum() <= 0:
            raise ValueError("pre-training corpus has no edges")
        self.cdf = np.cumsum(weights) / weights.sum()

    def __len__(self) -> int:
        return self.length

    def draw_starts(self, rng: KeyedRandom) -> np.ndarray:
        """Start node (union id) of each row, drawn ∝ in-degree^0.75 (stream ``"start"``)."""
        starts = np.searchsorted(self.cdf, rng.child("start").uniform(), side="right")
        return np.minimum(starts, self.sampler.index.num_nodes - 1)

    def item_keys(self, indices: Sequence[int]) -> tuple[np.ndarray, KeyedRandom]:
        """The start nodes and random keys of items ``indices``: what the pipeline builds their pairs from."""
        rng = KeyedRandom.for_items(self.seed, np.asarray(indices, dtype=np.int64))
        return self.draw_starts(rng), rng

    def __getitems__(self, indices: Sequence[int]) -> Pair:
        starts, rng = self.item_keys(indices)
        return self.pipeline(self.sampler, starts, rng)

    def __getitem__(self, index: int) -> Pair:
        return self.__getitems__([index])


def copy_keys(seed: int, indices: np.ndarray, copy: int) -> KeyedRandom:
    """The random keys of copy ``copy`` of the inference views of items ``indices`` (their walks or signs)."""
    return KeyedRandom.for_items(seed, indices).child(f"copy{copy}")


class NodeViewDataset(torch.utils.data.Dataset):
    """One RWR view per node of a graph (GCC's node-level datasets); item ``i`` is node ``i``'s view.

    ``copy`` selects an independent set of walks (inference averages the embeddings of two copies);
    ``visit_budget`` the walks' budget rule (:data:`~gcc_sgcl.config.VISIT_BUDGETS`).
    """

    def __init__(self, graph: dgl.DGLGraph, sampling: SamplingConfig, seed: int = 0, copy: int = 0,
                 visit_budget: str = "pretrain") -> None:
        self.sampler = ViewSampler(graph, sampling, visit_budget=visit_budget)
        self.seed = seed
        self.copy = copy

    def __len__(self) -> int:
        return self.sampler.index.num_nodes

    def __getitems__(self, indices: Sequence[int]) -> ViewBatch:
        indices = np.asarray(indices, dtype=np.int64)
        rng = copy_keys(self.seed, indices, self.copy)
        return self.sampler.views(indices, rng)

    def __getitem__(self, index: int) -> ViewBatch:
        return self.__getitems__([index])


class GraphViewDataset(torch.utils.data.Dataset):
    """Each whole graph as one view (GCC's ``entire_graph``), centre on its highest-degree node.

    With ``pe_sign="random"`` the signs of copy ``copy`` are drawn from ``(seed, index)``.
    """

    def __init__(self, graphs: Sequence[dgl.DGLGraph], sampling: SamplingConfig, seed: int = 0, copy: int = 0) -> None:
        self.graphs = list(graphs)
        self.sampling = sampling
        self.seed = seed
        self.copy = copy

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitems__(self, indices: Sequence[int]) -> ViewBatch:
        indices = np.asarray(indices, dtype=np.int64)
        rng = copy_keys(self.seed, indices, self.copy)
        s = self.sampling
        return whole_graph_views([self.graphs[i] for i in indices], s.positional_embedding_size, s.pe_sign, rng)

    def __getitem__(self, index: int) -> ViewBatch:
        return self.__getitems__([index])


def collate_pairs(pair: Pair) -> tuple[dgl.DGLGraph, dgl.DGLGraph]:
    """DataLoader collate of a :class:`PretrainPairDataset` batch: (batched queries, batched keys)."""
    q, k = pair
    return q.to_dgl(), k.to_dgl()


def collate_views(views: ViewBatch) -> ViewBatch:
    """DataLoader collate of a view dataset's batch: the views its ``__getitems__`` built, as they are."""
    return views


def all_views(
    dataset: NodeViewDataset | GraphViewDataset,
    num_workers: int = 0,
    chunk: int = 1024,
    desc: str = "views",
    progress: bool = True,
) -> ViewBatch:
    """Every view of a view dataset, built ``chunk`` items at a time by ``num_workers`` DataLoader workers (in
    this process, single-threaded, when 0), with a progress bar."""
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=chunk, collate_fn=collate_views, num_workers=num_workers, worker_init_fn=worker_init
    )
    bar = tqdm(loader_batches(loader), total=len(loader), desc=desc, disable=not progress, unit="chunk")
    return concat(list(bar))
