"""A checkpoint is data, never code: a file whose pickle would run something is refused by every command that reads
checkpoints, in one line naming it, before anything in it runs; what a checkpoint holds is checked field by field
(tensors and plain values only), and the encoders shipped and trained by this code pass that check."""
import builtins
import os
import pickle
import subprocess
from pathlib import Path

import networkx as nx
import pytest
import torch

import gcc_sgcl
from gcc_sgcl.cli import DEBUG_ENV
from gcc_sgcl.engine import generate as generate_module
from gcc_sgcl.engine import pretrain as pretrain_module
from gcc_sgcl.engine.checkpoint import CheckpointError, check_plain, load_checkpoint, read_checkpoint
from gcc_sgcl.presets import make_config
from gcc_sgcl.tasks import finetune as finetune_module

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "saved" / "pretrained").glob("*/checkpoint.pt"))
REFUSED = "refused, not a checkpoint of tensors and plain values"


class _WritesMarker:
    """Unpickled, calls ``builtins.open(marker, "w")``: the file appearing means the checkpoint ran code."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return builtins.open, (str(self.marker), "w")


class _RunsShell:
    """Unpickled, runs ``touch marker`` through ``os.system``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _state(payload) -> dict:
    """A checkpoint that looks like this project's (real config, step) with ``payload`` in a field of its own."""
    return {"config": make_config("gcc").to_dict(), "step": 1, "model": {"w": torch.zeros(2)}, "extra": payload}


def _payload_run(folder: Path, kind: str) -> Path:
    """A run folder whose ``checkpoint.pt`` carries a payload that would create ``folder/../MARKER``: a torch zip
    file (the payload in a field or in the config) or a plain pickle stream (torch's legacy format, or protocol 5)."""
    marker = folder.parent / "MARKER"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "checkpoint.pt"
    if kind == "field":
        torch.save(_state(_WritesMarker(marker)), path)
    elif kind == "config":
        state = _state(None)
        state["config"]["method"] = _RunsShell(marker)
        torch.save(state, path)
    else:
        protocol = 5 if kind == "pickle protocol 5" else 2
        path.write_bytes(pickle.dumps(_state(_WritesMarker(marker)), protocol=protocol))
    return folder


@pytest.fixture(params=["field", "config", "legacy pickle", "pickle protocol 5"])
def payload_run(tmp_path, request) -> Path:
    return _payload_run(tmp_path / "run", request.param)


def _refused_in_one_line(call, path: Path) -> None:
    """``call`` ends the command with one line naming ``path`` as refused, and nothing in the file ran."""
    with pytest.raises(SystemExit) as info:
        call()
    message = str(info.value.code)
    assert message.startswith(f"error: {path}: {REFUSED}") and "\n" not in message, message
    assert not (path.parent.parent / "MARKER").exists()


@pytest.fixture(autouse=True)
def _one_line_errors(monkeypatch):
    monkeypatch.delenv(DEBUG_ENV, raising=False)


def test_generate_refuses_a_code_carrying_checkpoint_given_by_folder_or_file(payload_run):
    ckpt = payload_run / "checkpoint.pt"
    for load_path in (payload_run, ckpt):
        _refused_in_one_line(lambda: generate_module.main(["--load-path", str(load_path), "--dataset",
                                                           "synthetic-roles"]), ckpt)


def test_load_encoder_refuses_a_code_carrying_checkpoint(payload_run):
    with pytest.raises(CheckpointError, match=REFUSED):
        gcc_sgcl.load_encoder(payload_run)
    assert not (payload_run.parent / "MARKER").exists()


def test_resume_refuses_a_code_carrying_checkpoint(payload_run):
    argv = ["--corpus", "synthetic", "--steps", "2", "--batch-size", "8", "--output-dir", str(payload_run.parent),
            "--run-name", payload_run.name, "--resume"]
    _refused_in_one_line(lambda: pretrain_module.main(argv), payload_run / "checkpoint.pt")


def test_finetune_refuses_a_code_carrying_checkpoint(payload_run):
    argv = ["--load-path", str(payload_run), "--dataset", "synthetic-roles", "--epochs", "1"]
    _refused_in_one_line(lambda: finetune_module.main(argv), payload_run / "checkpoint.pt")


def test_generate_sh_refuses_a_code_carrying_checkpoint_in_one_line(tmp_path):
    run = _payload_run(tmp_path / "run", "field")
    done = subprocess.run(["bash", str(ROOT / "scripts" / "generate.sh"), "-1", str(run), "synthetic-roles"],
                          capture_output=True, text=True, env={k: v for k, v in os.environ.items() if k != DEBUG_ENV})
    errors = [line for line in done.stderr.splitlines() if not line.startswith("[gcc_sgcl] ")]  # the script's notes
    assert done.returncode == 1
    assert errors == [f"error: {run / 'checkpoint.pt'}: {REFUSED}: it asks to run {builtins.open.__module__}.open "
                      f"(nothing in it was run)"]
    assert not (tmp_path / "MARKER").exists()


def test_bitcheck_sh_refuses_a_code_carrying_checkpoint_in_its_folder(tmp_path):
    stub = tmp_path / "tree" / "gcc_sgcl" / "engine"  # a source tree whose pre-training fails at once: only the
    stub.mkdir(parents=True)  # hashing of the checkpoints already in <out dir> runs
    for folder in (stub.parent, stub):
        (folder / "__init__.py").write_text("")
    (stub / "pretrain.py").write_text("raise SystemExit(1)\n")
    out = tmp_path / "out"
    _payload_run(out / "run", "field")
    done = subprocess.run(["bash", str(ROOT / "scripts" / "bitcheck.sh"), str(tmp_path / "tree"), str(out)],
                          capture_output=True, text=True)
    assert f"FAIL {out / 'run' / 'checkpoint.pt'}: not a checkpoint of tensors and plain values" in done.stdout
    assert not (out / "MARKER").exists()


