"""The contrastive core against its definition (GCC's ``train.py`` / ``memory_moco.py``, MoCo's ``builder.py``).

One MoCo step of :class:`~gcc_sgcl.engine.pretrain.Trainer` on a tiny batch is compared with what the method
says it does: the key encoder is the momentum average of the query encoder *after* its optimiser step, the
queue receives the key encoder's outputs (batch norm on batch statistics) at its pointer, and the loss scores
the query against those keys and the queue as it was before the step. The losses are checked on hand-computed
logits, and ``Both`` / ``Split`` on the random streams they give the two views. The other tests compare the
step with itself (resume, workers); these catch a step that is wrong but consistent.
"""
from __future__ import annotations

import copy
import math

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

from gcc_sgcl.augment import Both, Compose, FeatureMask, Mask, PairPipeline, Reorder, Split, Transform, ViewFilter
from gcc_sgcl.config import SamplingConfig
from gcc_sgcl.contrastive import MomentumQueue, e2e_logits, info_nce, moco_logits
from gcc_sgcl.contrastive.builder import dropout_seed
from gcc_sgcl.engine.pretrain import Trainer
from gcc_sgcl.models import to_model_input
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.batch import NodeSets, concat
from gcc_sgcl.sampling.dataset import PretrainPairDataset, ViewSampler, collate_pairs
from gcc_sgcl.sampling.keys import KeyedRandom

BATCH, QUEUE, SEED = 4, 12, 3
MOMENTUM = 0.75  # far from 0.5 and 1, so that m and 1 - m are told apart and k moves visibly


def _cfg(mode: str = "moco", **train):
    return make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 3, "degree_embedding_size": 4},
        "train": {"mode": mode, "batch_size": BATCH, "nce_k": QUEUE, "momentum": MOMENTUM, "steps": 4,
                  "seed": SEED, "threads": 1, **train},
    })


def _batch(cfg, first: int = 0):
    """Batch ``first // BATCH`` of a run: (batched query views, batched key views), as the DataLoader gives it."""
    graph = dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(80, 3, seed=0)))
    dataset = PretrainPairDataset([graph], cfg.sampling, SEED, 4 * BATCH, PairPipeline())
    return collate_pairs(dataset.__getitems__(range(first, first + BATCH)))


def _trainer(mode: str = "moco", **train) -> Trainer:
    torch.set_num_threads(1)
    return Trainer(_cfg(mode, **train))


