"""Every method preset trains through the same engine and records its full configuration."""
import dataclasses

import dgl
import networkx as nx
import numpy as np
import pytest

from gcc_sgcl.augment import PairPipeline, Split
from gcc_sgcl.config import AUGMENT_FAMILIES, STAGES
from gcc_sgcl.engine.checkpoint import load_checkpoint
from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
from gcc_sgcl.engine.pretrain import build_pipeline, pretrain
from gcc_sgcl.method import MethodSpec
from gcc_sgcl.presets import FILTER_C, PRESETS, SINGLE_STAGES, canonical_name, make_config, method_names
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.dataset import PretrainPairDataset

from viewcheck import centres

METHODS = [*PRESETS, "sgcl-crop+reorder", "sgcl-similar+mask"]
BASELINE_METHODS = ["graphcl", "grace", "mvgrl", "gca"]


def _corpus():
    return [dgl.to_bidirected(dgl.from_networkx(nx.powerlaw_cluster_graph(250, 3, 0.3, seed=s))) for s in (0, 1)]


def _cfg(method, tmp_path, seed=0):
    return make_config(method, {
        "sampling": {"rw_hops": 24, "positional_embedding_size": 8},
        "model": {"hidden_size": 8, "num_layers": 2, "degree_embedding_size": 4},
        "train": {"batch_size": 4, "steps": 2, "seed": seed, "output_dir": str(tmp_path), "corpus": ["toy"]},
    })


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("method", METHODS)
def test_every_preset_trains_and_records_method_seed_and_config(method, tmp_path):
    run = pretrain(_cfg(method, tmp_path, seed=3), progress=False, graphs=_corpus())
    name = canonical_name(method)  # a method whose views pass SGCL's filter names its c: sgcl → sgcl[c=0.4]
    assert name == method or name == f"{method}[c={FILTER_C:g}]"
    assert run.name == f"{MethodSpec.parse(name).slug}_e2e_toy_s3"
    state = load_checkpoint(run)
    assert state["config"]["method"] == name and state["step"] == 2
    _, cfg, _ = load_encoder_checkpoint(run)  # generate needs only the path
    assert cfg == _cfg(method, tmp_path, seed=3)


def test_pairwise_presets_cover_every_pair_of_single_stages():
    names = list(SINGLE_STAGES)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            try:
                cfg = make_config(f"sgcl-{a}+{b}")
            except ValueError as err:
                assert "contradictory" in str(err)
                continue
            enabled = {s for s in STAGES if getattr(cfg.augment, f"use_{s}")}
            assert 1 <= len(enabled) <= 2


def same_views(a: ViewBatch, b: ViewBatch) -> bool:
    """Same nodes and edges, view by view, and the same PE up to float32 rounding: the padded batched ``eigh``
    of a view's size bucket may round its last bits differently with other views beside it (seen: 5e-7)."""
    return all(np.array_equal(getattr(a, name), getattr(b, name))
               for name in ("num_nodes", "num_edges", "src", "dst", "nid")) and a.pe.shape == b.pe.shape and \
        np.allclose(a.pe, b.pe, rtol=0, atol=1e-5)


def test_gccs_pipeline_only_walks_and_sgcl_changes_views(tmp_path):
    graphs = _corpus()
    gcc, sgcl = _cfg("gcc", tmp_path), _cfg("sgcl", tmp_path)
    gcc_pipeline, gcc_embs = build_pipeline(gcc, graphs, progress=False)
    assert gcc_pipeline.filter is None and gcc_pipeline.steps == [] and gcc_embs is None
    pipeline, embs = build_pipeline(sgcl, graphs, progress=False)
    assert isinstance(pipeline, PairPipeline) and pipeline.filter is not None and len(pipeline.steps) == 3
    assert [e.shape for e in embs] == [(250, 8), (250, 8)]
    indices = list(range(40))
    plain = PretrainPairDataset(graphs, gcc.sampling, 0, 40, gcc_pipeline).__getitems__(indices)
    augmented = PretrainPairDataset(graphs, sgcl.sampling, 0, 40, pipeline, embs).__getitems__(indices)
    np.testing.assert_array_equal(centres(plain[0]), centres(augmented[0]))  # same starts: augmentation acts after
    np.testing.assert_array_equal(centres(plain[1]), centres(augmented[1]))
    changed = sum(not same_views(plain[0].select([i]), augmented[0].select([i])) for i in indices)
    assert changed > 10
    again = PretrainPairDataset(graphs, sgcl.sampling, 0, 40, pipeline, embs)
    for i in range(5):  # an item is a function of (seed, index), whatever batch it is drawn in
        assert same_views(again[i][1], augmented[1].select([i]))


