"""CuCo, InfoGCL and BYOV, the SGCL paper's competitors, re-implemented on GCC's RWR views (docs/baselines.md): valid
views, inputs never changed, seeded, each method's defining property, and short training runs that resume exactly."""
from __future__ import annotations

import types

import dgl
import networkx as nx
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from threadpoolctl import threadpool_limits

from gcc_sgcl.augment import BASELINES, NodeDrop, PairPipeline, Split, build_pair_pipeline
from gcc_sgcl.augment.byov import Source, generate_views
from gcc_sgcl.augment.infogcl import InfoMinViews, centre_neighbours, infogcl_views, jaccard, view_contents
from gcc_sgcl.config import AUGMENT_FAMILIES, Config, SamplingConfig
from gcc_sgcl.contrastive.curriculum import easy_to_hard, pool_size
from gcc_sgcl.contrastive.hooks import STEP_HOOKS, CurriculumNegatives, LearnedViews, step_hook, step_random, torch_generator
from gcc_sgcl.engine.checkpoint import load_checkpoint
from gcc_sgcl.engine.pretrain import Trainer, pretrain
from gcc_sgcl.presets import PRESETS, make_config
from gcc_sgcl.sampling.batch import ViewBatch, concat
from gcc_sgcl.sampling.dataset import PretrainPairDataset, ViewSampler, collate_pairs
from gcc_sgcl.sampling.keys import KeyedRandom
from gcc_sgcl.sampling.spectral import eigen_arrays
from gcc_sgcl.sampling.view import PE, SEED

from viewcheck import K, centres, keys, snapshot, unchanged, view_of, views_equal

FAMILIES = ["cuco", "infogcl", "byov"]


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(1):
        yield


def _graph(seed: int = 0, n: int = 200) -> dgl.DGLGraph:
    return dgl.to_bidirected(dgl.from_networkx(nx.powerlaw_cluster_graph(n, 3, 0.3, seed=seed)))


@pytest.fixture(scope="module")
def sampler() -> ViewSampler:
    return ViewSampler(_graph(), SamplingConfig(rw_hops=24, positional_embedding_size=K, pe_sign="random"))


def _small(method: str, tmp_path=None, **train) -> Config:
    return make_config(method, {
        "sampling": {"rw_hops": 24, "positional_embedding_size": K},
        "model": {"hidden_size": 8, "num_layers": 2, "degree_embedding_size": 4},
        "train": {"batch_size": 8, "steps": 3, "output_dir": str(tmp_path or "."), "corpus": ["toy"], **train},
        **({"augment": {"hidden": 8, "walks": 4, "walk_length": 5}} if method == "byov" else {}),
    })


def _rwr_pair(sampler: ViewSampler, count: int = 12, seed: int = 0) -> tuple[ViewBatch, ViewBatch]:
    starts = np.arange(0, 10 * count, 10)
    return PairPipeline()(sampler, starts, KeyedRandom.for_items(seed, np.arange(count)))


def same_views(a: ViewBatch, b: ViewBatch) -> bool:
    """Same nodes and edges, and the same PE up to float32 rounding (a batched eigh may round the last bits of a
    view differently beside other views)."""
    return all(np.array_equal(getattr(a, name), getattr(b, name))
               for name in ("num_nodes", "num_edges", "src", "dst", "nid", "seed_pos")) and a.pe.shape == b.pe.shape \
        and np.allclose(a.pe, b.pe, rtol=0, atol=1e-5)


def assert_valid(views: ViewBatch, own_pe: bool = True) -> None:
    """Bidirected views without self-loops, one centre each, finite PE (the view's own eigen features)."""
    g = views.to_dgl()
    assert int(g.ndata[SEED].sum()) == len(views) and torch.isfinite(g.ndata[PE]).all()
    for b in range(len(views)):
        src, dst = views.edges_of(b)
        assert (src != dst).all() and set(zip(src.tolist(), dst.tolist())) == set(zip(dst.tolist(), src.tolist()))
        assert 0 <= views.seed_pos[b] < views.num_nodes[b]
    if own_pe:
        pe, _, eigval = eigen_arrays(views.num_nodes, views.num_edges, views.src, views.dst, views.k)
        np.testing.assert_allclose(np.abs(views.pe), np.abs(pe), atol=1e-5)  # up to each column's sign
        np.testing.assert_allclose(views.eigval, eigval, atol=1e-5)