def _batch_norms(model: torch.nn.Module) -> list[torch.nn.modules.batchnorm._BatchNorm]:
    return [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


def _key_encoder_as_defined(trainer: Trainer) -> torch.nn.Module:
    """A copy of the key encoder in MoCo's key mode: no dropout, batch norm on the batch's statistics."""
    key = copy.deepcopy(trainer.key_model).eval()
    for bn in _batch_norms(key):
        bn.train()
    return key


def _reference_keys(trainer: Trainer, graph_k) -> tuple[torch.Tensor, torch.nn.Module]:
    """The keys the step must compute, and the copy of the key encoder after computing them."""
    key = _key_encoder_as_defined(trainer)
    with torch.no_grad():
        return key(to_model_input(graph_k, trainer.device)), key


def _reference_queries(trainer: Trainer, graph_q) -> torch.Tensor:
    """The step's queries: the query encoder in training mode with the step's dropout seed."""
    query = copy.deepcopy(trainer.model).train()
    torch.manual_seed(dropout_seed(SEED, trainer.step_count))
    with torch.no_grad():
        return query(to_model_input(graph_q, trainer.device))


# ------------------------------------------------------------------------------------------- the MoCo step


def test_moco_key_parameters_are_momentum_average_with_the_stepped_query_parameters():
    trainer = _trainer()
    before = [p.clone() for p in trainer.key_model.parameters()]
    trainer.step(*_batch(trainer.cfg))
    moved = 0
    for pk, pk0, pq1 in zip(trainer.key_model.parameters(), before, trainer.model.parameters()):
        torch.testing.assert_close(pk, MOMENTUM * pk0 + (1 - MOMENTUM) * pq1, rtol=1e-6, atol=1e-7)
        moved += not torch.equal(pq1, pk0)
    assert moved > 0  # the optimiser moved the query encoder, so the average differs from k0


def test_moco_key_encoder_takes_no_gradient_and_trails_the_query_encoder():
    trainer = _trainer()
    for first in (0, BATCH):
        trainer.step(*_batch(trainer.cfg, first))
    assert not any(p.requires_grad or p.grad is not None for p in trainer.key_model.parameters())
    assert any(not torch.equal(pk, pq) for pk, pq in zip(trainer.key_model.parameters(), trainer.model.parameters()))


def test_moco_queue_pointer_advances_by_the_batch_and_holds_the_new_keys():
    trainer = _trainer()
    graph_q, graph_k = _batch(trainer.cfg)
    keys_before = trainer.queue.keys.clone()
    expected, _ = _reference_keys(trainer, graph_k)
    trainer.step(graph_q, graph_k)
    assert trainer.queue.ptr.item() == BATCH
    torch.testing.assert_close(trainer.queue.keys[:BATCH], expected)
    assert torch.equal(trainer.queue.keys[BATCH:], keys_before[BATCH:])


def test_moco_queue_wraps_around_its_end_within_a_step():
    trainer = _trainer()
    trainer.queue.ptr.fill_(QUEUE - 2)
    graph_q, graph_k = _batch(trainer.cfg)
    keys_before = trainer.queue.keys.clone()
    expected, _ = _reference_keys(trainer, graph_k)
    trainer.step(graph_q, graph_k)
    assert trainer.queue.ptr.item() == BATCH - 2
    torch.testing.assert_close(trainer.queue.keys[QUEUE - 2:], expected[:2])
    torch.testing.assert_close(trainer.queue.keys[:BATCH - 2], expected[2:])
    assert torch.equal(trainer.queue.keys[BATCH - 2:QUEUE - 2], keys_before[BATCH - 2:QUEUE - 2])


def test_moco_keys_are_unit_rows_of_the_key_encoder_not_the_query_encoder():
    trainer = _trainer()
    trainer.step(*_batch(trainer.cfg))  # now the two encoders differ
    graph_q, graph_k = _batch(trainer.cfg, BATCH)
    expected, _ = _reference_keys(trainer, graph_k)
    trainer.step(graph_q, graph_k)
    new = trainer.queue.keys[BATCH:2 * BATCH]
    torch.testing.assert_close(new, expected)
    torch.testing.assert_close(new.norm(dim=1), torch.ones(BATCH))


def test_moco_key_encoder_batch_norm_statistics_update_from_the_key_views():
    trainer = _trainer()
    graph_q, graph_k = _batch(trainer.cfg)
    _, reference = _reference_keys(trainer, graph_k)
    before = [bn.running_mean.clone() for bn in _batch_norms(trainer.key_model)]
    trainer.step(graph_q, graph_k)
    norms = _batch_norms(trainer.key_model)
    assert len(norms) > 0
    for bn, ref, mean0 in zip(norms, _batch_norms(reference), before):
        assert not torch.equal(bn.running_mean, mean0)
        torch.testing.assert_close(bn.running_mean, ref.running_mean)
        torch.testing.assert_close(bn.running_var, ref.running_var)
        assert bn.num_batches_tracked.item() == 1


def test_moco_key_encoder_keeps_dropout_off_and_batch_norm_on_batch_statistics():
    trainer = _trainer()
    trainer.step(*_batch(trainer.cfg))
    modes = {type(m): m.training for m in trainer.key_model.modules()}
    assert modes[torch.nn.Dropout] is False
    assert all(bn.training for bn in _batch_norms(trainer.key_model))


def test_step_trains_the_query_encoder_even_when_it_was_left_in_eval_mode():
    trainer = _trainer()
    trainer.model.eval()
    before = [bn.running_mean.clone() for bn in _batch_norms(trainer.model)]
    trainer.step(*_batch(trainer.cfg))
    assert trainer.model.training
    assert all(not torch.equal(bn.running_mean, m0) for bn, m0 in zip(_batch_norms(trainer.model), before))


def test_moco_loss_scores_queries_against_new_keys_and_the_queue_before_the_step():
    trainer = _trainer()
    graph_q, graph_k = _batch(trainer.cfg)
    queue_before = trainer.queue.keys.clone()
    q = _reference_queries(trainer, graph_q)
    k, _ = _reference_keys(trainer, graph_k)
    loss, prob = info_nce(*moco_logits(q, k, queue_before, trainer.cfg.train.nce_t))
    stats = trainer.step(graph_q, graph_k)
    assert stats["loss"] == pytest.approx(loss.item(), rel=1e-5)
    assert stats["prob"] == pytest.approx(prob.item(), rel=1e-5)


def test_e2e_loss_scores_each_query_against_every_key_of_the_query_encoder():
    trainer = _trainer("e2e")
    graph_q, graph_k = _batch(trainer.cfg)
    query = copy.deepcopy(trainer.model).train()
    torch.manual_seed(dropout_seed(SEED, 0))
    with torch.no_grad():  # the same encoder, dropout stream continuing from the queries to the keys
        q, k = query(to_model_input(graph_q, "cpu")), query(to_model_input(graph_k, "cpu"))
    loss, prob = info_nce(*e2e_logits(q, k, trainer.cfg.train.nce_t))
    stats = trainer.step(graph_q, graph_k)
    assert stats["loss"] == pytest.approx(loss.item(), rel=1e-5)
    assert stats["prob"] == pytest.approx(prob.item(), rel=1e-5)


def _gradients_at_the_optimizer_step(trainer: Trainer) -> list[list[torch.Tensor]]:
    """Filled, at each optimiser step, with the gradients the optimiser is about to apply."""
    seen = []
    trainer.optimizer.register_step_pre_hook(
        lambda *_: seen.append([p.grad.clone() for p in trainer.model.parameters() if p.grad is not None]))
    return seen


@pytest.mark.parametrize("mode", ["moco", "e2e"])
def test_optimizer_applies_the_clipped_gradient_of_the_info_nce_loss(mode):
    clip = 0.01  # below the gradient's norm, so clipping is active
    trainer = _trainer(mode, clip_norm=clip)
    graph_q, graph_k = _batch(trainer.cfg)
    reference = copy.deepcopy(trainer.model).train()
    keys = _reference_keys(trainer, graph_k)[0] if mode == "moco" else None
    queue = trainer.queue.keys.clone() if mode == "moco" else None
    seen = _gradients_at_the_optimizer_step(trainer)
    stats = trainer.step(graph_q, graph_k)
    torch.manual_seed(dropout_seed(SEED, 0))
    q = reference(to_model_input(graph_q, "cpu"))
    if mode == "moco":  # gradient through the queries only
        logits = moco_logits(q, keys, queue, trainer.cfg.train.nce_t)
    else:  # through the queries and the keys, both from the query encoder
        logits = e2e_logits(q, reference(to_model_input(graph_k, "cpu")), trainer.cfg.train.nce_t)
    info_nce(*logits)[0].backward()
    norm = torch.nn.utils.clip_grad_norm_(reference.parameters(), clip)
    assert stats["grad_norm"] == pytest.approx(norm.item(), rel=1e-4) and norm > clip
    expected = [p.grad for p in reference.parameters() if p.grad is not None]
    assert len(seen) == 1 and len(seen[0]) == len(expected)
    for got, want in zip(seen[0], expected):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-7)


