"""Checkpoint files: atomic saves, and loads that say what is wrong with a damaged file or with one that loads but
does not fit this code (a field missing, a configuration key unknown, a weight of another shape).

A checkpoint is data, never code: it is read with ``torch.load(..., weights_only=True)``, which refuses any pickled
object but tensors and plain values *before* building it, and then every field is checked to be tensors, numbers,
strings, booleans, ``None`` and lists, tuples or dicts of those (:func:`check_plain`). An encoder file received from
anyone can therefore be loaded without running anything it carries. :func:`load_encoder_checkpoint` gives the
encoder a checkpoint holds, ready to embed (what ``generate``, the API, fine-tuning and the sweeps load), with an
:class:`UnfinishedRunWarning` when its run had not reached its steps."""
from __future__ import annotations

import hashlib
import io
import json
import numbers
import os
import pickle
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from gcc_sgcl.config import CONFIG_KEYS, Config
from gcc_sgcl.engine.device import check_torch_device
from gcc_sgcl.fileio import GCC_CHECKPOINT_NAMES, atomic_target
from gcc_sgcl.models import GraphEncoder, build_encoder

CHECKPOINT_NAME = "checkpoint.pt"
PLAIN_TYPES = (str, int, float, bool, type(None))  # with tensors, the only leaves a checkpoint of this project holds


class CheckpointError(ValueError):
    """A checkpoint file is empty, truncated or not a checkpoint of this project; the message names it."""


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: the file it was read from, its state and the sha256 of the bytes the state was read
    from (read once, so the digest is of this very state even while a run keeps saving over the file)."""

    path: Path
    state: dict[str, Any]
    sha256: str


def save_checkpoint(state: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``state`` to ``path`` atomically: a kill mid-write leaves the previous checkpoint intact, and a full
    disk is a :class:`~gcc_sgcl.fileio.WriteError` naming ``path`` (torch reports it as ``RuntimeError: [enforce
    fail at inline_container.cc...]``, raised while handling the ``OSError``, which
    :func:`~gcc_sgcl.fileio.atomic_target` finds)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(path) as tmp, open(tmp, "wb") as f:
        torch.save(state, f)


def load_checkpoint(path: str | os.PathLike, device: str | torch.device = "cpu") -> dict[str, Any]:
    """The state of :func:`read_checkpoint`."""
    return read_checkpoint(path, device).state


def read_checkpoint(path: str | os.PathLike, device: str | torch.device = "cpu") -> Checkpoint:
    """Load a checkpoint file, or a run folder's ``checkpoint.pt``; a missing, empty, truncated or foreign
    file raises an error naming it, as does one whose fields do not fit (:func:`check_fields`); a CUDA ``device``
    torch cannot use raises a :class:`~gcc_sgcl.engine.device.DeviceError`
    (:func:`~gcc_sgcl.engine.device.check_torch_device`)."""
    path, note = checkpoint_path(path)
    if note:
        print(f"[gcc_sgcl] {note}", file=sys.stderr)
    if path.stat().st_size == 0:
        raise CheckpointError(f"{path}: empty checkpoint file (an interrupted copy?)")
    check_torch_device(device)
    with open(path, "rb") as f:  # an unreadable file is reported as such, not as damage
        data = f.read()
    state = load_data(data, path, device)
    check_fields(state, path)
    return Checkpoint(path, state, hashlib.sha256(data).hexdigest())


def checkpoint_path(path: str | os.PathLike) -> tuple[Path, str]:
    """The checkpoint file ``path`` names, and a note when it was read as another name: a run folder is its
    ``checkpoint.pt``, and GCC's ``current.pth`` / ``ckpt_epoch_N.pth`` inside a run folder of this code are that
    run's ``checkpoint.pt``. A missing file is a ``FileNotFoundError`` that says what the folder holds.

    >>> import tempfile
    >>> run = Path(tempfile.mkdtemp()); (run / CHECKPOINT_NAME).write_bytes(b"x")
    1
    >>> found, note = checkpoint_path(run / "current.pth")
    >>> found.name, note.startswith("current.pth is GCC's name")
    ('checkpoint.pt', True)
    >>> checkpoint_path(run / "model.pt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FileNotFoundError: no checkpoint at .../model.pt; that folder holds checkpoint.pt: pass the folder ...
    """
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_NAME
    if path.is_file():
        return path, ""
    beside = path.parent / CHECKPOINT_NAME
    if GCC_CHECKPOINT_NAMES.fullmatch(path.name) and beside.is_file():
        return beside, (f"{path.name} is GCC's name for a run's checkpoint; this run folder keeps one, "
                        f"{CHECKPOINT_NAME}: reading {beside}")
    raise FileNotFoundError(f"no checkpoint at {path}; {_holds(path.parent)}")


def _holds(folder: Path, shown: int = 8) -> str:
    """What ``folder`` holds, for a missing checkpoint's message."""
    if not folder.is_dir():
        return f"no folder {folder} either (run `bash scripts/pretrain.sh <gpu> <method>` first)"
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())
    if CHECKPOINT_NAME in names:
        return f"that folder holds {CHECKPOINT_NAME}: pass the folder {folder} (or that file)"
    runs = [n for n in names if n.endswith("/") and (folder / n / CHECKPOINT_NAME).is_file()]
    if runs:
        return (f"that folder holds run folders ({', '.join(runs[:shown])}{', …' if len(runs) > shown else ''}): "
                "pass one of them")
    listed = ", ".join(names[:shown]) + (f", … ({len(names)} entries)" if len(names) > shown else "")
    return (f"that folder holds {listed or 'nothing'} (run `bash scripts/pretrain.sh <gpu> <method>` first, or "
            "pass a run folder)")


