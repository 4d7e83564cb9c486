"""The encoder's input without DGL: a batch of views as plain tensors, and the choice between the two paths.

The registry's ``dgl`` wheels are CPU-only, so on a CUDA device the encoder reads a :class:`FlatGraph` — the
concatenated edges and node features of a :class:`~gcc_sgcl.sampling.batch.ViewBatch` as torch tensors — and
runs its message passing in plain torch (:mod:`gcc_sgcl.models.gin`). The plain path is exact: outputs, loss and
gradients are ``torch.equal`` to the DGL path on the CPU (``tests/test_gpu_path.py``), and both read the same
parameters, so a checkpoint trained on either path loads on the other. It is slower than DGL's CPU kernels,
so DGL stays the CPU path.

``GCC_SGCL_MODEL_PATH`` (``auto``, the default; ``dgl``; ``plain``) overrides the choice, e.g. to run the
plain path on the CPU for comparisons.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import dgl
import numpy as np
import torch

from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.view import PE, SEED

MODEL_PATH_ENV = "GCC_SGCL_MODEL_PATH"
MODEL_PATHS = ("auto", "dgl", "plain")
# the node features the encoder reads (GraphEncoder.node_inputs)
ENCODER_FEATURES = (PE, SEED)


class PlainPathError(ValueError):
    """The model or setting cannot run on the plain-torch path; the message says what to do instead."""


@dataclass(frozen=True)
class FlatGraph:
    """``B`` views as tensors: what the plain path reads instead of a batched ``DGLGraph``.

    Attributes:
        src, dst: ``(E,)`` int64 endpoints of every edge, as batch-wide node ids (view after view, edges in the
            order of the batched graph's edge ids).
        node_graph: ``(N,)`` int64 view index of every node.
        sizes: ``(B,)`` int64 nodes per view.
        ndata: node features by name (``PE``, ``SEED``), ``(N, ...)`` each.

    It answers the few ``DGLGraph`` calls the encoder and training loop make (``ndata``, ``in_degrees()``,
    ``num_nodes()``, ``batch_size``, ``to(device)``).
    """

    src: torch.Tensor
    dst: torch.Tensor
    node_graph: torch.Tensor
    sizes: torch.Tensor
    ndata: dict[str, torch.Tensor]

    @property
    def batch_size(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def device(self) -> torch.device:
        return self.src.device

    def num_nodes(self) -> int:
        return int(self.node_graph.shape[0])

    def num_edges(self) -> int:
        return int(self.src.shape[0])

    def in_degrees(self) -> torch.Tensor:
        """``(N,)`` int64 in-degree of every node inside its view (edges counted with multiplicity)."""
        return torch.bincount(self.dst, minlength=self.num_nodes())

    def to(self, device: torch.device | str) -> FlatGraph:
        """This batch with every tensor on ``device``."""
        move = lambda t: t.to(device)  # noqa: E731
        return FlatGraph(move(self.src), move(self.dst), move(self.node_graph), move(self.sizes),
                         {name: move(t) for name, t in self.ndata.items()})

    @classmethod
    def from_dgl(cls, g: dgl.DGLGraph, features: tuple[str, ...] = ENCODER_FEATURES) -> FlatGraph:
        """The views of a batched ``DGLGraph`` (on the same device), edges in edge-id order."""
        src, dst = g.edges(order="eid")
        sizes = g.batch_num_nodes().to(torch.int64)
        node_graph = torch.repeat_interleave(torch.arange(len(sizes), device=sizes.device), sizes)
        return cls(src.to(torch.int64), dst.to(torch.int64), node_graph, sizes,
                   {name: g.ndata[name] for name in features})

    @classmethod
    def from_views(cls, views: ViewBatch, features: tuple[str, ...] = ENCODER_FEATURES) -> FlatGraph:
        """The views of a :class:`ViewBatch`, identical to ``FlatGraph.from_dgl(views.to_dgl(features))``."""
        base = np.repeat(views.node_ptr[:-1], views.num_edges)
        sizes = views.num_nodes.astype(np.int64)
        return cls(torch.from_numpy(views.src + base), torch.from_numpy(views.dst + base),
                   torch.from_numpy(np.repeat(np.arange(len(sizes)), sizes)), torch.from_numpy(sizes),
                   {name: torch.from_numpy(np.ascontiguousarray(views._feature(name))) for name in features})


def dgl_sees_gpu(index: int) -> bool:
    """Whether the installed DGL can use CUDA device ``index``: false for the CPU-only DGL builds (the
    package registry's ``dgl`` wheels), which report no CUDA device even where torch sees one."""
    return bool(dgl.ndarray.gpu(index).exist)


def requested_path() -> str:
    """The path asked for by ``GCC_SGCL_MODEL_PATH`` (``auto`` when unset)."""
    value = os.environ.get(MODEL_PATH_ENV, "auto").strip().lower() or "auto"
    if value not in MODEL_PATHS:
        raise PlainPathError(f"{MODEL_PATH_ENV}={value!r}: choose one of {', '.join(MODEL_PATHS)}")
    return value


def model_path(device: torch.device | str, dgl_gpu: Callable[[int], bool] = dgl_sees_gpu) -> str:
    """``"dgl"`` or ``"plain"``: how the encoder runs on ``device``.

    DGL on the CPU and on a GPU that the installed DGL can use; plain torch on a GPU it cannot (the CPU-only
    DGL wheels). ``GCC_SGCL_MODEL_PATH`` overrides ``auto``; asking for ``dgl`` where DGL cannot reach the GPU
    is refused rather than failing later inside DGL.

    >>> model_path("cpu")
    'dgl'
    """
    device = torch.device(device)
    asked = requested_path()
    on_dgl = device.type == "cpu" or (device.type == "cuda" and dgl_gpu(device.index or 0))
    if asked == "dgl" and not on_dgl:
        raise PlainPathError(f"{MODEL_PATH_ENV}=dgl, but the installed DGL cannot place graphs on {device}: "
                             f"unset it to use the plain-torch path there")
    if asked == "auto":
        return "dgl" if on_dgl else "plain"
    return asked


def to_model_input(
    batch: dgl.DGLGraph | ViewBatch, device: torch.device | str, path: str | None = None
) -> dgl.DGLGraph | FlatGraph:
    """The encoder's input for ``batch`` (a batched ``DGLGraph`` or a :class:`ViewBatch`) on ``device``: a
    ``DGLGraph`` on the DGL path, a :class:`FlatGraph` on the plain path (``path``, default
    :func:`model_path`)."""
    path = model_path(device) if path is None else path
    if path == "dgl":
        g = batch.to_dgl() if isinstance(batch, ViewBatch) else batch
        return g.to(device)
    if isinstance(batch, ViewBatch):
        return FlatGraph.from_views(batch).to(device)
    return FlatGraph.from_dgl(batch).to(device)