def test_each_step_advances_the_learning_rate_schedule():
    trainer = _trainer(steps=10, warmup_frac=0.5, decay_frac=0.0)
    lrs = [trainer.step(*_batch(trainer.cfg, first))["lr"] for first in (0, BATCH, 2 * BATCH)]
    assert lrs == pytest.approx([trainer.cfg.train.lr * f for f in (0.2, 0.4, 0.6)])


def test_a_stale_gradient_left_in_the_parameters_does_not_reach_the_optimizer():
    seen = []
    for stale in (False, True):
        trainer = _trainer("e2e")
        if stale:
            for p in trainer.model.parameters():
                p.grad = torch.full_like(p, 1e3)
        seen.append(_gradients_at_the_optimizer_step(trainer))
        trainer.step(*_batch(trainer.cfg))
    for clean, after_stale in zip(seen[0][0], seen[1][0]):
        assert torch.equal(clean, after_stale)


def test_e2e_step_has_no_key_encoder_and_no_queue():
    trainer = _trainer("e2e")
    trainer.step(*_batch(trainer.cfg))
    assert trainer.key_model is None and trainer.queue is None and trainer.step_count == 1


# ------------------------------------------------------------------------------------ losses by hand

Q = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
K = torch.tensor([[0.6, 0.8], [0.0, 1.0]], dtype=torch.float64)
QUEUE_ROWS = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, -1.0]], dtype=torch.float64)
TAU = 0.5


def _nll(row: list[float], positive: int) -> float:
    return -row[positive] + math.log(sum(math.exp(x) for x in row))


def test_queue_starts_as_gccs_uniform_noise_of_an_embedding_coordinates_scale():
    queue = MomentumQueue(dim=12, size=4000, generator=torch.Generator().manual_seed(0))
    stdv = 1 / math.sqrt(12 / 3)
    assert queue.ptr.item() == 0 and queue.keys.shape == (4000, 12)
    assert queue.keys.abs().max().item() <= stdv and queue.keys.abs().max().item() > 0.99 * stdv
    assert abs(queue.keys.mean().item()) < 0.01


