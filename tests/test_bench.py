"""The benchmark entry point run tiny, the process-tree memory sampler, and the power-law generator."""
import multiprocessing
import os
import re

import networkx as nx
import numpy as np
import pytest

import gcc_sgcl.data
from gcc_sgcl.augment.crop import SpectralCrop
from gcc_sgcl.augment.functional import procrustes
from gcc_sgcl.bench.augment import align_fit, changed_views, crop_shape, format_effects, measure_effects
from gcc_sgcl.bench.cli import main
from gcc_sgcl.bench.memory import format_bytes, tree_memory
from gcc_sgcl.bench.sampler import pair_dataset
from gcc_sgcl.data.graphs import check_simple_undirected
from gcc_sgcl.data.powerlaw import powerlaw_graph, powerlaw_weights
from gcc_sgcl.sampling.keys import KeyedRandom

MIB = 2**20


def test_bench_runs_every_part_tiny_and_reports_each(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))  # sgcl's global embeddings of the tiny corpus
    tiny = [powerlaw_graph(300, 1200, np.random.default_rng(1))]
    monkeypatch.setattr(gcc_sgcl.data, "load_pretrain_corpus", lambda names, data_dir=None: tiny)
    main(["--corpus", "tiny", "--nodes", "2000", "--edges", "8000", "--steps", "2", "--mem-batch-size", "4",
          "--mem-workers", "1", "--pe-graphs", "8", "--pe-batch", "4", "--pe-repeats", "1", "--workers", "0", "1",
          "--batch-size", "4", "--sampler-batches", "1", "--reference-pairs", "2", "--sampler-rounds", "1",
          "--e2e-steps", "1", "--e2e-batch-size", "4", "--e2e-workers", "0",
          "--runtime-batches", "1", "--runtime-batch-size", "2", "--hops", "16", "32", "--scaling-views", "4",
          "--augment-batches", "1"])
    out = capsys.readouterr().out
    for title in ("## memory", "## positional embeddings", "## sampler throughput", "## pre-training loop",
                  "## seconds per mini-batch", "## cost vs subgraph size", "## what each augmentation stage changes"):
        assert title in out
    assert "2,000 nodes" in out and "2 steps of gcc" in out
    peak = re.search(r"peak tree PSS ([\d,]+) MiB \| peak tree RSS \(sum[^)]*\) ([\d,]+) MiB", out)
    pss, rss = (float(x.replace(",", "")) for x in peak.groups())
    assert 0 < pss <= rss  # one worker shares the main process's pages: RSS double-counts them
    assert re.search(r"at the PSS peak, per process \(MiB\): pid \d+: RSS", out)
    speedups = [float(x) for x in re.findall(r"\| ([\d.]+)x \|", out)]
    assert len(speedups) == 7 and speedups[0] == 1.0 and all(s > 0 for s in speedups)  # 3 PE paths, 2 methods x 2
    for method in ("gcc", "sgcl"):  # batched, reference, ratio, eigen alone, its ceiling, 0 and 1 workers
        assert re.search(rf"\| {method} \| \d+ \| \d+ \| [\d.]+x \| \d+ \| [\d.]+x \| \d+ \| \d+ \|", out)
        assert re.search(rf"\| {method} \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|", out)  # e2e
    assert re.search(r"sgcl/gcc total s/batch [\d.]+ \(target <= 1.10\)", out)
    assert re.search(r"\| 16 \| [\d.]+ \(\d+\) \|", out) and re.search(r"\| 32 \| [\d.]+ \(\d+\) \|", out)


def test_bench_runs_only_the_chosen_parts(monkeypatch, capsys):
    tiny = [powerlaw_graph(200, 600, np.random.default_rng(2))]
    monkeypatch.setattr(gcc_sgcl.data, "load_pretrain_corpus", lambda names, data_dir=None: tiny)
    main(["--only", "pe", "--pe-graphs", "4", "--pe-batch", "2"])
    out = capsys.readouterr().out
    assert "## positional embeddings" in out and "## memory" not in out and "## sampler" not in out