# ----------------------------------------------------------------------------------------------- families


def test_each_competitor_is_a_family_with_views_and_a_preset_and_a_hook_only_where_the_step_changes():
    for family in FAMILIES:
        assert family in AUGMENT_FAMILIES and family in BASELINES and PRESETS[family].family == family
    assert sorted(STEP_HOOKS) == ["byov", "cuco"]
    assert isinstance(step_hook(make_config("cuco")), CurriculumNegatives)
    assert isinstance(step_hook(make_config("byov")), LearnedViews)
    for method in ("gcc", "sgcl", "graphcl", "grace", "mvgrl", "gca", "infogcl"):
        assert step_hook(make_config(method)) is None  # GCC's step, untouched
    cuco = make_config("cuco").augment
    assert (cuco.node_drop, cuco.negatives, cuco.pacing_power) == (0.1, 16, 0.5)  # CuCo's code
    byov = make_config("byov").augment
    assert (byov.walks, byov.walk_length, byov.lr, byov.threshold, byov.low_reward) == (16, 20, 0.001, 0.1, 0.01)


@pytest.mark.parametrize("name", ["cuco", "infogcl", "byov"])
def test_pipeline_views_are_valid_functions_of_the_keys_and_never_mutate_their_input(name, sampler):
    pipeline = build_pair_pipeline(make_config(name).augment)
    starts = np.arange(0, 120, 10)
    rng = KeyedRandom.for_items(0, np.arange(len(starts)))
    first, again = pipeline(sampler, starts, rng), pipeline(sampler, starts, rng)
    assert views_equal(first[0], again[0]) and views_equal(first[1], again[1])
    for views in first:
        np.testing.assert_array_equal(centres(views), starts)
        assert_valid(views, own_pe=False)
    q, k = _rwr_pair(sampler)
    snaps = snapshot(q), snapshot(k)
    (step,) = pipeline.steps
    outputs = [step(q, k, keys(q, seed)) for seed in range(4)]
    assert unchanged(q, snaps[0]) and unchanged(k, snaps[1])
    if name != "byov":  # BYOV's pipeline hands GCC's pairs to its generators (LearnedViews)
        assert any(not views_equal(outputs[0][1], out[1]) for out in outputs[1:])


# ---------------------------------------------------------------------------------------------------- CuCo


def test_cuco_drops_a_tenth_of_the_key_views_nodes_and_keeps_the_query_view():
    (step,) = build_pair_pipeline(make_config("cuco").augment).steps
    assert isinstance(step, Split) and isinstance(step.key, NodeDrop) and step.key.ratio == 0.1
    view = view_of(nx.connected_watts_strogatz_graph(40, 4, 0.3, seed=0))
    views = concat([view] * 200)
    q, k = step(views, views, keys(views))
    assert views_equal(q, views)
    assert (1 - k.num_nodes / 40).mean() == pytest.approx(0.1, abs=0.01)
    np.testing.assert_array_equal(centres(k), centres(views))


def test_cuco_pacing_grows_the_pool_from_the_easiest_negatives_to_all_of_them():
    pools = [pool_size(t, 100, 0.5, 63) for t in range(100)]
    assert pools[0] == 7 and pools[-1] == 63 and all(a <= b for a, b in zip(pools, pools[1:]))
    assert pool_size(49, 100, 1.0, 63) == 32 < pool_size(49, 100, 0.5, 63)  # root pacing is ahead of linear


