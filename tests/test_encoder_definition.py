"""The encoder against GCC's ``UnsupervisedGIN`` equations, written here in plain torch.

The other model tests compare the encoder with itself (DGL against the plain path, a checkpoint round trip, layer
types), so a wrong but consistent layer -- the outer ReLU dropped -- passed them all. Here every expected value is
computed from the module's ``state_dict`` by explicit matrix products on small fixed graphs; package code only builds
the modules and the views under test. Batch norms get running statistics and affine parameters away from their
defaults, so a norm left out, misplaced or reading the wrong statistics shows, in eval mode (running statistics)
and in train mode (batch statistics, dropout 0 so the output is deterministic). Last, a node's embedding row
(``generate``, ``embed_nodes``: streamed or from built copies) is pinned to the mean over its views of these
equations' unit-norm outputs.
"""
from __future__ import annotations

import dgl
import networkx as nx
import numpy as np
import pytest
import torch
from torch import nn

from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.engine.inference import embed_parts
from gcc_sgcl.engine.stream import ViewSource, streamed_rows
from gcc_sgcl.engine.threads import ThreadPlan
from gcc_sgcl.models import FlatGraph, GraphEncoder, UnsupervisedGIN
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.dataset import NodeViewDataset
from gcc_sgcl.sampling.view import PE, SEED

Weights = dict[str, torch.Tensor]

GCC_EPS = 0.0  # GINConv's eps: GCC's learn_eps=False, init 0
BN_EPS = 1e-5  # BatchNorm1d's default, as GCC's
NORM_EPS = 1e-5  # the floor of GCC's L2 normalisation (norm=True)
SET2SET_ITERS = 3  # this project's Set2Set readout: 3 iterations, a one-layer LSTM


# ------------------------------------------------------------------------------------------------------------
# Inputs


def _graphs() -> dgl.DGLGraph:
    """A path, a triangle with a pendant, a star of 4 leaves (edges both ways) and a one-way path (so that a node
    summing its out-neighbours instead of its in-neighbours shows), batched."""
    undirected = [([0, 1, 2], [1, 2, 3]), ([0, 1, 2, 2], [1, 2, 0, 3]), ([0, 0, 0, 0], [1, 2, 3, 4])]
    graphs = [dgl.to_bidirected(dgl.graph((torch.tensor(s), torch.tensor(d)))) for s, d in undirected]
    return dgl.batch([*graphs, dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 2])))])


def _adjacency(src: torch.Tensor, dst: torch.Tensor, n: int) -> torch.Tensor:
    """``(n, n)`` float64 ``A[v, u]`` = number of edges ``u -> v``: ``A @ h`` sums each node's in-neighbours."""
    adj = torch.zeros(n, n, dtype=torch.float64)
    return adj.index_put_((dst.long(), src.long()), torch.ones(len(src), dtype=torch.float64), accumulate=True)


def _membership(sizes: torch.Tensor) -> torch.Tensor:
    """``(B, N)`` float64 one-hot of each node's graph: ``M @ h`` sum-pools each graph's node rows."""
    graph_of = torch.repeat_interleave(torch.arange(len(sizes)), sizes.long())
    return nn.functional.one_hot(graph_of, len(sizes)).T.to(torch.float64)


def _perturbed(module: nn.Module, seed: int) -> nn.Module:
    """``module`` (in place) with every batch norm's running mean / variance and scale / shift drawn away from
    their defaults (0, 1, 1, 0), so that eval mode and a missing or misplaced norm change the numbers."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for bn in (m for m in module.modules() if isinstance(m, nn.BatchNorm1d)):
            n = bn.num_features
            bn.running_mean.copy_(0.5 * torch.randn(n, generator=gen))
            bn.running_var.copy_(0.5 + 1.5 * torch.rand(n, generator=gen))
            bn.weight.copy_(0.5 + torch.rand(n, generator=gen))
            bn.bias.copy_(0.5 * torch.randn(n, generator=gen))
    return module


def _weights(module: nn.Module) -> Weights:
    """A float64 copy of ``module``'s state dict (taken before a train-mode forward moves the running statistics)."""
    return {k: v.detach().clone().to(torch.float64) for k, v in module.state_dict().items()}


# ------------------------------------------------------------------------------------------------------------
# GCC's equations


def _linear(w: Weights, name: str, x: torch.Tensor) -> torch.Tensor:
    """Linear: ``x W^T + b``."""
    return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]


def _batch_norm(w: Weights, name: str, x: torch.Tensor, train: bool) -> torch.Tensor:
    """BatchNorm1d: normalised by the batch's mean and biased variance in training, by the running ones in eval."""
    if train:
        mean, var = x.mean(0), x.var(0, unbiased=False)
    else:
        mean, var = w[f"{name}.running_mean"], w[f"{name}.running_var"]
    return (x - mean) / torch.sqrt(var + BN_EPS) * w[f"{name}.weight"] + w[f"{name}.bias"]


