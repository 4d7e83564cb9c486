"""GIN with a readout at every layer, as GCC's ``UnsupervisedGIN`` (built on ``dgl.nn.GINConv``).

The same modules run on two paths: DGL's message passing on a batched ``DGLGraph``, or plain torch on a
:class:`~gcc_sgcl.models.flat.FlatGraph` (for devices the installed DGL cannot reach). The plain path sums
messages and pools nodes with ``index_add_`` in edge / node order, which is the order DGL's CPU kernels add
in, so both give the same bits there; gathering with ``index_select`` (not ``h[src]``, whose backward adds in
another order) keeps the gradients equal too.
"""
from __future__ import annotations

import dgl
import torch
from dgl.nn import GINConv, Set2Set, SumPooling
from torch import nn

from gcc_sgcl.models.flat import FlatGraph, PlainPathError


def _mlp(in_dim: int, hidden: int, out_dim: int, apply_node_func: bool) -> nn.Sequential:
    """The 2-layer MLP applied after each GIN aggregation; with ``apply_node_func`` its output goes through
    batch norm and ReLU (GCC's ``ApplyNodeFunc``)."""
    layers = [nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, out_dim)]
    if apply_node_func:
        layers += [nn.BatchNorm1d(out_dim), nn.ReLU()]
    return nn.Sequential(*layers)


def gin_conv_plain(conv: GINConv, g: FlatGraph, h: torch.Tensor) -> torch.Tensor:
    """``conv(g, h)`` in plain torch for the layers built here (sum aggregation, no activation): its MLP on
    ``(1 + eps)·h + Σ_{in-edges} h[src]``, the sum written as DGL's ``(1 + eps) * feat_dst + neigh``."""
    agg = torch.zeros_like(h).index_add_(0, g.dst, h.index_select(0, g.src))
    return conv.apply_func((1 + conv.eps) * h + agg)


def sum_pool_plain(g: FlatGraph, h: torch.Tensor) -> torch.Tensor:
    """``SumPooling()(g, h)`` in plain torch: ``(B, d)`` sums of the node rows of each view."""
    return h.new_zeros((g.batch_size, h.shape[1])).index_add_(0, g.node_graph, h)


class UnsupervisedGIN(nn.Module):
    """GIN encoder producing one vector per graph.

    ``num_layers`` counts the input layer, as GCC (``num_layers=5`` = input + 4 ``GINConv`` layers). Each
    ``GINConv`` (sum aggregation, fixed eps = 0) applies a 2-layer MLP, followed with ``apply_node_func`` by
    batch norm and ReLU (GCC's ``ApplyNodeFunc``; ``False`` is this project's structure before that was
    added), and then by the outer batch norm and ReLU. With ``readout="sum"``
    every layer's node states (input included) are sum-pooled, mapped to ``output_dim`` by a linear layer,
    dropped out and summed over layers (GCC's score over layers); with ``readout="set2set"`` the last
    layer's node states go through ``Set2Set`` and a linear layer instead.
    """

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        output_dim: int,
        num_layers: int = 5,
        dropout: float = 0.5,
        readout: str = "sum",
        apply_node_func: bool = True,
    ) -> None:
        super().__init__()
        if num_layers < 2:
            raise ValueError(f"num_layers must be >= 2 (input layer + at least one GIN layer), got {num_layers}")
        if readout not in ("sum", "set2set"):
            raise ValueError(f"readout must be 'sum' or 'set2set', got {readout!r}")
        self.readout = readout
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        for layer in range(num_layers - 1):
            in_dim = input_dim if layer == 0 else hidden_dim
            self.convs.append(GINConv(_mlp(in_dim, hidden_dim, hidden_dim, apply_node_func), aggregator_type="sum"))
            self.norms.append(nn.BatchNorm1d(hidden_dim))
        self.pool = SumPooling()
        if readout == "sum":
            dims = [input_dim] + [hidden_dim] * (num_layers - 1)
            self.heads = nn.ModuleList(nn.Linear(d, output_dim) for d in dims)
        else:
            self.set2set = Set2Set(hidden_dim, n_iters=3, n_layers=1)
            self.head = nn.Linear(2 * hidden_dim, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, g: dgl.DGLGraph | FlatGraph, x: torch.Tensor) -> torch.Tensor:
        """Return the (batch_size, output_dim) graph representations of the batched graph ``g`` (a ``DGLGraph``:
        DGL's kernels; a :class:`FlatGraph`: plain torch, same parameters)."""
        plain = isinstance(g, FlatGraph)
        if plain and self.readout == "set2set":
            raise PlainPathError(
                "readout='set2set' runs on DGL only, and the installed DGL cannot reach this device: use "
                "readout='sum' (the default), run on CPU (-1), or install a CUDA build of DGL"
            )
        conv_of = (lambda conv, h: gin_conv_plain(conv, g, h)) if plain else (lambda conv, h: conv(g, h))
        pool = (lambda s: sum_pool_plain(g, s)) if plain else (lambda s: self.pool(g, s))
        states = [x]
        h = x
        for conv, norm in zip(self.convs, self.norms):
            h = torch.relu(norm(conv_of(conv, h)))
            states.append(h)
        if self.readout == "set2set":
            return self.dropout(self.head(self.set2set(g, h)))
        return sum(self.dropout(head(pool(s))) for head, s in zip(self.heads, states))
