"""Per-item reference implementations, kept for the equivalence tests and the sampler benchmark only.

These follow GCC's own path one view at a time: a DGL ``random_walk`` per start node (GCC's restart semantics),
``dgl.node_subgraph`` for the view, a dense ``numpy.linalg.eigh`` per view (float64, canonical signs) or GCC's
ARPACK call. The package's sampler (:mod:`gcc_sgcl.sampling`) does the same work for a whole batch at once.
"""
from __future__ import annotations

import math
from typing import Sequence

import dgl
import numpy as np
import scipy.sparse as sp
import torch
from dgl.utils import get_num_threads, set_num_threads
from scipy.sparse.linalg import ArpackError, eigsh

from gcc_sgcl.augment.pipeline import PairPipeline
from gcc_sgcl.config import Config
from gcc_sgcl.sampling.batch import NodeSets, ViewBatch
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.rwr import max_nodes_per_seed
from gcc_sgcl.sampling.spectral import sparse_normalized_adjacency, valid_columns
from gcc_sgcl.sampling.induced import GraphIndex


def reference_rwr_nodes(
    g: dgl.DGLGraph, start: int, rw_hops: int, restart_prob: float, walk_length: int, rng: np.random.Generator
) -> np.ndarray:
    """One RWR view's nodes by DGL's ``random_walk`` (restart schedule ``[0, p, p, …]``): ``start``, then the other
    distinct visited nodes in increasing order; walking stops after GCC's visit budget."""
    budget = int(max_nodes_per_seed(int(g.in_degrees(start)), rw_hops, restart_prob))
    if g.out_degrees(start) == 0:
        return np.array([start], dtype=np.int64)
    schedule = torch.tensor([0.0] + [restart_prob] * (walk_length - 1), dtype=torch.float32)
    chunks, total = [], 0
    while total < budget:
        n_walks = int(math.ceil((budget - total) * restart_prob * 1.2)) + 1
        dgl.seed(int(rng.integers(2**31 - 1)))
        previous = get_num_threads()
        set_num_threads(1)  # dgl.seed seeds every OpenMP thread alike: threads would repeat each other's walks
        try:
            traces, _ = dgl.sampling.random_walk(
                g, torch.full((n_walks,), start, dtype=torch.int64), length=walk_length, restart_prob=schedule
            )
        finally:
            set_num_threads(previous)
        steps = traces[:, 1:].numpy().ravel()
        steps = steps[steps >= 0]
        chunks.append(steps)
        total += steps.size
    visited = np.unique(np.concatenate(chunks)[:budget])
    return np.concatenate([[start], visited[visited != start]]).astype(np.int64)