def test_augment_effects_count_filter_outcomes_and_changed_views(monkeypatch, tmp_path):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))
    graphs = [powerlaw_graph(300, 1200, np.random.default_rng(1))]
    found = measure_effects(graphs, ["gcc", "sgcl-similar[c=0]", "sgcl-diverse[c=0]", "sgcl"], 64, 2)
    assert not found["gcc"].has_filter and found["gcc"].steps == [] and found["gcc"].pairs == 128
    never = found["sgcl-similar[c=0]"]  # cos > 1 never holds: every filtered pair uses its 5 tries
    assert never.passed_first == never.passed_later == 0 and never.tries == 5 * never.filtered
    assert 0.35 < never.filtered / never.pairs < 0.65  # p_filter = 0.5
    always = found["sgcl-diverse[c=0]"]  # cos < 1 holds unless both views sum to parallel rows
    assert always.passed_first >= 0.9 * always.filtered
    assert [s.name for s in found["sgcl"].steps] == ["SpectralCrop", "Align", "Mask or Reorder"]
    crop, align, mask_reorder = found["sgcl"].steps
    assert crop.nodes_after < crop.nodes_before and align.nodes_after == align.nodes_before
    for st in found["sgcl"].steps:
        assert 0 < st.changed_q < found["sgcl"].pairs and 0 < st.changed_k < found["sgcl"].pairs
    assert found["gcc"].align is None and found["sgcl-similar[c=0]"].align is None
    fit = found["sgcl"].align  # one entry per view the align step rotated
    assert len(fit.rank) == len(fit.columns) == align.changed_q + align.changed_k
    assert all(0 <= r <= c for r, c in zip(fit.rank, fit.columns)) and max(fit.rank) > 0
    assert np.nanmin(fit.determined) >= 0 and np.nanmax(fit.determined) <= 1 + 1e-9
    assert np.nanmin(fit.fit) >= 0 and np.nanmax(fit.fit) <= 1 + 1e-9
    table = format_effects(found, 64, 2)
    assert re.search(rf"\| sgcl \| {len(fit.rank)} \| \d+ \| \d+ \| [\d.]+ \| [\d.]+ \|", table)
    assert not re.search(r"\| sgcl-similar\[c=0\] \| \d+ \| \d+ \| \d+ \| [\d.]+ \| [\d.]+ \|", table)


def test_align_fit_measures_how_far_the_views_determine_the_rotation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 4))
    q = np.linalg.qr(rng.normal(size=(4, 4)))[0]
    a, b = rng.normal(size=4), rng.normal(size=4)
    rank_one = np.outer(x @ a, b)  # x^T n = (x^T x a) b^T: only the direction x^T x a is determined
    pad = np.zeros((2, 4))  # a padded row changes nothing
    xs = np.stack([np.vstack([x, pad])] * 3)
    ns = np.stack([np.vstack([3 * x @ q, pad]), np.vstack([rank_one, pad]), np.zeros((10, 4))])
    rank, determined, fit = align_fit(xs, ns)
    assert rank.tolist() == [4, 1, 0]
    u = x.T @ x @ a / np.linalg.norm(x.T @ x @ a)
    np.testing.assert_allclose(determined[:2], [1.0, np.sum((x @ u) ** 2) / np.sum(x ** 2)], rtol=1e-9)
    expected = np.linalg.norm(x.T @ x @ a) / (np.linalg.norm(x) * np.linalg.norm(x @ a))
    np.testing.assert_allclose(fit[:2], [1.0, expected], rtol=1e-9)
    rotated = np.matmul(xs[:2], procrustes(xs[:2], ns[:2]))  # the fit is the cosine align's own Q* reaches
    cosine = np.sum(rotated * ns[:2], axis=(1, 2)) / (np.linalg.norm(xs[:2], axis=(1, 2))
                                                       * np.linalg.norm(ns[:2], axis=(1, 2)))
    np.testing.assert_allclose(fit[:2], cosine, rtol=1e-9)
    assert determined[2] == 0 and np.isnan(fit[2])  # no global rows: nothing determined, no fit


def test_changed_views_are_those_a_crop_shrinks(monkeypatch, tmp_path):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))
    ds = pair_dataset([powerlaw_graph(300, 1200, np.random.default_rng(1))], "gcc", 64, 0)
    q, _ = ds.__getitems__(range(64))
    assert not changed_views(q, q).any()
    cropped = SpectralCrop((0.2, 0.8, 0.2, 0.8))(q, KeyedRandom.for_items(0, np.arange(64)))
    np.testing.assert_array_equal(changed_views(q, cropped), cropped.num_nodes < q.num_nodes)
    flipped = q.replace(pe=-q.pe)  # same structure, another embedding: every view with a non-zero PE changes
    assert changed_views(q, flipped).sum() == (np.bincount(q.node_view, weights=np.abs(q.pe).sum(1)) > 0).sum()


