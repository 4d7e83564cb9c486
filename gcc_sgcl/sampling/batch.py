"""A batch of views as flat numpy arrays: what sampling builds, augmentations transform and the encoder reads.

Views are small graphs (the feature names and their meaning are in :mod:`gcc_sgcl.sampling.view`). A
:class:`ViewBatch` keeps ``B`` of them concatenated: node rows ``node_ptr[b]:node_ptr[b+1]`` and edge rows
``edge_ptr[b]:edge_ptr[b+1]`` belong to view ``b``; edges hold view-local node ids. Every operation returns a
new batch and never writes into the arrays of its input (views of one pair may share arrays).
:meth:`ViewBatch.to_dgl` builds the batched ``DGLGraph`` directly from the concatenated arrays.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import dgl
import numpy as np
import torch

from gcc_sgcl.sampling.view import EIGVAL, EIGVEC, GLOBAL, NID, PE, SEED


def offsets(counts: np.ndarray) -> np.ndarray:
    """``(len(counts) + 1,)`` start offsets of consecutive segments of the given sizes."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def segment_ids(counts: np.ndarray) -> np.ndarray:
    """Segment index of every element of consecutive segments of the given sizes."""
    return np.repeat(np.arange(len(counts)), counts)


def runs(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(starts[i], starts[i] + counts[i])`` (one cumulative sum over unit steps).

    >>> runs(np.array([5, 0, 2]), np.array([2, 0, 3]))
    array([5, 6, 2, 3, 4])
    """
    counts = np.asarray(counts, dtype=np.int64)
    if (counts < 0).any():
        raise ValueError(f"counts must be >= 0, got {counts.min()}")
    nonempty = counts > 0
    starts, counts = np.asarray(starts, dtype=np.int64)[nonempty], counts[nonempty]
    step = np.ones(int(counts.sum()), dtype=np.int64)
    if len(step):
        step[0] = starts[0]
        step[np.cumsum(counts[:-1])] = starts[1:] - starts[:-1] - counts[:-1] + 1
    return np.cumsum(step)


def distinct(values: np.ndarray, return_counts: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """``np.unique`` of a 1-d integer array (its sorted distinct values, and how often each occurs when asked), by
    one sort: numpy 2's hash-based ``unique`` is ~8x slower on the views' codes.

    >>> distinct(np.array([5, 2, 5, 7]), return_counts=True)
    (array([2, 5, 7]), array([1, 2, 1]))
    """
    ordered = np.sort(values)
    first = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(ordered) else np.zeros(0, np.int64)
    if not return_counts:
        return ordered[first]
    return ordered[first], np.diff(np.append(first, len(ordered)))


def positions(counts: np.ndarray) -> np.ndarray:
    """Position of every element inside its segment (``0 .. counts[b]-1`` for segment ``b``)."""
    return runs(np.zeros(len(counts), dtype=np.int64), counts)


@dataclass(frozen=True)
class ViewBatch:
    """``B`` views as concatenated arrays (see the module docstring).

    Attributes:
        num_nodes: ``(B,)`` nodes per view.  num_edges: ``(B,)`` directed edges per view.
        src, dst: ``(E,)`` view-local endpoints of every edge, view after view.
        nid: ``(N,)`` id of every node in the graph the views were sampled from.
        seed_pos: ``(B,)`` local id of each view's centre node.
        pe, eigvec: ``(N, k)`` float32 positional embedding / raw eigenvectors (see ``view.py``).
        eigval: ``(B, k)`` float32 eigenvalue of each column, NaN where padded.
        global_rows: ``(N, d)`` float32 rows of the parent's global embedding, or ``None``.
        pe_sign: how eigenvector signs were chosen (``"random"`` or ``"canonical"``); eigen-features
            recomputed after an augmentation follow the same rule.
    """

    num_nodes: np.ndarray
    num_edges: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    nid: np.ndarray
    seed_pos: np.ndarray
    pe: np.ndarray
    eigvec: np.ndarray
    eigval: np.ndarray
    global_rows: np.ndarray | None = None
    pe_sign: str = "canonical"

    def __len__(self) -> int:
        return len(self.num_nodes)

    @property
    def k(self) -> int:
        """Positional-embedding size."""
        return self.pe.shape[1]

    @property
    def node_ptr(self) -> np.ndarray:
        return offsets(self.num_nodes)

    @property
    def edge_ptr(self) -> np.ndarray:
        return offsets(self.num_edges)

    @property
    def node_view(self) -> np.ndarray:
        """``(N,)`` view index of every node row."""
        return segment_ids(self.num_nodes)

    @property
    def edge_view(self) -> np.ndarray:
        """``(E,)`` view index of every edge row."""
        return segment_ids(self.num_edges)

    @property
    def num_valid(self) -> np.ndarray:
        """``(B,)`` real (non-padded) eigen columns per view."""
        return (~np.isnan(self.eigval)).sum(axis=1)

    def replace(self, **changes: object) -> ViewBatch:
        """A new batch with some arrays replaced."""
        return dataclasses.replace(self, **changes)

    def edges_of(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` of view ``b`` (local ids)."""
        lo, hi = self.edge_ptr[b], self.edge_ptr[b + 1]
        return self.src[lo:hi], self.dst[lo:hi]

    def in_degrees(self) -> np.ndarray:
        """``(N,)`` in-degree of every node row inside its view (edges counted with multiplicity)."""
        target = self.dst + np.repeat(self.node_ptr[:-1], self.num_edges)
        return np.bincount(target, minlength=int(self.num_nodes.sum()))

    def select(self, rows: np.ndarray) -> ViewBatch:
        """The views ``rows`` (in that order)."""
        rows = np.asarray(rows, dtype=np.int64)
        node_idx = ranges(self.node_ptr, rows)
        edge_idx = ranges(self.edge_ptr, rows)
        return ViewBatch(
            num_nodes=self.num_nodes[rows], num_edges=self.num_edges[rows], src=self.src[edge_idx],
            dst=self.dst[edge_idx], nid=self.nid[node_idx], seed_pos=self.seed_pos[rows], pe=self.pe[node_idx],
            eigvec=self.eigvec[node_idx], eigval=self.eigval[rows],
            global_rows=None if self.global_rows is None else self.global_rows[node_idx], pe_sign=self.pe_sign,
        )

    def span(self, start: int, stop: int) -> ViewBatch:
        """Views ``start:stop`` as slices of these arrays, not copies (the views of ``select(arange(start, stop))``).

        >>> views = ViewBatch(np.array([2, 1, 3]), np.array([2, 0, 2]), np.array([0, 1, 0, 2]), np.array([1, 0, 2, 0]),
        ...                   np.arange(6), np.zeros(3, np.int64), np.zeros((6, 1)), np.zeros((6, 1)), np.zeros((3, 1)))
        >>> part = views.span(1, 3)
        >>> part.num_nodes.tolist(), part.nid.tolist(), part.src.tolist()
        ([1, 3], [2, 3, 4, 5], [0, 2])
        """
        (a, b), (c, d) = self.node_ptr[[start, stop]], self.edge_ptr[[start, stop]]
        return ViewBatch(
            num_nodes=self.num_nodes[start:stop], num_edges=self.num_edges[start:stop], src=self.src[c:d],
            dst=self.dst[c:d], nid=self.nid[a:b], seed_pos=self.seed_pos[start:stop], pe=self.pe[a:b],
            eigvec=self.eigvec[a:b], eigval=self.eigval[start:stop],
            global_rows=None if self.global_rows is None else self.global_rows[a:b], pe_sign=self.pe_sign,
        )

    def encoder_part(self) -> ViewBatch:
        """These views with only what an encoder reads (structure, ``pe``, centres): the raw eigenvectors have no
        columns left. For views that are only embedded: a third less to copy between processes."""
        return self.replace(eigvec=np.empty((len(self.eigvec), 0), dtype=self.eigvec.dtype))  # no view of the old

    def update(self, rows: np.ndarray, part: ViewBatch) -> ViewBatch:
        """This batch with views ``rows`` replaced by the views of ``part`` (same order)."""
        return self.update_many([(rows, part)])

    def update_many(self, changes: Sequence[tuple[np.ndarray, ViewBatch]]) -> ViewBatch:
        """This batch with, for each ``(rows, part)``, views ``rows`` replaced by those of ``part`` (one gather)."""
        changes = [(np.asarray(rows, dtype=np.int64), part) for rows, part in changes if len(rows)]
        if not changes:
            return self
        source = np.arange(len(self))
        start = len(self)
        for rows, part in changes:
            source[rows] = start + np.arange(len(rows))
            start += len(rows)
        return concat([self] + [part for _, part in changes]).select(source)

    def induce(self, keep: np.ndarray) -> ViewBatch:
        """Every view restricted to its node rows where ``keep`` (``(N,)`` bool) is true, edges induced.

        Kept nodes keep their order (so a kept centre stays the centre); edges keep their order. Eigen features
        are the kept rows of the old ones: recompute them with :func:`~gcc_sgcl.sampling.induced.with_eigen_features`
        when the structure matters.
        """
        keep = np.asarray(keep, dtype=bool)
        counts = np.bincount(self.node_view[keep], minlength=len(self))
        new_local = np.cumsum(keep) - 1 - np.repeat(offsets(counts)[:-1], self.num_nodes)
        base = np.repeat(self.node_ptr[:-1], self.num_edges)
        s, d = self.src + base, self.dst + base
        kept_edges = keep[s] & keep[d]
        seed_rows = self.node_ptr[:-1] + self.seed_pos
        if not keep[seed_rows].all():
            raise ValueError("induce must keep every view's centre node")
        return ViewBatch(
            num_nodes=counts, num_edges=np.bincount(self.edge_view[kept_edges], minlength=len(self)),
            src=new_local[s[kept_edges]], dst=new_local[d[kept_edges]], nid=self.nid[keep],
            seed_pos=new_local[seed_rows], pe=self.pe[keep], eigvec=self.eigvec[keep], eigval=self.eigval,
            global_rows=None if self.global_rows is None else self.global_rows[keep], pe_sign=self.pe_sign,
        )

    def padded(self, x: np.ndarray, fill: float = 0.0) -> np.ndarray:
        """``(B, max nodes, ...)`` copy of the node-row array ``x``, ``fill`` past each view's nodes."""
        out = np.full((len(self), int(self.num_nodes.max(initial=0))) + x.shape[1:], fill, dtype=x.dtype)
        out[self.node_view, positions(self.num_nodes)] = x
        return out

    def to_dgl(self, features: Sequence[str] = (PE, SEED), device: torch.device | str = "cpu") -> dgl.DGLGraph:
        """The batched ``DGLGraph`` of these views with the node ``features`` named (of ``PE``, ``SEED``,
        ``EIGVEC``, ``EIGVAL``, ``NID``, ``GLOBAL``), built from the concatenated edges in one call."""
        base = np.repeat(self.node_ptr[:-1], self.num_edges)
        g = dgl.graph(
            (torch.from_numpy(self.src + base), torch.from_numpy(self.dst + base)),
            num_nodes=int(self.num_nodes.sum()), idtype=torch.int64,
        )
        g.set_batch_num_nodes(torch.from_numpy(self.num_nodes.astype(np.int64)))
        g.set_batch_num_edges(torch.from_numpy(self.num_edges.astype(np.int64)))
        g.ndata.update({name: torch.from_numpy(np.ascontiguousarray(self._feature(name))) for name in features})
        return g.to(device)

    def _feature(self, name: str) -> np.ndarray:
        if name == SEED:
            flag = np.zeros(int(self.num_nodes.sum()), dtype=np.int64)
            flag[self.node_ptr[:-1] + self.seed_pos] = 1
            return flag
        if name == EIGVAL:
            return np.repeat(self.eigval, self.num_nodes, axis=0)
        arrays = {PE: self.pe, EIGVEC: self.eigvec, NID: self.nid, GLOBAL: self.global_rows}
        if name not in arrays or arrays[name] is None:
            raise ValueError(f"view batches carry no feature {name!r}")
        return arrays[name]

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays of this batch by field name (for ``np.savez``); inverse of :meth:`from_arrays`."""
        arrays = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "pe_sign"}
        if self.global_rows is None:
            del arrays["global_rows"]
        return {**arrays, "pe_sign": np.array(self.pe_sign)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], prefix: str = "") -> ViewBatch:
        """The batch stored by :meth:`to_arrays` (keys optionally prefixed)."""
        values = {f.name: arrays.get(prefix + f.name) for f in dataclasses.fields(cls)}
        values["pe_sign"] = str(values["pe_sign"])
        return cls(**values)

    @classmethod
    def from_dgl(cls, g: dgl.DGLGraph, pe_sign: str = "canonical") -> ViewBatch:
        """The views of a (batched) ``DGLGraph`` with ``PE``, ``EIGVEC``, ``EIGVAL`` and ``SEED`` node features
        (and optionally ``NID`` and ``GLOBAL``), e.g. one built by :meth:`to_dgl`."""
        missing = [name for name in (PE, EIGVEC, EIGVAL, SEED) if name not in g.ndata]
        if missing:
            raise ValueError(f"a view needs the node features {missing} (see gcc_sgcl.sampling.view)")
        num_nodes = g.batch_num_nodes().numpy().astype(np.int64)
        num_edges = g.batch_num_edges().numpy().astype(np.int64)
        node_ptr = offsets(num_nodes)
        src, dst = (t.numpy().astype(np.int64) for t in g.edges(order="eid"))
        base = np.repeat(node_ptr[:-1], num_edges)
        seed_rows = np.flatnonzero(g.ndata[SEED].numpy())
        if len(seed_rows) != len(num_nodes):
            raise ValueError(f"every view needs exactly one centre node (SEED), got {len(seed_rows)} for "
                             f"{len(num_nodes)}")
        nid = g.ndata[NID].numpy().astype(np.int64) if NID in g.ndata else positions(num_nodes)
        return cls(
            num_nodes=num_nodes, num_edges=num_edges, src=src - base, dst=dst - base, nid=nid,
            seed_pos=seed_rows - node_ptr[:-1], pe=g.ndata[PE].numpy().astype(np.float32),
            eigvec=g.ndata[EIGVEC].numpy().astype(np.float32),
            eigval=g.ndata[EIGVAL].numpy()[node_ptr[:-1]].astype(np.float32),
            global_rows=g.ndata[GLOBAL].numpy().astype(np.float32) if GLOBAL in g.ndata else None,
            pe_sign=pe_sign,
        )


def concat(batches: Sequence[ViewBatch]) -> ViewBatch:
    """The views of ``batches`` one after the other."""
    first = batches[0]
    with_global = all(b.global_rows is not None for b in batches)
    return ViewBatch(
        num_nodes=np.concatenate([b.num_nodes for b in batches]),
        num_edges=np.concatenate([b.num_edges for b in batches]),
        src=np.concatenate([b.src for b in batches]), dst=np.concatenate([b.dst for b in batches]),
        nid=np.concatenate([b.nid for b in batches]),
        seed_pos=np.concatenate([b.seed_pos for b in batches]),
        pe=np.concatenate([b.pe for b in batches]), eigvec=np.concatenate([b.eigvec for b in batches]),
        eigval=np.concatenate([b.eigval for b in batches]).reshape(-1, first.k),
        global_rows=np.concatenate([b.global_rows for b in batches]) if with_global else None,
        pe_sign=first.pe_sign,
    )


def ranges(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(ptr[r], ptr[r+1])`` over ``rows`` (the element indices of segments ``rows``)."""
    return runs(ptr[rows], ptr[rows + 1] - ptr[rows])


@dataclass(frozen=True)
class NodeSets:
    """``B`` node sets (e.g. the nodes of RWR views before their graphs are built), concatenated."""

    num_nodes: np.ndarray
    nodes: np.ndarray

    def __len__(self) -> int:
        return len(self.num_nodes)

    def select(self, rows: np.ndarray) -> NodeSets:
        """The sets ``rows`` (in that order)."""
        rows = np.asarray(rows, dtype=np.int64)
        return NodeSets(self.num_nodes[rows], self.nodes[ranges(offsets(self.num_nodes), rows)])

    def update(self, rows: np.ndarray, part: NodeSets) -> NodeSets:
        """These sets with sets ``rows`` replaced by those of ``part`` (same order)."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) == 0:
            return self
        source = np.arange(len(self))
        source[rows] = len(self) + np.arange(len(rows))
        joined = NodeSets(np.concatenate([self.num_nodes, part.num_nodes]), np.concatenate([self.nodes, part.nodes]))
        return joined.select(source)
