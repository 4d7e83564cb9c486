"""Panther++: node vectors from Panther's path-sampled similarity (Zhang, Tang, Ma, Tong, Jing and Li, KDD 2015).

Panther estimates the similarity of two nodes as the share of ``R`` random paths that contain both: each path
starts at a node drawn uniformly and takes ``T`` uniform random-walk steps (the graphs here are unweighted), and
``S(u, v) = #{paths holding u and v} / R``. The paper's error bound sets ``R = c / ε² (⌊log2 C(T, 2)⌋ + 1 +
ln(1/δ))``; with ``T = 5`` steps, ``c = 0.5``, ``ε = 0.01``, ``δ = 0.1`` that is ``R`` = 31 513 paths (the
constants as we read the paper; ``c`` and ``ε`` set only how many paths are drawn). Panther++, the paper's vector
form (the one that compares nodes of different graphs, as GCC's similarity-search baseline does), describes node
``v`` by its ``D`` largest similarities ``S(v, ·)`` to other nodes, sorted in decreasing order, zero-padded; ``D``
is ``hidden`` here. No maintained Python package implements Panther (PyPI has none; the authors' code is
C++), so it is written here from the paper with numpy/scipy. Each graph gets its own ``R`` paths; paths do not
cross graphs. A walk that reaches a node without neighbours stays there (an isolated start node's path holds only
itself).

>>> import dgl, numpy as np, torch
>>> ring = dgl.to_bidirected(dgl.graph((torch.arange(6), (torch.arange(6) + 1) % 6)))
>>> v = panther_vectors(ring, 4, np.random.default_rng(0), paths=2000)
>>> v.shape, bool(np.all(np.diff(v, axis=1) <= 0))
((6, 4), True)
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import dgl
import numpy as np
import scipy.sparse as sp

from gcc_sgcl.classical.common import adjacency

PATH_LENGTH = 5
C = 0.5
EPSILON = 0.01
DELTA = 0.1


def path_count(length: int = PATH_LENGTH, c: float = C, epsilon: float = EPSILON, delta: float = DELTA) -> int:
    """Panther's number of sampled paths ``R`` for its error bound (``ε``, ``δ``) at path length ``T``.

    >>> path_count()
    31513
    """
    return math.ceil(c / epsilon**2 * (math.floor(math.log2(math.comb(length, 2))) + 1 + math.log(1 / delta)))


def sample_paths(adj: sp.csr_matrix, paths: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """``(paths, length + 1)`` node ids: random walks of ``length`` uniform steps from uniformly drawn nodes."""
    n = adj.shape[0]
    deg = np.diff(adj.indptr)
    walk = np.empty((paths, length + 1), dtype=np.int64)
    walk[:, 0] = rng.integers(0, n, size=paths)
    for step in range(length):
        here = walk[:, step]
        d = deg[here]
        pick = np.floor(rng.random(paths) * np.maximum(d, 1)).astype(np.int64)
        nxt = adj.indices[np.minimum(adj.indptr[here] + pick, adj.nnz - 1)] if adj.nnz else here
        walk[:, step + 1] = np.where(d > 0, nxt, here)
    return walk


def panther_similarity(adj: sp.csr_matrix, paths: int, length: int, rng: np.random.Generator) -> sp.csr_matrix:
    """Panther's ``S``: for each pair of distinct nodes the share of the sampled paths holding both."""
    n = adj.shape[0]
    walk = sample_paths(adj, paths, length, rng)
    incidence = sp.csr_matrix((np.ones(walk.size), (np.repeat(np.arange(paths), length + 1), walk.ravel())),
                              shape=(paths, n))
    incidence.data[:] = 1.0  # a path holding a node twice holds it once
    together = (incidence.T @ incidence).tocsr()
    together.setdiag(0)
    together.eliminate_zeros()
    return together / paths


def panther_vectors(g: dgl.DGLGraph, dim: int, rng: np.random.Generator, paths: int | None = None,
                    length: int = PATH_LENGTH) -> np.ndarray:
    """The ``(num_nodes, dim)`` Panther++ vectors of ``g``: each node's ``dim`` largest similarities, sorted."""
    if dim < 1:
        raise ValueError(f"Panther++ needs a vector size (--hidden) >= 1, got {dim}")
    s = panther_similarity(adjacency(g), paths or path_count(length), length, rng)
    out = np.zeros((s.shape[0], dim))
    for v in range(s.shape[0]):
        row = np.sort(s.data[s.indptr[v]:s.indptr[v + 1]])[::-1][:dim]
        out[v, :len(row)] = row
    return out


def embed_nodes(graphs: Sequence[dgl.DGLGraph], hidden: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`panther_vectors` of each graph with ``hidden`` columns, rows stacked in order."""
    return np.concatenate([panther_vectors(g, hidden, rng) for g in graphs])
