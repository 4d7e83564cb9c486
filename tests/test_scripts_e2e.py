"""The GCC-style shell chain end to end on the embedded data: pretrain.sh → generate.sh → the three tasks."""
import csv
import os
import subprocess
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--steps", "3", "--batch-size", "8", "--rw-hops", "16", "--hidden-size", "16", "--num-layers", "3",
         "--positional-embedding-size", "8", "--log-freq", "1"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "CI": "true"}
    return subprocess.run(["bash", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_pretrain_generate_and_all_three_tasks_through_the_scripts(tmp_path):
    out = _run(str(ROOT / "scripts/pretrain.sh"), "-1", "gcc", *SMALL, "--corpus", "synthetic",
               "--output-dir", "runs", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    run = tmp_path / "runs" / "gcc_e2e_synthetic_s0"
    assert (run / "checkpoint.pt").is_file()
    assert any(p.name.startswith("events.out.tfevents") for p in run.iterdir())

    datasets = ["synthetic-roles", "synthetic-graphs", "synthetic-similarity"]
    out = _run(str(ROOT / "scripts/generate.sh"), "-1", "runs/gcc_e2e_synthetic_s0", *datasets, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    for name in datasets:
        emb = np.load(run / f"{name}.npy")
        assert emb.shape[1] == 16 and np.isfinite(emb).all()

    for task, dataset in [("node_classification", "synthetic-roles"), ("graph_classification", "synthetic-graphs"),
                          ("similarity_search", "synthetic-similarity")]:
        out = _run(str(ROOT / f"scripts/{task}/ours.sh"), "runs/gcc_e2e_synthetic_s0", "16", dataset, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-2000:]
        assert dataset in out.stdout and "±" in out.stdout
    with open(run / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["task"] for r in rows} == {"node_classification", "graph_classification", "similarity_search"}
    assert {r["metric"] for r in rows if r["task"] == "similarity_search"} == {"hits@20", "hits@40"}


def test_pretrain_script_rejects_unknown_method_listing_valid_ones(tmp_path):
    out = _run(str(ROOT / "scripts/pretrain.sh"), "-1", "nope", cwd=tmp_path)
    assert out.returncode != 0
    assert "valid methods" in out.stderr and "gcc" in out.stderr


def test_pretrain_script_usage_without_arguments(tmp_path):
    out = _run(str(ROOT / "scripts/pretrain.sh"), cwd=tmp_path)
    assert out.returncode == 2 and "usage" in out.stderr