def test_queue_takes_a_batch_as_large_as_itself_and_its_pointer_comes_back():
    queue = MomentumQueue(dim=2, size=3)
    queue.enqueue(queue.keys.new_tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert queue.ptr.item() == 0
    assert queue.keys.tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def test_e2e_logits_are_query_key_products_over_temperature_with_the_diagonal_positive():
    logits, target = e2e_logits(Q, K, TAU)
    # <q0,k0> = 0.6, <q0,k1> = 0, <q1,k0> = 0.8, <q1,k1> = 1; divided by tau = 0.5
    torch.testing.assert_close(logits, torch.tensor([[1.2, 0.0], [1.6, 2.0]], dtype=torch.float64))
    assert target.tolist() == [0, 1]


def test_e2e_loss_and_prob_match_the_hand_computed_values():
    loss, prob = info_nce(*e2e_logits(Q, K, TAU))
    assert loss.item() == pytest.approx((math.log(1 + math.exp(-1.2)) + math.log(1 + math.exp(-0.4))) / 2)
    assert prob.item() == pytest.approx((1 / (1 + math.exp(-1.2)) + 1 / (1 + math.exp(-0.4))) / 2)


def test_e2e_offset_puts_a_process_slice_positives_at_its_global_rows():
    logits, target = e2e_logits(Q[1:], K, TAU, positive_offset=1)
    torch.testing.assert_close(logits, torch.tensor([[1.6, 2.0]], dtype=torch.float64))
    assert target.tolist() == [1]
    e2e_logits(Q[1:], K, TAU, positive_offset=0)  # both ends of the valid range
    for bad in (-1, 2):
        with pytest.raises(ValueError, match="positive_offset"):
            e2e_logits(Q[1:], K, TAU, positive_offset=bad)


def test_moco_logits_put_the_positive_first_then_the_queue_over_temperature():
    logits, target = moco_logits(Q, K, QUEUE_ROWS, TAU)
    # row 0: <q0,k0> = 0.6, then <q0,queue> = 1, -1, 0; row 1: <q1,k1> = 1, then 0, 0, -1
    expected = torch.tensor([[1.2, 2.0, -2.0, 0.0], [2.0, 0.0, 0.0, -2.0]], dtype=torch.float64)
    torch.testing.assert_close(logits, expected)
    assert target.tolist() == [0, 0]


def test_moco_loss_and_prob_match_the_hand_computed_values():
    loss, prob = info_nce(*moco_logits(Q, K, QUEUE_ROWS, TAU))
    rows = [[1.2, 2.0, -2.0, 0.0], [2.0, 0.0, 0.0, -2.0]]
    assert loss.item() == pytest.approx((_nll(rows[0], 0) + _nll(rows[1], 0)) / 2)
    assert prob.item() == pytest.approx(sum(math.exp(-_nll(r, 0)) for r in rows) / 2)


def test_info_nce_is_zero_for_a_certain_positive_and_log_n_for_a_uniform_row():
    certain, prob = info_nce(torch.tensor([[0.0, -1e4, -1e4]]), torch.tensor([0]))
    assert certain.item() == pytest.approx(0.0) and prob.item() == pytest.approx(1.0)
    uniform, prob = info_nce(torch.zeros(2, 5), torch.tensor([3, 1]))
    assert uniform.item() == pytest.approx(math.log(5)) and prob.item() == pytest.approx(0.2)


# ------------------------------------------------------------------------------- pair steps' streams


class _RecordDraws(Transform):
    """Records the uniforms it draws for each batch it transforms; returns the views unchanged."""

    def __init__(self) -> None:
        self.draws: list[np.ndarray] = []

    def make_params(self, views, rng: KeyedRandom) -> np.ndarray:
        return rng.child("draw").uniform(6)

    def transform(self, views, params: np.ndarray):
        self.draws.append(params)
        return views


def _views():
    graph = dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(40, 2, seed=1)))
    sampler = ViewSampler(graph, SamplingConfig(rw_hops=8, positional_embedding_size=4))
    return sampler.views(np.arange(5), KeyedRandom.for_items(0, np.arange(5)))


@pytest.mark.parametrize("make", [lambda t: Both(t), lambda t: Split(t, t)], ids=["Both", "Split"])
def test_pair_step_gives_query_and_key_independent_draws(make):
    recorder, views = _RecordDraws(), _views()
    make(recorder)(views, views, KeyedRandom.for_items(0, np.arange(len(views))))
    query, key = recorder.draws
    assert query.shape == key.shape == (len(views), 6)
    assert not np.isin(key, query).any()  # not one number shared between the two views' streams