def test_cuco_draws_its_negatives_from_easy_to_hard_as_training_proceeds():
    hook = step_hook(_small("cuco", steps=100))
    gen = torch.Generator().manual_seed(0)
    q, k = (TF.normalize(torch.randn(64, 8, generator=gen), dim=1) for _ in range(2))
    logits, target = q @ k.t() / 0.07, torch.arange(64)
    order = easy_to_hard(logits, target)
    mean_similarity = []
    for step in (0, 30, 99):
        weights = hook.logit_bias(logits, target, step).exp()
        pool = pool_size(step, 100, 0.5, 63)
        assert hook.pool == pool and hook.update(logits, target, step) == {"cuco_pool": float(pool)}
        assert (weights[torch.arange(64), target] == 1).all()
        drawn = weights.clone()
        drawn[torch.arange(64), target] = 0
        assert (drawn.sum(dim=1) == 16).all()  # 16 draws with replacement per query (CuCo's negative_number)
        by_rank = drawn.gather(1, order)  # multiplicity of each negative, easiest first
        assert (by_rank[:, pool:] == 0).all()  # never beyond the pool of the easiest
        assert (by_rank == by_rank[0]).all()  # the same ranks for every query, as CuCo's one draw per batch
        mean_similarity.append(float((drawn * logits).sum() / drawn.sum()))
    assert mean_similarity[0] < mean_similarity[1] < mean_similarity[2]  # harder negatives as training proceeds


def test_cuco_loss_is_infonce_over_the_drawn_negatives_counted_with_their_multiplicity():
    hook = step_hook(_small("cuco", steps=10))
    logits, target = torch.randn(6, 6, generator=torch.Generator().manual_seed(1)), torch.arange(6)
    bias = hook.logit_bias(logits, target, 4)
    loss = TF.cross_entropy(logits + bias, target, reduction="none")
    weights = bias.exp()
    weights[torch.arange(6), target] = 0
    pos = logits.diagonal()
    cuco = -torch.log(pos.exp() / (pos.exp() + (weights * logits.exp()).sum(dim=1)))  # CuCo's loss_cal (T apart)
    torch.testing.assert_close(loss, cuco)


def test_cuco_draws_are_functions_of_seed_and_step():
    logits, target = torch.randn(32, 32, generator=torch.Generator().manual_seed(2)), torch.arange(32)
    a, b = step_hook(_small("cuco", steps=50, seed=0)), step_hook(_small("cuco", steps=50, seed=0))
    assert torch.equal(a.logit_bias(logits, target, 20), b.logit_bias(logits, target, 20))
    assert not torch.equal(a.logit_bias(logits, target, 20), a.logit_bias(logits, target, 21))
    other = step_hook(_small("cuco", steps=50, seed=1))
    assert not torch.equal(a.logit_bias(logits, target, 20), other.logit_bias(logits, target, 20))


# ------------------------------------------------------------------------------------------------- InfoGCL


def _hub_and_path() -> tuple[ViewBatch, ViewBatch]:
    """A hub centred on its 12-neighbour centre, and a 30-node path centred on an end (one neighbour)."""
    hub = nx.Graph([(0, i) for i in range(1, 13)] + [(i, i + 1) for i in range(1, 12)] + [(12, 13), (13, 14)])
    return view_of(hub), view_of(nx.path_graph(30))


def test_infogcl_picks_the_least_overlapping_pair_of_views_that_keeps_the_centres_neighbours():
    hub, path = _hub_and_path()
    q = concat([hub, path, view_of(nx.connected_watts_strogatz_graph(25, 4, 0.3, seed=1))] * 8)
    k = concat([path, hub, view_of(nx.connected_watts_strogatz_graph(25, 4, 0.3, seed=2))] * 8)
    step = infogcl_views(0.2)
    rng = keys(q)
    # every candidate applied whole, from the stream the step gives it
    q_out = [t.forward(q, rng.child("q").child(j)) for j, t in enumerate(step.candidates)]
    k_out = [t.forward(k, rng.child("k").child(j)) for j, t in enumerate(step.candidates)]
    chosen_q, chosen_k = step.choose(q, k, rng)
    size = int(max(q.nid.max(), k.nid.max())) + 1
    for b in range(len(q)):
        keeps_q = [np.array_equal(centre_neighbours(q.select([b]))[0], centre_neighbours(c.select([b]))[0])
                   for c in q_out]
        keeps_k = [np.array_equal(centre_neighbours(k.select([b]))[0], centre_neighbours(c.select([b]))[0])
                   for c in k_out]
        assert keeps_q[-1] and keeps_k[-1]  # the RWR view itself always keeps them
        overlap = {(a, c): jaccard(view_contents(q_out[a].select([b]), size)[0],
                                   view_contents(k_out[c].select([b]), size)[0])
                   for a in range(5) for c in range(5) if keeps_q[a] and keeps_k[c]}
        best = min(overlap.values())
        assert overlap[(chosen_q[b], chosen_k[b])] == best
        assert (chosen_q[b], chosen_k[b]) == min(pair for pair, value in overlap.items() if value == best)
    assert len(set(chosen_q.tolist())) > 1  # not one fixed augmentation
    out_q, out_k = step(q, k, rng)
    for out, whole, chosen in ((out_q, q_out, chosen_q), (out_k, k_out, chosen_k)):
        assert_valid(out, own_pe=False)
        for b in range(len(q)):
            assert same_views(out.select([b]), whole[chosen[b]].select([b]))