def load_data(data: bytes, path: str | os.PathLike, device: str | torch.device = "cpu") -> Any:
    """Unpickle the bytes ``data`` of the file ``path`` as tensors and plain values only, without running any code
    they carry: a pickle that asks for another object (a function, a class, a module) is refused before it is built,
    with a :class:`CheckpointError` naming ``path`` and what it asked for; any other failure is reported as a
    damaged file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's notes on an unusual pickle protocol: the file loads or is refused
            return torch.load(io.BytesIO(data), map_location=device, weights_only=True)
    except pickle.UnpicklingError as error:
        blocked = re.search(r"GLOBAL ([\w.]+)", str(error))
        if blocked:
            raise CheckpointError(f"{path}: refused, not a checkpoint of tensors and plain values: it asks to run "
                                  f"{blocked.group(1)} (nothing in it was run)") from None
        operand = re.search(r"Unsupported operand (\d+)", str(error))
        if operand:  # a plain pickle stream of protocol 4+, never written by torch.save
            raise CheckpointError(f"{path}: refused, not a checkpoint of tensors and plain values: its pickle uses "
                                  f"operation {operand.group(1)}, which torch.save never writes (nothing in it was "
                                  f"run)") from None
        raise CheckpointError(f"{path}: not a readable checkpoint, truncated or damaged "
                              f"({_reason(error)})") from error
    except Exception as error:  # the bytes are anyone's: an IndexError or KeyError of torch's unpickler is damage too
        raise CheckpointError(f"{path}: not a readable checkpoint, truncated or damaged "
                              f"({_reason(error)})") from error


def _reason(error: BaseException) -> str:
    """The line of ``error`` that says what went wrong (torch's weights-only preamble skipped)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Weights only load failed", "(1)", "(2)", "Check the",
                                                             "Please file an issue"))]
    return (useful or lines or [type(error).__name__])[0].removeprefix("WeightsUnpickler error: ")


