"""GIN with a readout at every layer, as GCC's ``UnsupervisedGIN`` (built on ``dgl.nn.GINConv``)."""
from __future__ import annotations

import dgl
import torch
from dgl.nn import GINConv, Set2Set, SumPooling
from torch import nn


def _mlp(in_dim: int, hidden: int, out_dim: int, apply_node_func: bool) -> nn.Sequential:
    """The 2-layer MLP applied after each GIN aggregation; with ``apply_node_func`` its output goes through
    batch norm and ReLU (GCC's ``ApplyNodeFunc``)."""
    layers = [nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, out_dim)]
    if apply_node_func:
        layers += [nn.BatchNorm1d(out_dim), nn.ReLU()]
    return nn.Sequential(*layers)


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

    def forward(self, g: dgl.DGLGraph, x: torch.Tensor) -> torch.Tensor:
        """Return the (batch_size, output_dim) graph representations of the batched graph ``g``."""
        states = [x]
        h = x
        for conv, norm in zip(self.convs, self.norms):
            h = torch.relu(norm(conv(g, h)))
            states.append(h)
        if self.readout == "set2set":
            return self.dropout(self.head(self.set2set(g, h)))
        return sum(self.dropout(head(self.pool(g, s))) for head, s in zip(self.heads, states))
