"""The encoders shipped under saved/pretrained/ load and embed on a fresh clone (no pre-training needed)."""
import dataclasses
import json
import os
import subprocess
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import gcc_sgcl
from gcc_sgcl.engine.checkpoint import export_encoder, load_checkpoint

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p.parent for p in (ROOT / "saved" / "pretrained").glob("*/checkpoint.pt"))
SHARED = ROOT.parent / "shared" / "data"


def test_gcc_and_sgcl_encoders_are_shipped():
    presets = {json.loads((p / "config.json").read_text())["method"].split("[")[0] for p in SHIPPED}
    assert presets >= {"gcc", "sgcl"}


@pytest.mark.parametrize("run", SHIPPED, ids=[p.name for p in SHIPPED])
def test_a_shipped_encoder_loads_and_embeds_a_graph(run):
    enc = gcc_sgcl.load_encoder(run)
    rows = enc.embed_nodes(nx.karate_club_graph())
    assert rows.shape == (34, enc.hidden_size) and np.isfinite(rows).all()
    norms = np.linalg.norm(enc.embed_graphs([nx.karate_club_graph()]), axis=1)  # mean of two unit rows
    assert (norms > 0).all() and (norms <= 1.0 + 1e-5).all()


@pytest.mark.skipif(not (SHARED / "node_classification").is_dir(), reason="../shared/data is absent")
@pytest.mark.parametrize("run", SHIPPED[:1], ids=[p.name for p in SHIPPED[:1]])
def test_generate_sh_embeds_usa_airport_with_a_shipped_encoder(run, tmp_path):
    copy = export_encoder(run, tmp_path / run.name)  # a copy, so the test leaves the shipped folder as it was
    env = {**os.environ, "GCC_SGCL_DATA": str(SHARED), "GCC_SGCL_CACHE": str(tmp_path / "cache")}
    subprocess.run(["bash", str(ROOT / "scripts" / "generate.sh"), "-1", str(copy), "usa_airport"], check=True,
                   env=env, capture_output=True)
    assert np.load(copy / "usa_airport.npy").shape == (1190, gcc_sgcl.load_encoder(run).hidden_size)


def test_export_keeps_config_and_weights_and_drops_the_optimiser(tmp_path):
    from gcc_sgcl.engine.pretrain import pretrain
    from gcc_sgcl.presets import make_config

    cfg = make_config("gcc", {"model": {"hidden_size": 16, "num_layers": 3},
                              "train": {"steps": 1, "batch_size": 8, "output_dir": str(tmp_path), "run_name": "r"}})
    run = pretrain(cfg, progress=False, graphs=[gcc_sgcl.as_dgl_graph(nx.barabasi_albert_graph(100, 3, seed=0))])
    shipped = load_checkpoint(export_encoder(run, tmp_path / "shipped"))
    full = load_checkpoint(run)
    assert set(shipped) == {"config", "step", "model"} and shipped["config"] == full["config"]
    assert all((shipped["model"][k] == v).all() for k, v in full["model"].items())
    assert (tmp_path / "shipped" / "config.json").is_file()


@pytest.mark.parametrize("run", SHIPPED, ids=[p.name for p in SHIPPED])
def test_a_shipped_encoder_of_either_layout_is_read_and_reused_by_a_sweep_of_its_training(run, tmp_path):
    from gcc_sgcl.config import AUGMENT_FAMILIES, Config, migrate
    from gcc_sgcl.experiments.encoders import carried_state
    from gcc_sgcl.experiments.sweep import Sweep

    stored = load_checkpoint(run / "checkpoint.pt")["config"]
    migrated = migrate(stored)
    if "family" in stored:  # written by this code's layout: kept as it is
        assert migrated == stored
    else:  # written before the augmentation families: one flat group with a baseline name
        assert "baseline" in stored["augment"] and "family" in migrated
    cfg = Config.from_dict(stored)
    assert Config.from_dict(json.loads((run / "config.json").read_text())) == cfg
    assert set(migrated["augment"]) == {f.name for f in dataclasses.fields(AUGMENT_FAMILIES[cfg.family])}
    t = cfg.train
    sweep = Sweep(methods=[cfg.method], seeds=[t.seed], datasets=[], steps=t.steps, batch_size=t.batch_size,
                  corpus=t.corpus, output_dir=str(tmp_path), reuse=[str(run)])
    fresh = sweep.encoder_config(cfg.method, t.mode, t.seed)
    assert fresh.to_dict()["augment"] == migrated["augment"]
    assert carried_state(fresh, sweep.reuse) == (run, t.steps)  # reused, not trained again