def check_plain(value: Any, path: str | os.PathLike, where: str) -> None:
    """Raise a :class:`CheckpointError` naming ``path`` and the field ``where`` unless ``value`` is a tensor, a
    plain value (:data:`PLAIN_TYPES`) or a list, tuple or dict (keys plain) of those, however deep.

    >>> check_plain({"lr": [0.1], "b": b"x"}, "run/checkpoint.pt", "optimizer")
    Traceback (most recent call last):
    ...
    gcc_sgcl.engine.checkpoint.CheckpointError: run/checkpoint.pt: field optimizer['b'] is a bytes, expected tensors and plain values
    """
    stack, seen = [(value, where)], set()
    while stack:  # a loop, not recursion: a file may nest lists deeper than Python's recursion limit
        value, where = stack.pop()
        if isinstance(value, (torch.Tensor, *PLAIN_TYPES)):
            continue
        if id(value) in seen:  # a container shared many times (a pickle can nest 2**50 paths in 50 lists) once
            continue
        seen.add(id(value))
        if isinstance(value, (list, tuple)):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
        elif isinstance(value, dict):
            odd = [key for key in value if not isinstance(key, PLAIN_TYPES)]
            if odd:
                raise CheckpointError(f"{path}: field {where} has a key of type {type(odd[0]).__name__}, expected "
                                      f"plain keys")
            stack.extend((item, f"{where}[{key!r}]") for key, item in value.items())
        else:
            raise CheckpointError(f"{path}: field {where} is a {type(value).__name__}, expected tensors and plain "
                                  f"values")


def check_fields(state: Any, path: str | os.PathLike) -> None:
    """Raise a :class:`CheckpointError` naming ``path`` and the first field of ``state`` that does not fit: a dict
    with ``config`` (a dict of :data:`CONFIG_KEYS` that :meth:`~gcc_sgcl.config.Config.from_dict` accepts),
    ``model`` (a dict of tensors) and ``step`` (a count >= 0).

    >>> check_fields({"config": {"bogus": 1}, "model": {}}, "run/checkpoint.pt")
    Traceback (most recent call last):
    ...
    gcc_sgcl.engine.checkpoint.CheckpointError: run/checkpoint.pt: unknown config key 'bogus' (a checkpoint of other code?)
    """
    if not isinstance(state, dict) or not {"config", "model"} <= state.keys():
        raise CheckpointError(f"{path}: not a gcc_sgcl checkpoint (expected a dict with 'config' and 'model')")
    check_plain(state, path, "checkpoint")
    config, model = state["config"], state["model"]
    if not isinstance(config, Mapping):
        raise CheckpointError(f"{path}: 'config' is a {type(config).__name__}, expected a dict")
    unknown = [key for key in config if key not in CONFIG_KEYS]
    if unknown:
        raise CheckpointError(f"{path}: unknown config key {unknown[0]!r} (a checkpoint of other code?)")
    try:
        Config.from_dict(dict(config))
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{path}: its config does not fit this code ({error})") from None
    if not isinstance(model, Mapping):
        raise CheckpointError(f"{path}: 'model' is a {type(model).__name__}, expected a dict of tensors")
    odd = [key for key, value in model.items() if not isinstance(value, torch.Tensor)]
    if odd:
        raise CheckpointError(f"{path}: model entry {odd[0]!r} is a {type(model[odd[0]]).__name__}, not a tensor")
    step = state.get("step")
    if step is None:
        raise CheckpointError(f"{path}: no 'step' field (not saved by this project's pretrain?)")
    if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < 0:
        raise CheckpointError(f"{path}: 'step' is {step!r}, expected a step count >= 0")