def test_infogcl_step_is_one_pair_step_and_refuses_candidates_without_the_rwr_view():
    (step,) = build_pair_pipeline(make_config("infogcl").augment).steps
    assert isinstance(step, InfoMinViews) and [type(c).__name__ for c in step.candidates] == [
        "AttributeMask", "NodeDrop", "Subgraph", "EdgePerturb", "Identity"]
    with pytest.raises(ValueError, match="must end with Identity"):
        InfoMinViews([NodeDrop(0.2)])


# ---------------------------------------------------------------------------------------------------- BYOV


def _dgl_pair(sampler: ViewSampler, count: int = 12) -> tuple[dgl.DGLGraph, dgl.DGLGraph]:
    return collate_pairs(_rwr_pair(sampler, count))


def _graph_arrays(g: dgl.DGLGraph) -> list[np.ndarray]:
    features = [g.ndata[name] for name in sorted(g.ndata.keys())]
    return [t.numpy().copy() for t in (*g.edges(), *features, g.batch_num_nodes(), g.batch_num_edges())]


def test_byov_views_are_valid_views_walked_on_each_generators_transition_matrix(sampler):
    cfg = _small("byov")
    hook = step_hook(cfg)
    graph_q, graph_k = _dgl_pair(sampler)
    before = _graph_arrays(graph_q) + _graph_arrays(graph_k)
    out = hook.views(graph_q, graph_k, 5)
    assert all(np.array_equal(a, b) for a, b in zip(before, _graph_arrays(graph_q) + _graph_arrays(graph_k)))
    a = cfg.augment
    for side, (source_graph, generated) in enumerate(zip((graph_q, graph_k), out)):
        source = Source.of(source_graph)
        rng = KeyedRandom.for_items(cfg.train.seed, 5 * 12 + np.arange(12)).child("byov").child(side)
        noise = torch_generator(step_random(cfg.train.seed, 5, f"byov-noise{side}"))
        views = generate_views(hook.generators[side], source, rng, noise, a.walks, a.walk_length, a.threshold, K,
                               cfg.sampling.pe_sign)
        assert torch.equal(views.to_dgl().ndata[PE], generated.ndata[PE])  # the hook's views are these
        assert_valid(views)
        noise = torch_generator(step_random(cfg.train.seed, 5, f"byov-noise{side}"))
        with torch.no_grad():
            z, _, _ = hook.generators[side].encode(source, noise)
        ptr = source.node_ptr
        for b in range(12):
            p = hook.generators[side].transition(z[ptr[b]:ptr[b + 1]], a.threshold).numpy()
            nodes = views.nid[views.node_ptr[b]:views.node_ptr[b + 1]]  # local ids in the source view
            assert nodes[views.seed_pos[b]] == source.seed_rows[b] - ptr[b]  # the centre stays the centre
            assert len(nodes) <= a.walks * (a.walk_length + 1)
            src, dst = views.edges_of(b)
            assert ((p[nodes[src], nodes[dst]] > 0) | (p[nodes[dst], nodes[src]] > 0)).all()  # steps P allows