def _gin_layer(w: Weights, i: int, adj: torch.Tensor, h: torch.Tensor, train: bool,
               apply_node_func: bool) -> torch.Tensor:
    """GCC's GIN layer ``i``: ``MLP((1 + eps) h_v + sum_{u -> v} h_u)`` with the MLP Linear -> BN -> ReLU -> Linear,
    then ApplyNodeFunc's BN -> ReLU (``apply_node_func``), then the layer's outer BN -> ReLU."""
    mlp = f"convs.{i}.apply_func"
    z = _linear(w, f"{mlp}.0", (1 + GCC_EPS) * h + adj @ h)
    z = _linear(w, f"{mlp}.3", torch.relu(_batch_norm(w, f"{mlp}.1", z, train)))
    if apply_node_func:
        z = torch.relu(_batch_norm(w, f"{mlp}.4", z, train))
    return torch.relu(_batch_norm(w, f"norms.{i}", z, train))


def _lstm_cell(w: Weights, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One step of Set2Set's one-layer LSTM (gates in torch's order: input, forget, cell, output)."""
    name = "set2set.lstm"
    gates = x @ w[f"{name}.weight_ih_l0"].T + w[f"{name}.bias_ih_l0"] + h @ w[f"{name}.weight_hh_l0"].T + w[
        f"{name}.bias_hh_l0"]
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def _set2set(w: Weights, member: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Set2Set (Vinyals et al.): from ``q* = 0``, each iteration ``q = LSTM(q*)``, attention ``a_v`` = softmax over
    the graph's nodes of ``<h_v, q>``, ``r = sum_v a_v h_v``, ``q* = [q, r]``."""
    hidden = cell = h.new_zeros(member.shape[0], h.shape[1])
    q_star = h.new_zeros(member.shape[0], 2 * h.shape[1])
    for _ in range(SET2SET_ITERS):
        hidden, cell = _lstm_cell(w, q_star, hidden, cell)
        scores = torch.where(member > 0, hidden @ h.T, -torch.inf)  # (B, N): <h_v, q_G> on the graph's own nodes
        q_star = torch.cat([hidden, scores.softmax(dim=1) @ h], dim=1)
    return q_star


def _gin(w: Weights, adj: torch.Tensor, member: torch.Tensor, x: torch.Tensor, num_layers: int, readout: str,
         train: bool, apply_node_func: bool) -> torch.Tensor:
    """GCC's graph representation (dropout off): ``readout="sum"`` -- every layer's node states, input included,
    sum-pooled per graph and mapped by that layer's own Linear, summed over layers (GCC's score over layers);
    ``"set2set"`` -- Set2Set of the last layer's states, then a Linear."""
    states = [x]
    for i in range(num_layers - 1):
        states.append(_gin_layer(w, i, adj, states[-1], train, apply_node_func))
    if readout == "set2set":
        return _linear(w, "head", _set2set(w, member, states[-1]))
    return sum(_linear(w, f"heads.{layer}", member @ s) for layer, s in enumerate(states))


def _encoder(w: Weights, adj: torch.Tensor, member: torch.Tensor, pe: torch.Tensor, seed_flag: torch.Tensor,
             max_degree: int, num_layers: int, readout: str) -> torch.Tensor:
    """GCC's encoder in eval mode: node input ``[pe, degree embedding of min(in-degree, max_degree), seed flag]``
    through the GIN, each row divided by ``max(||row||, 1e-5)``."""
    degrees = adj.sum(dim=1).long().clamp(max=max_degree)
    x = torch.cat([pe.double(), w["degree_embedding.weight"][degrees], seed_flag.double().unsqueeze(1)], dim=1)
    z = _gin({k.removeprefix("gnn."): v for k, v in w.items()}, adj, member, x, num_layers, readout, False, True)
    return z / z.norm(dim=1, keepdim=True).clamp(min=NORM_EPS)


def _view_rows(w: Weights, views: ViewBatch, max_degree: int, num_layers: int) -> torch.Tensor:
    """:func:`_encoder` of every view of ``views`` (sum readout), from its arrays."""
    base = np.repeat(views.node_ptr[:-1], views.num_edges)
    n = int(views.num_nodes.sum())
    seed_flag = torch.zeros(n)
    seed_flag[views.node_ptr[:-1] + views.seed_pos] = 1.0
    adj = _adjacency(torch.from_numpy(views.src + base), torch.from_numpy(views.dst + base), n)
    return _encoder(w, adj, _membership(torch.from_numpy(views.num_nodes)), torch.from_numpy(views.pe), seed_flag,
                    max_degree, num_layers, "sum")


# ------------------------------------------------------------------------------------------------------------
# The modules under test


def _gin_case(readout: str, apply_node_func: bool,
              dropout: float) -> tuple[UnsupervisedGIN, dgl.DGLGraph, torch.Tensor]:
    """A 3-layer GIN (input width = hidden width, so that a readout head applied to the wrong layer gives wrong
    numbers rather than a shape error), the batched graphs and fixed node inputs."""
    torch.manual_seed(0)
    gin = _perturbed(UnsupervisedGIN(5, 5, 4, num_layers=3, dropout=dropout, readout=readout,
                                     apply_node_func=apply_node_func), seed=1)
    g = _graphs()
    return gin, g, torch.randn(g.num_nodes(), 5, generator=torch.Generator().manual_seed(2))