def check_weights(module: torch.nn.Module, weights: Mapping[str, torch.Tensor], path: str | os.PathLike,
                  what: str = "model") -> None:
    """Raise a :class:`CheckpointError` naming ``path`` unless ``weights`` (the checkpoint's ``what`` entry) fit
    ``module``: the first tensor missing, of another shape or unknown to ``module`` is named
    (``load_state_dict`` would list every mismatch in a multi-line ``RuntimeError``, without the file)."""
    expected = module.state_dict()
    missing = [key for key in expected if key not in weights]
    if missing:
        raise CheckpointError(f"{path}: {what} has no tensor {missing[0]!r} ({len(missing)} of {len(expected)} "
                              f"missing: saved by another architecture?)")
    for key, tensor in expected.items():
        if tuple(weights[key].shape) != tuple(tensor.shape):
            raise CheckpointError(f"{path}: {what} tensor {key!r} has shape {list(weights[key].shape)}, but its "
                                  f"config builds {list(tensor.shape)}")
    unknown = [key for key in weights if key not in expected]
    if unknown:
        raise CheckpointError(f"{path}: {what} holds the tensor {unknown[0]!r}, which its config does not build")


def load_weights(module: torch.nn.Module, weights: Mapping[str, torch.Tensor], path: str | os.PathLike,
                 what: str = "model") -> None:
    """Load ``weights`` into ``module`` once :func:`check_weights` finds that they fit."""
    check_weights(module, weights, path, what)
    module.load_state_dict(weights)


def check_resumable(state: dict[str, Any], path: str | os.PathLike, model: torch.nn.Module,
                    key_model: torch.nn.Module | None = None) -> None:
    """Raise a :class:`CheckpointError` naming ``path`` unless ``state`` can resume the training of ``model`` (and,
    in MoCo mode, ``key_model``): its optimiser and scheduler (and key encoder and queue) are there and its weights
    fit (:func:`check_weights`). An exported encoder (:func:`export_encoder`) holds the weights only."""
    needed = ["optimizer", "scheduler", *(["key_model", "queue"] if key_model is not None else [])]
    missing = [key for key in needed if key not in state]
    if missing:
        raise CheckpointError(f"{path}: no {missing[0]!r} to resume from (an exported encoder? --resume needs the "
                              f"run's own checkpoint)")
    odd = [key for key in needed if not isinstance(state[key], Mapping)]
    if odd:
        raise CheckpointError(f"{path}: {odd[0]!r} is a {type(state[odd[0]]).__name__}, expected a dict")
    optimizer = state["optimizer"]
    if not isinstance(optimizer.get("state"), Mapping) or not isinstance(optimizer.get("param_groups"), list):
        raise CheckpointError(f"{path}: 'optimizer' has no 'state' dict and 'param_groups' list (not an optimiser's)")
    check_weights(model, state["model"], path)
    if key_model is not None:
        check_weights(key_model, state["key_model"], path, "key_model")
        if not all(isinstance(state["queue"].get(key), torch.Tensor) for key in ("keys", "ptr")):
            raise CheckpointError(f"{path}: 'queue' lacks the tensors 'keys' and 'ptr' of a MoCo queue")


