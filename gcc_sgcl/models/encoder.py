"""GCC's graph encoder: structural node inputs → GIN → L2-normalised graph embedding."""
from __future__ import annotations

import dataclasses
from typing import Any

import dgl
import torch
import torch.nn.functional as F
from torch import nn

from gcc_sgcl.config import Config, ModelConfig, SamplingConfig
from gcc_sgcl.models.flat import FlatGraph, model_path
from gcc_sgcl.models.gin import UnsupervisedGIN
from gcc_sgcl.sampling.view import PE, SEED
from gcc_sgcl.settings import default_of


class GraphEncoder(nn.Module):
    """Node input = positional embedding ⊕ degree embedding ⊕ seed flag, encoded by a GIN.

    ``settings`` are the fields of :class:`~gcc_sgcl.config.ModelConfig` (``hidden_size``, ``num_layers``,
    ``degree_embedding_size``, ``max_degree``, ``dropout``, ``readout``, ``apply_node_func``), with its defaults;
    an unknown one is a TypeError. Degrees are the in-degrees inside each (sub)graph, clipped at ``max_degree``
    and embedded in ``degree_embedding_size`` dimensions (``apply_node_func``: see :class:`UnsupervisedGIN`).
    The output is L2-normalised (GCC's ``norm=True``).

    >>> GraphEncoder(positional_embedding_size=16, hidden_size=24, max_degree=100).degree_embedding
    Embedding(101, 16)
    """

    def __init__(self, positional_embedding_size: int = default_of(SamplingConfig, "positional_embedding_size"),
                 **settings: Any) -> None:
        super().__init__()
        m = ModelConfig(**settings)
        self.positional_embedding_size = positional_embedding_size
        self.max_degree = m.max_degree
        self.degree_embedding = nn.Embedding(m.max_degree + 1, m.degree_embedding_size)
        input_dim = positional_embedding_size + m.degree_embedding_size + 1
        self.gnn = UnsupervisedGIN(input_dim, m.hidden_size, m.hidden_size, m.num_layers, m.dropout, m.readout,
                                   m.apply_node_func)

    def node_inputs(self, g: dgl.DGLGraph | FlatGraph) -> torch.Tensor:
        """The (num_nodes, input_dim) node input matrix of ``g``."""
        pe = g.ndata[PE]
        if pe.shape[1] != self.positional_embedding_size:
            raise ValueError(
                f"graph positional embedding has {pe.shape[1]} columns, encoder expects "
                f"positional_embedding_size={self.positional_embedding_size}"
            )
        degrees = g.in_degrees().clamp(max=self.max_degree)
        return torch.cat([pe, self.degree_embedding(degrees), g.ndata[SEED].unsqueeze(1).to(pe.dtype)], dim=-1)

    def forward(self, g: dgl.DGLGraph | FlatGraph) -> torch.Tensor:
        """Return (batch_size, hidden_size) unit-norm embeddings of the batched graph ``g``.

        ``g`` is a ``DGLGraph`` or a :class:`~gcc_sgcl.models.flat.FlatGraph` (see
        :func:`~gcc_sgcl.models.flat.to_model_input`); a ``DGLGraph`` goes the plain way too when
        :func:`~gcc_sgcl.models.flat.model_path` says so for its device (``GCC_SGCL_MODEL_PATH=plain``).
        """
        if isinstance(g, dgl.DGLGraph) and model_path(g.device) == "plain":
            g = FlatGraph.from_dgl(g)
        return F.normalize(self.gnn(g, self.node_inputs(g)), p=2, dim=-1, eps=1e-5)


def build_encoder(cfg: Config) -> GraphEncoder:
    """The encoder described by ``cfg.model`` / ``cfg.sampling``."""
    return GraphEncoder(cfg.sampling.positional_embedding_size, **dataclasses.asdict(cfg.model))