def test_crop_shape_matches_networkx_on_random_crops(monkeypatch, tmp_path):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))
    ds = pair_dataset([powerlaw_graph(300, 1200, np.random.default_rng(1))], "gcc", 64, 0)
    q, _ = ds.__getitems__(range(64))
    rng = np.random.default_rng(2)
    keep = rng.random(len(q.nid)) < 0.6
    keep[q.node_ptr[:-1] + q.seed_pos] = True  # as the crops, the centre stays
    after = q.induce(keep)
    kept, split, alone = crop_shape(q, after)
    np.testing.assert_array_equal(kept, keep)

    def graph(views, b):
        g = nx.Graph()
        g.add_nodes_from(range(int(views.num_nodes[b])))
        g.add_edges_from(zip(*(e.tolist() for e in views.edges_of(b))))
        return g

    for b in range(len(q)):
        before_b, after_b = graph(q, b), graph(after, b)
        assert split[b] == (nx.number_connected_components(after_b) > nx.number_connected_components(before_b))
        assert alone[b] == (after_b.degree[int(after.seed_pos[b])] == 0 and after_b.number_of_nodes() > 1)
    assert split.any() and alone.any() and not split.all()  # the random crops give both outcomes
    with pytest.raises(ValueError, match="before and after a crop"):
        crop_shape(after, q)


def test_crop_effects_by_basis_the_combinatorial_crop_keeps_views_whole_and_their_core(monkeypatch, tmp_path):
    # the normalised Laplacian's eigenvectors scale with sqrt(degree), so a percentile box of them is no contiguous
    # region: it cuts views into pieces; D - A's eigenvectors vary smoothly along the view
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path))
    graphs = [powerlaw_graph(300, 1200, np.random.default_rng(1))]
    found = measure_effects(graphs, ["sgcl-crop", "sgcl-crop[basis=combinatorial]", "sgcl-mask"], 64, 2)
    assert found["sgcl-mask"].crop is None
    for method in ("sgcl-crop", "sgcl-crop[basis=combinatorial]"):
        crop, step = found[method].crop, found[method].steps[0]
        assert len(crop.kept) == step.changed_q + step.changed_k > 0
        assert max(crop.kept) < 1 and crop.nodes_dropped == step.nodes_before - step.nodes_after
    normalized, combinatorial = found["sgcl-crop"].crop, found["sgcl-crop[basis=combinatorial]"].crop
    assert normalized.split > 3 * combinatorial.split
    c = combinatorial
    assert c.degree_kept / c.nodes_kept > c.degree_dropped / c.nodes_dropped
    table = format_effects(found, 64, 2)
    number, share = r"[\d.]+", r"[\d.]+ %"
    assert re.search(rf"\| sgcl-crop \| {len(normalized.kept)} \| {number} \| {share} \| {share} \| {number} \| "
                     rf"{number} \|", table)
    assert "| sgcl-mask | " not in table.split("crop (the views")[1]


def _read_block_and_wait(block, ready, done):
    block.sum()  # the child only reads the inherited pages: they stay shared
    ready.set()
    done.wait(30)


def test_tree_pss_counts_pages_shared_with_a_forked_child_once():
    block = np.ones(64 * MIB // 8)  # written, so resident in the parent
    ctx = multiprocessing.get_context("fork")
    ready, done = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_read_block_and_wait, args=(block, ready, done))
    child.start()
    try:
        assert ready.wait(30)
        usage = tree_memory(os.getpid())
    finally:
        done.set()
        child.join(30)
    assert child.pid in usage and os.getpid() in usage
    rss = sum(u["rss"] for u in usage.values())
    pss = sum(u["pss"] for u in usage.values())
    assert rss - pss > 0.8 * block.nbytes  # RSS counts the block in both processes, PSS once
    assert usage[child.pid]["private"] < block.nbytes / 2


def test_format_bytes_counts_the_arrays_of_each_sparse_format():
    g = powerlaw_graph(500, 2000, np.random.default_rng(3))
    g.create_formats_()
    for fmt in ("coo", "csr", "csc"):
        assert format_bytes(g, fmt) == sum(t.numel() * t.element_size() for t in g.adj_tensors(fmt))