@pytest.mark.parametrize("value, field", [
    ({1, 2}, "checkpoint['extra']"),
    (b"bytes", "checkpoint['extra']"),
    ([1j], "checkpoint['extra'][0]"),
    ({"lr": torch.float32}, "checkpoint['extra']['lr']"),
    ({torch.device("cpu"): 1}, "checkpoint['extra']"),
])
def test_a_value_that_is_not_a_tensor_or_plain_is_refused_naming_its_field(tmp_path, value, field):
    path = tmp_path / "checkpoint.pt"
    torch.save(_state(value), path)  # all of these unpickle with weights_only=True
    with pytest.raises(CheckpointError, match=f"{path}: field {field}".replace("[", "\\[")):
        load_checkpoint(path)


@pytest.mark.parametrize("data", [b"hello world\n", pickle.dumps({"a": 1}, protocol=2)[:-3], b"\x80\x02}q\x00."],
                         ids=["text", "truncated pickle", "empty dict pickle"])
def test_a_file_that_is_not_a_checkpoint_is_one_error_naming_it(tmp_path, data):
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(data)
    with pytest.raises(CheckpointError, match=f"^{path}: not a "):
        load_checkpoint(path)


def test_a_deeply_nested_field_is_checked_without_recursion():
    nested: list = [b"odd"]
    for _ in range(100_000):  # deeper than any recursion limit; a pickle stream can nest this deep
        nested = [nested]
    with pytest.raises(CheckpointError, match="is a bytes"):
        check_plain(nested, "run/checkpoint.pt", "checkpoint['extra']")


@pytest.mark.parametrize("path", SHIPPED, ids=[p.parent.name for p in SHIPPED])
def test_every_shipped_encoder_reads_as_tensors_and_plain_values(path):
    assert read_checkpoint(path).state["model"]


def test_a_full_moco_training_checkpoint_reads_as_tensors_and_plain_values_and_is_resumable(tmp_path):
    cfg = make_config("gcc", {"model": {"hidden_size": 16, "num_layers": 2}, "train": {
        "mode": "moco", "nce_k": 16, "steps": 2, "batch_size": 8, "output_dir": str(tmp_path), "run_name": "m"}})
    graphs = [gcc_sgcl.as_dgl_graph(nx.barabasi_albert_graph(100, 3, seed=0))]
    run = pretrain_module.pretrain(cfg, progress=False, graphs=graphs)
    state = load_checkpoint(run)
    assert {"optimizer", "scheduler", "queue", "key_model"} <= state.keys() and state["step"] == 2
    pretrain_module.pretrain(cfg, resume=True, progress=False, graphs=graphs)  # optimiser, scheduler, queue restored


def test_no_file_of_the_repository_unpickles_with_weights_only_false():
    needles = ("weights_only=" + "False", "allow_pickle=" + "True", "pickle." + "load(", "joblib." + "load(",
               "dill." + "load", "torch.load(")
    found = []
    for path in [*ROOT.glob("gcc_sgcl/**/*.py"), *ROOT.glob("scripts/**/*.sh"), *ROOT.glob("tests/*.py")]:
        text = path.read_text()
        found += [f"{path.relative_to(ROOT)}: {n}" for n in needles if n in text and not
                  (n == "torch.load(" and text.count(n) == text.count("weights_only=True"))]
    assert found == [], found


def test_a_container_shared_many_times_is_checked_once_not_once_per_path():
    shared = [torch.zeros(1)]
    for _ in range(60):  # 2**60 paths through 60 lists
        shared = [shared, shared]
    check_plain({"model": shared}, "run/checkpoint.pt", "checkpoint")  # returns at once


@pytest.mark.parametrize("field, value, named", [("hidden_size", 10**9, "has shape"),
                                                 ("num_layers", 10**7, "num_layers 10000000")])
def test_a_config_claiming_a_huge_encoder_is_refused_before_anything_is_allocated(tmp_path, field, value, named):
    from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint, save_checkpoint

    cfg = make_config("gcc", {})
    model = gcc_sgcl.models.build_encoder(cfg)
    config = cfg.to_dict()
    config["model"] = {**config["model"], field: value}
    save_checkpoint({"config": config, "model": model.state_dict(), "step": cfg.train.steps}, tmp_path / "checkpoint.pt")
    with pytest.raises(CheckpointError, match=named) as refused:
        load_encoder_checkpoint(tmp_path)
    assert str(tmp_path / "checkpoint.pt") in str(refused.value)


@pytest.mark.parametrize("payload", ["forged-header", "object-array", "truncated"])
def test_an_embeddings_file_is_checked_against_its_size_before_anything_is_allocated(tmp_path, payload):
    import numpy as np

    from gcc_sgcl.tasks.embeddings import load_embeddings

    path = tmp_path / "g.npy"
    np.save(path, np.zeros((4, 16), np.float32))
    data = path.read_bytes()
    if payload == "forged-header":  # asks for 4e12 rows: about 233 TiB
        path.write_bytes(data.replace(b"'shape': (4, 16)", b"'shape': (4000000000000, 16)"))
    elif payload == "object-array":
        np.save(path, np.array([{"a": 1}], dtype=object))  # np.save writes object arrays by default
    else:
        path.write_bytes(data[:-10])
    with pytest.raises(ValueError) as refused:
        load_embeddings(tmp_path, "g", 16)
    message = str(refused.value)
    assert str(path) in message and "generate it again" in message and "\n" not in message
    assert {"forged-header": "4000000000000", "object-array": "Python objects", "truncated": "truncated"}[payload] \
        in message