def test_baseline_presets_replace_only_the_view_generation(tmp_path):
    graphs = _corpus()
    gcc = _cfg("gcc", tmp_path)
    indices = list(range(12))
    plain_q, plain_k = PretrainPairDataset(graphs, gcc.sampling, 0, 12, PairPipeline()).__getitems__(indices)
    assert all(name in method_names() for name in BASELINE_METHODS)
    for method in BASELINE_METHODS:
        cfg = _cfg(method, tmp_path)
        assert cfg.family == method and cfg.augment == AUGMENT_FAMILIES[method]()  # the family's settings, only
        assert set(cfg.to_dict()["augment"]) == {f.name for f in dataclasses.fields(AUGMENT_FAMILIES[method])}
        assert (cfg.sampling, cfg.model, cfg.train) == (gcc.sampling, gcc.model, gcc.train)  # GCC's encoder, loop
        pipeline, embs = build_pipeline(cfg, graphs, progress=False)
        assert isinstance(pipeline, PairPipeline) and pipeline.filter is None and embs is None
        assert len(pipeline.steps) == 1 and isinstance(pipeline.steps[0], Split)
        q, k = PretrainPairDataset(graphs, cfg.sampling, 0, 12, pipeline, embs).__getitems__(indices)
        np.testing.assert_array_equal(centres(q), centres(plain_q))  # same walks, centre kept
        np.testing.assert_array_equal(centres(k), centres(plain_q))
        changed = sum(not same_views(plain_k.select([i]), k.select([i])) for i in indices)
        assert changed >= 8, method


def test_bracketed_settings_change_only_their_fields_and_bad_ones_name_the_problem():
    base, variant = make_config("sgcl"), make_config("sgcl-crop+similar[c=0.45, k=64]")
    assert variant.augment.c == 0.45 and variant.sampling.positional_embedding_size == 64
    pair = make_config("sgcl-crop+similar")
    assert variant.augment == dataclasses.replace(pair.augment, c=0.45)
    assert variant.model == base.model and variant.train == base.train
    assert make_config("sgcl[c=0.2]").run_dir_name() == "sgcl-c=0.2_e2e_synthetic_s0"
    same = make_config("sgcl[ k=64 , c=0.20]")  # one configuration, one name (rows, run folders)
    assert same.method == "sgcl[c=0.2,k=64]" and same.run_dir_name() == "sgcl-c=0.2-k=64_e2e_synthetic_s0"
    assert make_config("sgcl[c=0.35]", {"augment": {"c": 0.35}}).augment.c == 0.35
    with pytest.raises(ValueError, match="sets c in brackets; a flag gives another value"):
        make_config("sgcl[c=0.35]", {"augment": {"c": 0.5}})
    swapped = make_config("sgcl[permute=random,c=0.4]")  # the appendix's ablation: one stage swapped, all kept
    assert swapped.method == "sgcl[c=0.4,permute=random]"
    assert swapped.augment == dataclasses.replace(base.augment, c=0.4, permute_kind="random")
    assert make_config("sgcl[crop=random]").augment == dataclasses.replace(base.augment, crop_kind="random")
    basis = make_config("sgcl-crop[basis=combinatorial]")
    assert basis.augment == dataclasses.replace(make_config("sgcl-crop").augment, crop_basis="combinatorial")
    assert make_config("sgcl[basis=combinatorial, c=0.4]").method == "sgcl[c=0.4,basis=combinatorial]"
    for bad, message in [("sgcl[c=high]", "c must be float"), ("sgcl[q=1]", "among c, k"),
                         ("sgcl[crop=fancy]", "--crop-kind must be one of random, spectral, got 'fancy'"),
                         ("gcc[crop=random]", "crop_kind has no effect"), ("sgcl-mask[permute=random]", "permute_kind"),
                         ("sgcl-mask[basis=combinatorial]", "crop_basis has no effect"),
                         ("sgcl[basis=fancy]", "--crop-basis must be one of .*got 'fancy'"),
                         ("graphcl[c=0.2]", "its c has no effect"), ("sgcl-crop+mask[c=0.45]", "its c has no effect"),
                         ("sgcl[]", "empty brackets"), ("sgcl[c=0.2,c=0.3]", "at most once"), ("sgcl[c=0.3", r"<method>\[name=value"),
                         ("nope[c=0.3]", "unknown method 'nope'")]:
        with pytest.raises(ValueError, match=message):
            make_config(bad)