def test_powerlaw_graph_is_simple_seeded_and_heavy_tailed():
    g = powerlaw_graph(5000, 25000, np.random.default_rng(0))
    check_simple_undirected(g, "power-law graph")
    assert g.num_nodes() == 5000 and 0.9 * 25000 < g.num_edges() // 2 <= 25000
    again = powerlaw_graph(5000, 25000, np.random.default_rng(0))
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(g.edges(), again.edges()))
    deg = g.in_degrees().numpy()
    w = powerlaw_weights(5000, 25000)
    assert deg.max() > 10 * np.median(deg)  # hubs
    assert np.corrcoef(deg, w)[0, 1] > 0.9  # degrees follow the expected-degree sequence
    assert w.max() == np.sqrt(2 * 25000)  # Chung–Lu cap: sqrt of the expected degree sum


def test_bench_denormal_part_times_a_trained_encoder_against_a_fresh_one(tiny_encoder, tmp_path, monkeypatch,
                                                                          capsys):
    """``denormal``, by name: the encoder of --denormal-checkpoint (two batch-norm scales made denormal here) and a
    fresh one, each with denormals kept and flushed; without the flag, one line naming it."""
    import torch

    from gcc_sgcl.engine.checkpoint import load_checkpoint, save_checkpoint

    state = load_checkpoint(tiny_encoder)
    norm = next(k for k, v in state["model"].items() if "norm" in k and k.endswith("weight") and v.numel() > 1)
    state["model"][norm][:2] = torch.tensor([1e-39, 2e-40])
    save_checkpoint(state, tmp_path / "run" / "checkpoint.pt")
    tiny = [powerlaw_graph(300, 1200, np.random.default_rng(1))]
    monkeypatch.setattr(gcc_sgcl.data, "load_pretrain_corpus", lambda names, data_dir=None: tiny)
    main(["denormal", "--denormal-checkpoint", str(tmp_path / "run"), "--corpus", "tiny", "--e2e-batch-size", "4",
          "--denormal-steps", "1"])
    out = capsys.readouterr().out
    rows = re.findall(r"^\| (trained \(3 steps\)|fresh) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| [\d.]+ \| [\d.]+ \|$",
                      out, re.M)
    assert [(name, tiny_count) for name, tiny_count, *_ in rows] == [("trained (3 steps)", "2"), ("fresh", "0")]
    assert all(float(kept) > 0 and float(flushed) > 0 for *_, kept, flushed in rows)
    with pytest.raises(SystemExit, match="--denormal-checkpoint"):
        main(["denormal"])


def test_powerlaw_graph_rejects_bad_parameters():
    with pytest.raises(ValueError, match="exponent"):
        powerlaw_weights(100, 200, exponent=2.0)
    with pytest.raises(ValueError, match="num_nodes"):
        powerlaw_weights(1, 200)


def test_bench_embed_part_runs_tiny_by_name_and_reports_each_size_and_view_count(capsys):
    main(["embed", "--embed-sizes", "600", "1200", "--embed-views", "1", "2", "--embed-floor-chunks", "1",
          "--embed-batch-size", "64"])
    out = capsys.readouterr().out
    assert "## streamed embedding" in out and "## memory" not in out and "## sampler" not in out
    rows = re.findall(r"^\| ([\d,]+) \| [\d,]+ \| [\d,]+ \| (\d) \| \d\+\d \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| "
                      r"([\d.]+) \| [\d.]+ \| [\d,]+ \| [\d,]+ \|", out, re.M)
    assert [(n, v) for n, v, *_ in rows] == [("600", "1"), ("600", "2"), ("1,200", "1"), ("1,200", "2")]
    assert all(float(cpu) > 0 and float(floor) > 0 and float(ratio) > 0 for _, _, cpu, _, floor, ratio in rows)
    assert re.search(r"1,200 nodes, \d+\+\d+ threads: CPU per view at 2 views / at 1 views = [\d.]+", out)


def test_bench_embed_measures_each_builder_count_against_one_floor(capsys):
    main(["embed", "--embed-sizes", "600", "--embed-views", "2", "--embed-builders", "0", "1",
          "--embed-floor-chunks", "1", "--embed-batch-size", "64"])
    out = capsys.readouterr().out
    rows = re.findall(r"^\| 600 \| [\d,]+ \| 600 \| 2 \| \d+\+(\d) \| [\d.]+ \| [\d.]+ \| ([\d.]+) \|", out, re.M)
    assert [b for b, _ in rows] == ["0", "1"]  # in the model's process, then one builder process
    assert rows[0][1] == rows[1][1]  # both against the same floor, timed once after the runs
