"""Encoder shapes/normalisation, InfoNCE against a reference, MoCo queue and momentum update."""
import dgl
import networkx as nx
import numpy as np
import pytest
import torch

from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.presets import make_config
from gcc_sgcl.contrastive import MomentumQueue, e2e_logits, info_nce, moco_logits, momentum_update
from gcc_sgcl.engine.checkpoint import save_checkpoint
from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
from gcc_sgcl.models import GraphEncoder, UnsupervisedGIN, build_encoder
from gcc_sgcl.sampling.dataset import GraphViewDataset


def _batch(k=32):
    graphs = [dgl.to_bidirected(dgl.from_networkx(g)) for g in
              (nx.path_graph(1), nx.path_graph(2), nx.karate_club_graph(), nx.cycle_graph(7), nx.star_graph(600))]
    ds = GraphViewDataset(graphs, SamplingConfig(positional_embedding_size=k))
    return ds.__getitems__(range(len(ds))).to_dgl()


@pytest.mark.parametrize("readout", ["sum", "set2set"])
def test_encoder_output_shape_and_unit_norm(readout):
    torch.manual_seed(0)
    enc = GraphEncoder(positional_embedding_size=32, hidden_size=24, num_layers=3, readout=readout)
    enc.eval()
    out = enc(_batch())
    assert out.shape == (5, 24)
    np.testing.assert_allclose(out.norm(dim=1).detach().numpy(), 1.0, atol=1e-5)


def test_encoder_input_is_pe_degree_embedding_and_seed_flag():
    enc = GraphEncoder(positional_embedding_size=32, degree_embedding_size=16, max_degree=512)
    g = _batch()
    x = enc.node_inputs(g)
    assert x.shape == (g.num_nodes(), 32 + 16 + 1)
    # the star centre has degree 600 > max_degree: clipped to the last embedding row
    centre = int(g.in_degrees().argmax())
    assert torch.equal(x[centre, 32:48], enc.degree_embedding.weight[512])
    with pytest.raises(ValueError, match="positional_embedding_size=16"):
        GraphEncoder(positional_embedding_size=16).node_inputs(g)


def test_gin_layer_is_mlp_then_gcc_apply_node_func_then_outer_batch_norm_and_relu():
    gin = UnsupervisedGIN(input_dim=7, hidden_dim=16, output_dim=16, num_layers=3)
    assert len(gin.convs) == len(gin.norms) == 2
    for conv, norm in zip(gin.convs, gin.norms):
        kinds = [type(m) for m in conv.apply_func]
        # Linear-BN-ReLU-Linear (the MLP), then BN + ReLU (GCC's ApplyNodeFunc); the outer BN follows the conv
        assert kinds == [torch.nn.Linear, torch.nn.BatchNorm1d, torch.nn.ReLU, torch.nn.Linear,
                         torch.nn.BatchNorm1d, torch.nn.ReLU]
        assert isinstance(norm, torch.nn.BatchNorm1d)
    old = UnsupervisedGIN(7, 16, 16, num_layers=3, apply_node_func=False)
    assert [type(m) for m in old.convs[0].apply_func][-1] is torch.nn.Linear
    # the conv's output is already rectified, as in GCC, before the outer batch norm
    g = dgl.to_bidirected(dgl.from_networkx(nx.karate_club_graph()))
    gin.train()
    h = gin.convs[0](g, torch.randn(g.num_nodes(), 7))
    assert bool((h >= 0).all()) and bool((h == 0).any())


def test_default_config_builds_gcc_structure_and_a_config_saved_without_the_field_the_old_one(tmp_path):
    cfg = make_config("gcc", {"model": {"hidden_size": 16, "num_layers": 3}})
    assert cfg.model.apply_node_func is True
    assert isinstance(build_encoder(cfg).gnn.convs[0].apply_func[-2], torch.nn.BatchNorm1d)
    # a checkpoint written before the field existed: old structure, config without the key
    old_cfg = make_config("gcc", {"model": {"hidden_size": 16, "num_layers": 3, "apply_node_func": False}})
    old_model = build_encoder(old_cfg)
    assert not any(isinstance(x, torch.nn.BatchNorm1d) for x in old_model.gnn.convs[0].apply_func[2:])  # ends Linear
    assert sum(p.numel() for p in old_model.parameters()) < sum(p.numel() for p in build_encoder(cfg).parameters())
    saved = old_cfg.to_dict()
    del saved["model"]["apply_node_func"]
    save_checkpoint({"model": old_model.state_dict(), "config": saved, "step": old_cfg.train.steps}, tmp_path / "checkpoint.pt")
    model, loaded, _ = load_encoder_checkpoint(tmp_path)
    assert loaded.model.apply_node_func is False
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), old_model.state_dict().values()))


def test_info_nce_equals_cross_entropy_reference():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(6, 9))
    target = rng.integers(0, 9, size=6)
    loss, prob = info_nce(torch.tensor(logits), torch.tensor(target))
    log_softmax = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss.item(), -log_softmax[np.arange(6), target].mean(), rtol=1e-10)
    np.testing.assert_allclose(prob.item(), np.exp(log_softmax[np.arange(6), target]).mean(), rtol=1e-10)


def test_e2e_and_moco_logits_put_positive_where_target_says():
    gen = torch.Generator().manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn(4, 8, generator=gen), dim=1)
    k = torch.nn.functional.normalize(torch.randn(4, 8, generator=gen), dim=1)
    queue = torch.randn(10, 8, generator=gen)
    logits, target = e2e_logits(q, k, 0.07)
    assert logits.shape == (4, 4) and torch.equal(target, torch.arange(4))
    torch.testing.assert_close(logits[2, 2], (q[2] @ k[2]) / 0.07)
    logits, target = moco_logits(q, k, queue, 0.5)
    assert logits.shape == (4, 11) and torch.equal(target, torch.zeros(4, dtype=torch.long))
    torch.testing.assert_close(logits[1, 0], (q[1] @ k[1]) / 0.5)
    torch.testing.assert_close(logits[1, 4], (q[1] @ queue[3]) / 0.5)


def test_queue_wraps_around_and_overwrites_oldest():
    queue = MomentumQueue(dim=2, size=5, generator=torch.Generator().manual_seed(0))
    first = torch.arange(6, dtype=torch.float32).view(3, 2)
    queue.enqueue(first)
    assert queue.ptr.item() == 3
    second = -torch.arange(1, 7, dtype=torch.float32).view(3, 2)
    queue.enqueue(second)
    assert queue.ptr.item() == 1
    assert torch.equal(queue.keys[3:], second[:2]) and torch.equal(queue.keys[0], second[2])
    assert torch.equal(queue.keys[1:3], first[1:])
    state = queue.state_dict()
    assert {"keys", "ptr"} <= set(state)  # survives checkpoints
    with pytest.raises(ValueError):
        queue.enqueue(torch.zeros(6, 2))


def test_momentum_update_is_ema_of_parameters():
    torch.manual_seed(0)
    q_model, k_model = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    before = [p.clone() for p in k_model.parameters()]
    momentum_update(k_model, q_model, 0.9)
    for pk, pk0, pq in zip(k_model.parameters(), before, q_model.parameters()):
        torch.testing.assert_close(pk, 0.9 * pk0 + 0.1 * pq)
