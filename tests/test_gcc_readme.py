"""GCC's README commands (THUDM/GCC, README.md: Pretraining, Downstream Tasks) run here as a GCC user types them,
with only ``<gpu>``, ``<load_path>`` and ``<hidden_size>`` filled in and budget flags added for speed. The list
below is the README's, in its order; the downstream commands need the shared datasets and skip without them."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GCC_SGCL_DATA", ROOT.parent / "shared" / "data")).resolve()  # the commands run elsewhere
TINY = ["--steps", "3", "--batch-size", "8"]  # budget flags added for speed
RUN = "saved/gcc_moco_synthetic_s0"  # where GCC's MoCo command trains (method gcc, built-in corpus)
# GCC's README, Quick Start and Downstream Tasks: (command with placeholders filled, flags added for speed)
PRETRAIN = [
    ("bash scripts/pretrain.sh -1 --batch-size 256", ["--steps", "2", "--batch-size", "8"]),  # E2E, GCC's K = 255
    ("bash scripts/pretrain.sh 0 --moco --nce-k 16384", TINY),  # MoCo; GPU 0 falls back to the CPU here
]
DOWNSTREAM = [
    (f"bash scripts/generate.sh 0 {RUN}/checkpoint.pt usa_airport kdd imdb-binary", ["--copies", "1"]),
    ("bash scripts/node_classification/baseline.sh 64 prone usa_airport h-index", ["--repeats", "1"]),
    (f"bash scripts/generate.sh 0 {RUN}/checkpoint.pt usa_airport h-index", ["--copies", "1"]),
    (f"bash scripts/node_classification/ours.sh {RUN} 64 usa_airport h-index", ["--repeats", "1"]),
    (f"bash scripts/finetune.sh {RUN}/checkpoint.pt 0 usa_airport",
     ["--epochs", "1", "--max-folds", "1", "--view-copies", "1"]),
    (f"bash scripts/graph_classification/ours.sh {RUN} 64 imdb-binary", ["--repeats", "1"]),
    ("bash scripts/similarity_search/baseline.sh 64 graphwave kdd_icdm", []),
    (f"bash scripts/generate.sh 0 {RUN}/checkpoint.pt kdd icdm", ["--copies", "1"]),
    (f"bash scripts/similarity_search/ours.sh {RUN} 64 kdd_icdm", []),
]


def _run(command: str, extra: list[str], cwd: Path) -> subprocess.CompletedProcess:
    argv = command.replace("scripts/", f"{ROOT}/scripts/", 1).split() + extra
    env = {**os.environ, "GCC_SGCL_DATA": str(DATA), "GCC_SGCL_CACHE": str(cwd / "cache")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("gcc_readme")


@pytest.mark.parametrize("command, extra", PRETRAIN, ids=[c for c, _ in PRETRAIN])
def test_gcc_readme_pretraining_commands_run_as_written(command, extra, workdir):
    done = _run(command, extra, workdir)
    assert done.returncode == 0, done.stderr[-2000:]
    mode = "moco" if "--moco" in command else "e2e"
    assert (workdir / f"saved/gcc_{mode}_synthetic_s0/checkpoint.pt").is_file()
    assert "pre-training gcc" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(not (DATA / "node_classification").is_dir(), reason=f"shared datasets not under {DATA}")
@pytest.mark.parametrize("command, extra", DOWNSTREAM, ids=[c.split(" ", 2)[1] + " " + c.rsplit(" ", 1)[-1]
                                                            for c, _ in DOWNSTREAM])
def test_gcc_readme_downstream_commands_run_as_written(command, extra, workdir):
    if not (workdir / RUN / "checkpoint.pt").is_file():
        pytest.skip("needs the MoCo encoder of the pre-training command above")
    done = _run(command, extra, workdir)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_gcc_flag_spellings_train_what_gcc_means(workdir):
    """--num-layer, --learning_rate, --epochs, --dataset, --model-path and --resume <checkpoint file>."""
    flags = ["--num-layer", "3", "--learning_rate", "0.01", "--epochs", "1", "--num-samples", "1", "--batch-size",
             "6", "--dataset", "synthetic", "--model-path", "gccflags"]
    done = _run("bash scripts/pretrain.sh -1", flags, workdir)
    assert done.returncode == 0, done.stderr[-2000:]
    import torch

    state = torch.load(workdir / "gccflags/gcc_e2e_synthetic_s0/checkpoint.pt", weights_only=True)
    config = state["config"]
    assert (config["model"]["num_layers"], config["train"]["lr"], config["train"]["steps"]) == (3, 0.01, 2)
    assert "--epochs 1 (GCC): 1 x 12 samples / batch 6 = --steps 2" in done.stderr
    resumed = _run("bash scripts/pretrain.sh -1", [*flags[:-2], "--resume", "gccflags/gcc_e2e_synthetic_s0/checkpoint.pt"],
                   workdir)
    assert resumed.returncode == 0 and "already trained for 2 steps" in resumed.stderr, resumed.stderr[-2000:]