def test_byov_is_a_function_of_seed_and_step_and_trains_its_generators_by_the_infomin_reward(sampler):
    graph_q, graph_k = _dgl_pair(sampler)
    logits = torch.randn(12, 12, generator=torch.Generator().manual_seed(0))
    target = torch.arange(12)
    runs = []
    for seed in (0, 0, 1):
        hook = step_hook(_small("byov", seed=seed))
        start = {n: p.detach().clone() for n, p in hook.generators.named_parameters()}
        views = hook.views(graph_q, graph_k, 0)
        stats = hook.update(logits, target, 0)
        runs.append((hook, start, views, stats))
    (a, start_a, views_a, stats_a), (b, _, views_b, stats_b), (c, _, views_c, _) = runs
    assert all(torch.equal(x.ndata[PE], y.ndata[PE]) for x, y in zip(views_a, views_b)) and stats_a == stats_b
    assert all(torch.equal(x, y) for x, y in zip(a.generators.parameters(), b.generators.parameters()))
    assert not torch.equal(views_a[1].ndata[PE], views_c[1].ndata[PE])
    moved = [n for n, p in a.generators.named_parameters() if not torch.equal(p, start_a[n])]
    assert any(n.startswith("0.") for n in moved) and any(n.startswith("1.") for n in moved)
    assert 0 < stats_a["byov_reward_high"] < 1 and np.isfinite(stats_a["byov_generator_loss"])
    fresh = step_hook(_small("byov"))  # the same step with the untrained generators: other views
    later_a, later_fresh = a.views(graph_q, graph_k, 1), fresh.views(graph_q, graph_k, 1)
    assert not all(torch.equal(x.ndata[PE], y.ndata[PE]) for x, y in zip(later_a, later_fresh))


def test_byov_reward_weights_the_reconstruction_and_not_the_kl_term(sampler):
    hook = step_hook(_small("byov"))
    source = Source.of(_dgl_pair(sampler)[0])
    rng = KeyedRandom.for_items(0, np.arange(12))

    def loss(reward: float) -> float:
        with torch.no_grad():
            return float(hook.generators[0].loss(source, torch.full((12,), reward), torch.Generator().manual_seed(0),
                                                 rng, 8))
    zero, low, high = loss(0.0), loss(0.01), loss(1.0)
    assert zero < low < high and (high - zero) == pytest.approx(100 * (low - zero), rel=1e-3)


def test_byov_refuses_torchrun_before_building_anything():
    with pytest.raises(ValueError, match="byov trains its view generators .* without torchrun"):
        Trainer(_small("byov"), dist=types.SimpleNamespace(device=torch.device("cpu")))


# ------------------------------------------------------------------------------------------------ training


def _corpus() -> list[dgl.DGLGraph]:
    return [_graph(0, 250), _graph(1, 250)]


@pytest.mark.parametrize("method", FAMILIES)
def test_three_steps_of_each_competitor_write_a_checkpoint(method, tmp_path):
    run = pretrain(_small(method, tmp_path), progress=False, graphs=_corpus())
    state = load_checkpoint(run)
    assert state["step"] == 3 and state["config"]["family"] == method
    assert ("step_hook" in state) == (method in STEP_HOOKS)  # CuCo's holds nothing: its draws follow the step
    if method == "byov":
        assert {"generators", "optimizer"} <= set(state["step_hook"])


@pytest.mark.parametrize("method", ["cuco", "byov"])
def test_a_run_resumed_from_its_state_continues_exactly(method):
    cfg = _small(method)
    dataset = PretrainPairDataset(_corpus(), cfg.sampling, cfg.train.seed, 3 * 8,
                                  build_pair_pipeline(cfg.augment))
    batches = [collate_pairs(dataset.__getitems__(list(range(8 * s, 8 * s + 8)))) for s in range(3)]
    whole = Trainer(cfg)
    for q, k in batches:
        whole.step(q, k)
    first = Trainer(cfg)
    for q, k in batches[:2]:
        first.step(q, k)
    state = first.state_dict()
    resumed = Trainer(cfg)
    resumed.load_state_dict(state)
    resumed.step(*batches[2])
    assert all(torch.equal(a, b) for a, b in zip(whole.model.state_dict().values(), resumed.model.state_dict().values()))
    if method == "byov":
        assert all(torch.equal(a, b) for a, b in zip(whole.hook.generators.parameters(),
                                                     resumed.hook.generators.parameters()))