def reference_eigen(src: np.ndarray, dst: np.ndarray, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(pe, eigvec, eigval)`` of one graph by a dense float64 ``numpy.linalg.eigh`` (canonical signs)."""
    valid = int(valid_columns(np.array([n]), k)[0])
    eigvec, eigval = np.zeros((n, k)), np.full(k, np.nan)
    if valid:
        lap = np.eye(n) - sparse_normalized_adjacency(src, dst, n).toarray()
        lam, u = np.linalg.eigh(lap)
        u = u[:, :valid] * np.where(u[np.abs(u[:, :valid]).argmax(axis=0), np.arange(valid)] < 0, -1.0, 1.0)
        eigvec[:, :valid], eigval[:valid] = u, lam[:valid]
    norms = np.linalg.norm(eigvec, axis=1, keepdims=True)
    return eigvec / np.where(norms > 0, norms, 1.0), eigvec, eigval


def arpack_eigen(
    src: np.ndarray, dst: np.ndarray, n: int, k: int, rng: np.random.Generator, retries: int = 10
) -> tuple[np.ndarray, np.ndarray]:
    """GCC's ``eigen_decomposision``: ARPACK ``eigsh`` (``which="LA"``) of ``D^-1/2 A D^-1/2`` with
    ``ncv = min(n, max(2k + 1, 20))`` and a uniform random start vector, ``ncv`` doubled on an ARPACK error.
    Returns ``(eigval, eigvec)`` of the ``min(n - 2, k)`` smallest Laplacian eigenvalues, ascending (ARPACK may
    miss copies of a repeated eigenvalue)."""
    valid = int(valid_columns(np.array([n]), k)[0])
    if valid == 0:
        return np.zeros(0), np.zeros((n, 0))
    norm_adj: sp.csr_matrix = sparse_normalized_adjacency(src, dst, n)
    ncv = min(n, max(2 * valid + 1, 20))
    v0 = rng.random(n)
    for attempt in range(retries):
        try:
            mu, u = eigsh(norm_adj, k=valid, which="LA", ncv=ncv, v0=v0)
            break
        except ArpackError:
            if attempt + 1 == retries:
                raise
            ncv = min(2 * ncv, n)
    order = np.argsort(-mu, kind="stable")
    return 1.0 - mu[order], u[:, order]


def reference_view(g: dgl.DGLGraph, nodes: np.ndarray, k: int) -> ViewBatch:
    """One view: ``dgl.node_subgraph`` on ``nodes`` (centre first) and :func:`reference_eigen`."""
    sub = dgl.node_subgraph(g, torch.as_tensor(nodes, dtype=g.idtype))
    src, dst = (t.numpy().astype(np.int64) for t in sub.edges(order="eid"))
    n = len(nodes)
    pe, eigvec, eigval = reference_eigen(src, dst, n, k)
    return ViewBatch(
        num_nodes=np.array([n]), num_edges=np.array([len(src)]), src=src, dst=dst,
        nid=np.asarray(nodes, dtype=np.int64), seed_pos=np.zeros(1, dtype=np.int64),
        pe=pe.astype(np.float32), eigvec=eigvec.astype(np.float32), eigval=eigval[None].astype(np.float32),
    )


class ReferencePairs:
    """Pre-training pairs one item at a time: per item a start node, per view a DGL walk and
    :func:`reference_view`; SGCL's filter per item on those walks, then its view steps on the item's pair.

    The start-node rule and the pipeline are the package's; only the per-item view path differs, so its cost is
    what batching replaces.
    """

    def __init__(self, graphs: Sequence[dgl.DGLGraph], cfg: Config, pipeline: PairPipeline | None = None,
                 global_embeddings: Sequence[np.ndarray] | None = None) -> None:
        self.union = dgl.batch(list(graphs))
        self.cfg = cfg
        self.pipeline = pipeline
        index = GraphIndex.of(graphs)
        weights = index.in_degree.astype(np.float64) ** 0.75
        self.cdf = np.cumsum(weights) / weights.sum()
        self.global_embedding = None if global_embeddings is None else np.concatenate(global_embeddings)

    def _walk(self, start: int, rng: np.random.Generator) -> np.ndarray:
        s = self.cfg.sampling
        return reference_rwr_nodes(self.union, start, s.rw_hops, s.restart_prob, s.walk_length, rng)

    def pair(self, index: int) -> tuple[ViewBatch, ViewBatch]:
        """The (query, key) views of item ``index``."""
        rng = np.random.default_rng([self.cfg.train.seed, index])
        start = int(min(np.searchsorted(self.cdf, rng.random(), side="right"), len(self.cdf) - 1))
        nodes_q, nodes_k = self._walk(start, rng), self._walk(start, rng)
        f = None if self.pipeline is None else self.pipeline.filter
        if f is not None and rng.random() < f.p:
            for _ in range(f.t_max - 1):
                sets = [NodeSets(np.array([len(x)]), x) for x in (nodes_q, nodes_k)]
                if f.accept(*sets, self.global_embedding)[0]:
                    break
                nodes_q, nodes_k = self._walk(start, rng), self._walk(start, rng)
        k = self.cfg.sampling.positional_embedding_size
        q, key = reference_view(self.union, nodes_q, k), reference_view(self.union, nodes_k, k)
        if self.pipeline is None:
            return q, key
        if self.pipeline.needs_global_rows:
            q = q.replace(global_rows=self.global_embedding[q.nid].astype(np.float32))
            key = key.replace(global_rows=self.global_embedding[key.nid].astype(np.float32))
        keys = KeyedRandom.from_generator(rng, 1)
        for i, step in enumerate(self.pipeline.steps):
            q, key = step(q, key, keys.child(i))
        return q, key