def test_a_joined_name_is_a_row_label_not_a_method_to_train():
    from gcc_sgcl.presets import make_config

    with pytest.raises(ValueError, match="joined to a training-free vector, not a method to pre-train; train 'sgcl'"):
        make_config("sgcl ⊕ structural")


def test_sgcl_means_the_tables_recipe_and_old_rows_keep_their_c():
    """`pretrain.sh 0 sgcl` trains the tables' sgcl (c = 0.4, named so); a row or checkpoint stored as plain
    `sgcl` before that (c = 0.3) reads as sgcl[c=0.3], never as the new sgcl."""
    from gcc_sgcl.presets import current_name

    assert make_config("sgcl").learning_settings() == make_config("sgcl[c=0.4]").learning_settings()
    assert make_config("sgcl").run_dir_name().startswith("sgcl-c=0.4_")
    assert make_config("sgcl", {"augment": {"c": 0.35}}).method == "sgcl[c=0.35]"  # a flag's c is in the name
    assert make_config("gcc").augment.c == make_config("sgcl-crop").augment.c == 0.3  # unread: configs unchanged
    assert current_name("sgcl", {"use_filter": True, "c": 0.3}) == "sgcl[c=0.3]"
    assert current_name("sgcl ⊕ structural", {"use_filter": True, "c": 0.3}) == "sgcl[c=0.3] ⊕ structural"


def test_a_run_of_the_old_plain_sgcl_resumes_as_sgcl_at_its_c(tmp_path):
    from gcc_sgcl.engine.pretrain import _check_resume_config

    old = make_config("sgcl[c=0.3]").to_dict()
    old["method"] = "sgcl"  # how a checkpoint of the preset named it before names carried c
    _check_resume_config(old, make_config("sgcl[c=0.3]"), tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match="augment.c: checkpoint 0.3 vs now 0.4"):
        _check_resume_config(old, make_config("sgcl"), tmp_path / "checkpoint.pt")


@pytest.mark.parametrize("method", ["gcc", "graphcl", "mvgrl", "sgcl"])
def test_every_family_takes_the_launch_flags_and_shows_gccs_spellings(method, capsys):
    # pretrain.sh passes --gpu to every method; the parser rebuilt for another family keeps it and GCC's help
    from gcc_sgcl.engine.pretrain import command_parser

    args = command_parser().parse_args(["--method", method, "--gpu", "-1", "--steps", "2"])
    assert (args.method, args.gpu) == (method, "-1")
    with pytest.raises(SystemExit):
        command_parser().parse_args(["--method", method, "--help"])
    text = capsys.readouterr().out
    assert "--gpu" in text and "GCC's spellings are accepted" in text
