"""DGL view datasets: RWR pairs for pre-training, one view per node or graph for embedding generation.

Every item is a pure function of ``(seed, index)``: its ``numpy.random.Generator`` is
``default_rng([seed, index])`` (DGL's walk RNG is seeded from it). Items therefore do not depend on
the number of DataLoader workers, and resuming at step ``s`` replays exactly the batches a straight run
would have drawn.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import dgl
import numpy as np
import torch
from threadpoolctl import threadpool_limits

from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.sampling.rwr import rwr_subgraph_nodes
from gcc_sgcl.sampling.spectral import edge_eigen_features, eigen_feature_tensors
from gcc_sgcl.sampling.view import GLOBAL, NID, PE, SEED

if TYPE_CHECKING:
    from gcc_sgcl.augment.pipeline import SGCLPipeline

Pair = tuple[dgl.DGLGraph, dgl.DGLGraph]


def out_csr(g: dgl.DGLGraph) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, indices)`` of ``g``'s out-edge CSR as numpy arrays (DGL's own, not copied)."""
    indptr, indices, _ = g.adj_tensors("csr")
    return indptr.numpy(), indices.numpy()


def induced_edges(indptr: np.ndarray, indices: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` of the subgraph induced on ``nodes`` (distinct parent ids), in view-local ids.

    ``indptr, indices`` is the parent's :func:`out_csr`. Local id ``i`` is ``nodes[i]``; edges come in
    ``dgl.node_subgraph``'s order: by source, then in the parent's CSR order.
    """
    n = len(nodes)
    starts = indptr[nodes]
    counts = indptr[nodes + 1] - starts
    # position in ``indices`` of every out-edge of ``nodes``, source after source
    pos = np.arange(counts.sum()) + np.repeat(starts - (np.cumsum(counts) - counts), counts)
    heads = indices[pos]
    order = np.argsort(nodes, kind="stable")
    at = np.searchsorted(nodes[order], heads).clip(max=max(n - 1, 0))
    inside = nodes[order[at]] == heads
    return np.repeat(np.arange(n), counts)[inside], order[at[inside]]


def make_view(
    g: dgl.DGLGraph,
    nodes: np.ndarray,
    k: int,
    seed_pos: int = 0,
    csr: tuple[np.ndarray, np.ndarray] | None = None,
) -> dgl.DGLGraph:
    """Induced subgraph on ``nodes`` (order kept) with eigen-features, seed flag at ``seed_pos`` and parent ids.

    The same graph and features as ``dgl.node_subgraph`` followed by ``attach_eigen_features``, built from
    numpy arrays at a fraction of the cost; ``csr`` is ``g``'s :func:`out_csr` when the caller keeps it.
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    n = len(nodes)
    src, dst = induced_edges(*(out_csr(g) if csr is None else csr), nodes)
    view = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=n, idtype=g.idtype)
    flag = torch.zeros(n, dtype=torch.int64)
    if n:
        flag[seed_pos] = 1
    view.ndata.update({
        NID: torch.tensor(nodes, dtype=g.idtype),
        **eigen_feature_tensors(edge_eigen_features(src, dst, n, k)),
        SEED: flag,
    })
    return view


def batch_views(views: Sequence[dgl.DGLGraph]) -> dgl.DGLGraph:
    """Batch views keeping only the features the encoder reads."""
    return dgl.batch(list(views), ndata=[PE, SEED], edata=None)


def collate_pairs(batch: Sequence[Pair]) -> Pair:
    """DataLoader collate: a list of (query, key) views → (batched queries, batched keys)."""
    qs, ks = zip(*batch)
    return batch_views(qs), batch_views(ks)


def collate_views(batch: Sequence[dgl.DGLGraph]) -> dgl.DGLGraph:
    """DataLoader collate for single views."""
    return batch_views(batch)


def limit_threads() -> None:
    """One BLAS/OpenMP thread for sampling: many tiny eigendecompositions are ~7× slower oversubscribed."""
    torch.set_num_threads(1)
    threadpool_limits(1)


def worker_init(_worker_id: int) -> None:
    """DataLoader ``worker_init_fn``: limit threads (items seed themselves from their index)."""
    limit_threads()


class PretrainPairDataset(torch.utils.data.Dataset):
    """Query/key RWR views of a start node drawn ∝ degree^0.75 over a corpus of graphs (GCC).

    Index ``i`` is the ``i``-th sample of the whole run (step ``i // batch_size``). An optional
    augmentation ``pipeline`` (SGCL) supplies a view filter (applied to candidate node sets before any
    eigendecomposition) and a pair transform applied to the built views; ``global_embeddings`` (one array
    per graph) feed the filter and alignment.
    """

    def __init__(
        self,
        graphs: Sequence[dgl.DGLGraph],
        sampling: SamplingConfig,
        seed: int,
        length: int,
        pipeline: SGCLPipeline | None = None,
        global_embeddings: Sequence[np.ndarray] | None = None,
    ) -> None:
        if not graphs:
            raise ValueError("pre-training corpus is empty")
        self.graphs = list(graphs)
        self.sampling = sampling
        self.seed = seed
        self.length = length
        self.pipeline = pipeline
        self.global_embeddings = global_embeddings
        # in_degrees() and out_csr() build each graph's CSC and CSR here, in the parent process: forked
        # DataLoader workers then share them (copy-on-write) instead of each building its own copy.
        weights = np.concatenate([g.in_degrees().double().numpy() ** 0.75 for g in self.graphs])
        if weights.sum() <= 0:
            raise ValueError("pre-training corpus has no edges")
        self.cdf = np.cumsum(weights) / weights.sum()
        self.offsets = np.cumsum([0] + [g.num_nodes() for g in self.graphs])
        self.csrs = [out_csr(g) for g in self.graphs]
        if pipeline is not None and pipeline.needs_global and global_embeddings is None:
            raise ValueError("the augmentation pipeline needs global embeddings (filter/align)")

    def __len__(self) -> int:
        return self.length

    def draw_start(self, rng: np.random.Generator) -> tuple[int, int]:
        """(graph index, node id) of a start node drawn ∝ in-degree^0.75."""
        flat = int(np.searchsorted(self.cdf, rng.random(), side="right"))
        flat = min(flat, int(self.offsets[-1]) - 1)
        gi = int(np.searchsorted(self.offsets, flat, side="right")) - 1
        return gi, flat - int(self.offsets[gi])

    def _walk(self, g: dgl.DGLGraph, node: int, rng: np.random.Generator) -> np.ndarray:
        s = self.sampling
        return rwr_subgraph_nodes(g, node, s.rw_hops, s.restart_prob, s.walk_length, rng)

    def __getitem__(self, index: int) -> Pair:
        rng = np.random.default_rng([self.seed, index])
        gi, node = self.draw_start(rng)
        g = self.graphs[gi]
        if self.pipeline is not None and self.pipeline.filter is not None:
            nodes_q, nodes_k, _ = self.pipeline.filter.select(
                lambda: (self._walk(g, node, rng), self._walk(g, node, rng)), self.global_embeddings[gi], rng
            )
        else:
            nodes_q, nodes_k = self._walk(g, node, rng), self._walk(g, node, rng)
        k, csr = self.sampling.positional_embedding_size, self.csrs[gi]
        q, key = make_view(g, nodes_q, k, csr=csr), make_view(g, nodes_k, k, csr=csr)
        if self.pipeline is None:
            return q, key
        if self.pipeline.needs_global_rows:
            emb = self.global_embeddings[gi]
            q.ndata[GLOBAL] = torch.from_numpy(emb[nodes_q]).float()
            key.ndata[GLOBAL] = torch.from_numpy(emb[nodes_k]).float()
        return self.pipeline(q, key, rng)


class NodeViewDataset(torch.utils.data.Dataset):
    """One RWR view per node of a graph (GCC's node-level datasets); item ``i`` is node ``i``'s view."""

    def __init__(self, graph: dgl.DGLGraph, sampling: SamplingConfig, seed: int = 0) -> None:
        self.graph = graph
        self.sampling = sampling
        self.seed = seed
        self.csr = out_csr(graph)

    def __len__(self) -> int:
        return self.graph.num_nodes()

    def __getitem__(self, index: int) -> dgl.DGLGraph:
        rng = np.random.default_rng([self.seed, index])
        s = self.sampling
        nodes = rwr_subgraph_nodes(self.graph, index, s.rw_hops, s.restart_prob, s.walk_length, rng)
        return make_view(self.graph, nodes, s.positional_embedding_size, csr=self.csr)


class GraphViewDataset(torch.utils.data.Dataset):
    """Each whole graph as one view (GCC's ``entire_graph``), seed flag on its highest-degree node."""

    def __init__(self, graphs: Sequence[dgl.DGLGraph], sampling: SamplingConfig) -> None:
        self.graphs = list(graphs)
        self.sampling = sampling

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, index: int) -> dgl.DGLGraph:
        g = self.graphs[index]
        nodes = np.arange(g.num_nodes())
        seed_pos = int(g.out_degrees().argmax()) if g.num_nodes() else 0
        return make_view(g, nodes, self.sampling.positional_embedding_size, seed_pos=seed_pos)