def test_each_transform_of_a_compose_draws_from_its_own_stream():
    # two stages of one view (say mask, then reorder) must not reuse each other's random numbers
    first, second, views = _RecordDraws(), _RecordDraws(), _views()
    Compose([first, second]).forward(views, KeyedRandom.for_items(0, np.arange(len(views))))
    (a,), (b,) = first.draws, second.draws
    assert a.shape == b.shape == (len(views), 6)
    assert not np.isin(b, a).any()


def test_both_transforms_identical_views_differently():
    views = _views()
    q, k = Both(FeatureMask(0.5))(views, views, KeyedRandom.for_items(0, np.arange(len(views))))
    assert not np.array_equal(q.pe, k.pe)


def test_query_and_key_are_two_walks_from_one_start_with_their_own_signs():
    pipeline = PairPipeline()  # GCC's plain pairs
    graph = dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(80, 3, seed=0)))
    sampling = SamplingConfig(rw_hops=16, positional_embedding_size=4, pe_sign="random")
    q, k = PretrainPairDataset([graph], sampling, SEED, 16, pipeline).__getitems__(range(16))
    starts = [(q.nid[q.node_ptr[b]], k.nid[k.node_ptr[b]]) for b in range(16)]
    assert all(a == b for a, b in starts)
    assert sum(not np.array_equal(q.nid[q.node_ptr[b]:q.node_ptr[b + 1]], k.nid[k.node_ptr[b]:k.node_ptr[b + 1]])
               for b in range(16)) >= 8
    clique = dgl.to_bidirected(dgl.from_networkx(nx.complete_graph(5)))  # both walks cover it: views equal up to signs
    q, k = PretrainPairDataset([clique], SamplingConfig(rw_hops=64, positional_embedding_size=3, pe_sign="random"),
                               SEED, 8, pipeline).__getitems__(range(8))
    assert np.array_equal(q.nid, k.nid) and np.allclose(np.abs(q.pe), np.abs(k.pe))
    assert not np.array_equal(q.pe, k.pe)


def test_nested_streams_depend_on_their_names_and_order():
    rng = KeyedRandom.for_items(0, np.arange(3))
    ab, ba, aa = (rng.child(x).child(y).uniform(4) for x, y in ("ab", "ba", "aa"))
    assert not np.isin(ab, ba).any() and not np.isin(aa, rng.uniform(4)).any()


# ------------------------------------------------------------------------------- SGCL's draws and filter


def test_reorder_and_mask_draw_their_sizes_over_the_whole_range_ends_included():
    views = concat([_views()] * 80)
    rng = KeyedRandom.for_items(0, np.arange(len(views)))
    assert set(Reorder(r_max=3).make_params(views, rng).tolist()) == {1, 2, 3}
    assert set(Mask(max_masked=3).make_params(views, rng).tolist()) == {0, 1, 2, 3}


def test_similar_filter_at_c_0_refuses_parallel_rows_whose_rounded_cosine_exceeds_1():
    row = np.array([-0.535669373161111, 0.36159505490948474, 1.3040000451301372])
    emb = np.stack([row, row * 7.322015953741584])  # cosine 1.0000000000000002 before clipping
    one = NodeSets(np.array([1]), np.array([0])), NodeSets(np.array([1]), np.array([1]))
    assert ViewFilter("similar", c=0.0).accept(*one, emb).tolist() == [False]
    assert ViewFilter("diverse", c=0.0).accept(*one, emb).tolist() == [False]


def test_random_signs_flip_each_eigenvector_column_independently_within_a_view():
    # GCC flips every eigenvector's sign on its own: within one view some columns flip and others do not
    from gcc_sgcl.sampling.induced import GraphIndex, build_views

    g = dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(30, 2, seed=3)))
    n, views_count, k = g.num_nodes(), 8, 8
    sets = NodeSets(np.full(views_count, n), np.tile(np.arange(n), views_count))
    rng = KeyedRandom.for_items(0, np.arange(views_count))
    canonical = build_views(GraphIndex.of(g), sets, k, "canonical").eigvec.reshape(views_count, n, k)
    flipped = build_views(GraphIndex.of(g), sets, k, "random", rng).eigvec.reshape(views_count, n, k)
    signs = np.sign((canonical * flipped).sum(axis=1))  # (views, columns): +1 kept, -1 flipped
    assert np.allclose(np.abs(flipped), np.abs(canonical), atol=1e-6) and set(np.unique(signs)) == {-1.0, 1.0}
    mixed = sum(len(set(row)) == 2 for row in signs)  # all-equal rows: 2 / 2^8 per view under independent signs
    assert mixed >= views_count - 1