def export_encoder(run: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Write the encoder of a finished run to ``dest/checkpoint.pt`` for shipping: its configuration, step and
    query-encoder weights only (no optimiser, key encoder or queue), loadable by ``generate`` and
    :func:`gcc_sgcl.load_encoder`; also ``dest/config.json``, the configuration in readable form."""
    state = load_checkpoint(run)
    dest = Path(dest)
    save_checkpoint({"config": state["config"], "step": state["step"], "model": state["model"]}, dest / CHECKPOINT_NAME)
    with atomic_target(dest / "config.json") as tmp:
        tmp.write_text(json.dumps({"step": state["step"], **state["config"]}, indent=2, sort_keys=True) + "\n")
    return dest


class UnfinishedRunWarning(UserWarning):
    """An encoder is loaded from a checkpoint taken before its run's last pre-training step."""


def load_encoder_checkpoint(load_path: str | Path, device: str = "cpu") -> tuple[GraphEncoder, Config, Checkpoint]:
    """The query encoder (in eval mode), configuration and checkpoint of a run folder (or checkpoint file), what
    :func:`gcc_sgcl.load_encoder` wraps for users; warns (:class:`~gcc_sgcl.engine.checkpoint.UnfinishedRunWarning`)
    when the checkpoint is of a run whose pre-training has not reached its steps. A checkpoint that loads but does not
    fit (a field missing, weights of another architecture or shape) is a
    :class:`~gcc_sgcl.engine.checkpoint.CheckpointError` naming the file and the first mismatch."""
    checkpoint = read_checkpoint(load_path, device)
    state = checkpoint.state
    cfg = Config.from_dict(state["config"])
    step = state["step"]
    if step < cfg.train.steps:
        warnings.warn(f"{load_path}: the encoder is at step {step} of {cfg.train.steps}, its pre-training is "
                      "unfinished (a run still training, or stopped: its pretrain command with --resume finishes it)",
                      UnfinishedRunWarning, stacklevel=3)
    check_architecture(cfg, state["model"], checkpoint.path)
    try:
        model = build_encoder(cfg).to(device)
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{checkpoint.path}: its config builds no encoder ({error})") from None
    load_weights(model, state["model"], checkpoint.path)
    model.eval()
    return model, cfg, checkpoint


def check_architecture(cfg: Config, weights: Mapping[str, torch.Tensor], path: str | os.PathLike) -> None:
    """Before anything is allocated: the encoder ``cfg`` describes has the layers and the shapes of the ``weights``
    the checkpoint carries, else a :class:`CheckpointError` naming ``path`` and the first mismatch. The layer count
    is read from the weights first (a config may claim ten million layers), then the encoder is built on torch's
    ``meta`` device, which holds shapes and no memory (a config may claim a hidden size of 1e9), and compared.

    >>> from gcc_sgcl.config import Config
    >>> cfg = Config()
    >>> weights = build_encoder(cfg).state_dict()
    >>> check_architecture(cfg, weights, "run/checkpoint.pt")
    >>> big = Config.from_dict({**cfg.to_dict(), "model": {**cfg.to_dict()["model"], "hidden_size": 10**9}})
    >>> check_architecture(big, weights, "run/checkpoint.pt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    gcc_sgcl.engine.checkpoint.CheckpointError: run/checkpoint.pt: model tensor ... has shape [...], but its config builds [...]
    """
    layers = {int(m.group(1)) for key in weights if (m := re.search(r"(?:^|\.)convs\.(\d+)\.", key))}
    stated = cfg.model.num_layers - 1  # GIN layers after the input layer
    if stated != len(layers):
        raise CheckpointError(f"{path}: its config says num_layers {cfg.model.num_layers}, but its weights hold "
                              f"{len(layers)} GIN layers (num_layers {len(layers) + 1})")
    try:
        with torch.device("meta"):
            shapes = build_encoder(cfg)
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{path}: its config builds no encoder ({error})") from None
    check_weights(shapes, weights, path)
    check_weight_values(shapes, weights, path)


class WeightValueError(CheckpointError):
    """A checkpoint's weights fit the encoder's shapes but are not finite real numbers (:func:`check_weight_values`)."""


def check_weight_values(module: torch.nn.Module, weights: Mapping[str, torch.Tensor],
                        path: str | os.PathLike) -> None:
    """A :class:`CheckpointError` naming ``path`` and the first tensor of ``weights`` that ``module`` could not take
    as it is: a complex tensor (loading would drop its imaginary part), an integer one where ``module`` holds real
    numbers or the reverse, or real weights holding NaN or inf (a diverged run, whose every row would be NaN). The
    API and ``generate`` refuse alike, before anything is embedded."""
    for key, expected in module.state_dict().items():
        tensor = weights[key]
        if tensor.is_complex() or tensor.is_floating_point() != expected.is_floating_point():
            raise WeightValueError(f"{path}: model tensor {key!r} holds {str(tensor.dtype).removeprefix('torch.')} "
                                  f"values, the encoder's are {str(expected.dtype).removeprefix('torch.')}")
        bad = int(tensor.numel() - torch.isfinite(tensor).sum()) if tensor.is_floating_point() else 0
        if bad:
            raise WeightValueError(f"{path}: {bad} non-finite weights (NaN/inf) in {key!r}: its training diverged")