def _expected_gin(gin: UnsupervisedGIN, g: dgl.DGLGraph, x: torch.Tensor, readout: str, apply_node_func: bool,
                  train: bool) -> torch.Tensor:
    """:func:`_gin` of :func:`_gin_case`'s GIN, the structure as asked for (not read off the module)."""
    adj, member = _adjacency(*g.edges(), g.num_nodes()), _membership(g.batch_num_nodes())
    return _gin(_weights(gin), adj, member, x.double(), 3, readout, train, apply_node_func).float()


def _encoder_case(readout: str) -> tuple[GraphEncoder, dgl.DGLGraph]:
    """An eval-mode encoder whose ``max_degree`` (3) clips the star's centre, and the graphs with a positional
    embedding and one seed node each."""
    torch.manual_seed(0)
    enc = _perturbed(GraphEncoder(positional_embedding_size=3, hidden_size=5, num_layers=3, degree_embedding_size=2,
                                  max_degree=3, readout=readout), seed=1).eval()
    g = _graphs()
    g.ndata[PE] = torch.randn(g.num_nodes(), 3, generator=torch.Generator().manual_seed(2))
    seed = torch.zeros(g.num_nodes(), dtype=torch.int64)
    seed[torch.cumsum(g.batch_num_nodes(), 0) - 1] = 1  # one seed per graph: its last node
    g.ndata[SEED] = seed
    return enc, g


# ------------------------------------------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("apply_node_func", [True, False])
@pytest.mark.parametrize("readout", ["sum", "set2set"])
def test_gin_graph_readout_matches_gcc_equations_in_eval_mode(readout, apply_node_func):
    gin, g, x = _gin_case(readout, apply_node_func, dropout=0.5)  # eval: dropout is off whatever its p
    gin.eval()
    with torch.no_grad():
        torch.testing.assert_close(gin(g, x), _expected_gin(gin, g, x, readout, apply_node_func, train=False))


@pytest.mark.parametrize("apply_node_func", [True, False])
@pytest.mark.parametrize("readout", ["sum", "set2set"])
def test_gin_graph_readout_matches_gcc_equations_in_train_mode_with_batch_statistics(readout, apply_node_func):
    gin, g, x = _gin_case(readout, apply_node_func, dropout=0.0)
    expected = _expected_gin(gin, g, x, readout, apply_node_func, train=True)  # before the forward moves the stats
    gin.train()
    with torch.no_grad():
        torch.testing.assert_close(gin(g, x), expected)


@pytest.mark.parametrize("train", [False, True])
def test_gin_on_the_plain_torch_path_matches_gcc_equations(train):
    gin, g, x = _gin_case("sum", True, dropout=0.0)
    expected = _expected_gin(gin, g, x, "sum", True, train)
    gin.train(train)
    with torch.no_grad():
        torch.testing.assert_close(gin(FlatGraph.from_dgl(g, features=()), x), expected)


@pytest.mark.parametrize("readout, path", [("sum", "dgl"), ("sum", "plain"), ("set2set", "dgl")])  # set2set: DGL only
def test_encoder_is_the_unit_norm_gin_of_pe_clipped_degree_embedding_and_seed_flag(readout, path):
    enc, g = _encoder_case(readout)
    adj, member = _adjacency(*g.edges(), g.num_nodes()), _membership(g.batch_num_nodes())
    expected = _encoder(_weights(enc), adj, member, g.ndata[PE], g.ndata[SEED], 3, 3, readout).float()
    with torch.no_grad():
        torch.testing.assert_close(enc(g if path == "dgl" else FlatGraph.from_dgl(g)), expected)


@pytest.mark.parametrize("assembly", ["streamed", "built"])
def test_a_nodes_embedding_row_is_the_mean_over_copies_of_its_views_encoder_outputs(assembly):
    enc, _ = _encoder_case("sum")
    dataset = NodeViewDataset(dgl.to_bidirected(dgl.from_networkx(nx.karate_club_graph())),
                              SamplingConfig(rw_hops=16, positional_embedding_size=3), seed=5)
    source = ViewSource(dataset, np.arange(34), copies=3)
    copies = [source.build(c, slice(None)) for c in range(3)]
    if assembly == "streamed":  # chunks of 16 rows: copies interleave with chunks
        rows = streamed_rows(enc, [source], 8, ThreadPlan(1, 0, 1), progress=False, chunk=16)
    else:
        rows = embed_parts(enc, [copies], batch_size=8, progress=False)
    w = _weights(enc)
    expected = torch.stack([_view_rows(w, views, 3, 3) for views in copies]).mean(dim=0)
    torch.testing.assert_close(torch.from_numpy(rows), expected.float())
