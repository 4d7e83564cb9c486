"""Checkpoint files: atomic saves, and loads that say what is wrong with a damaged file."""
from __future__ import annotations

import json
import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch

from gcc_sgcl.engine.device import check_torch_device
from gcc_sgcl.fileio import atomic_target

CHECKPOINT_NAME = "checkpoint.pt"


class CheckpointError(ValueError):
    """A checkpoint file is empty, truncated or not a checkpoint of this project; the message names it."""


def save_checkpoint(state: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``state`` to ``path`` atomically: a kill mid-write leaves the previous checkpoint intact."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(path) as tmp, open(tmp, "wb") as f:
        torch.save(state, f)


def load_checkpoint(path: str | os.PathLike, device: str | torch.device = "cpu") -> dict[str, Any]:
    """Load a checkpoint file, or a run folder's ``checkpoint.pt``; a missing, empty, truncated or foreign
    file raises an error naming it, a CUDA ``device`` torch cannot use a
    :class:`~gcc_sgcl.engine.device.DeviceError` (:func:`~gcc_sgcl.engine.device.check_torch_device`)."""
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_NAME
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path} (run `bash scripts/pretrain.sh <gpu> <method>` first)")
    if path.stat().st_size == 0:
        raise CheckpointError(f"{path}: empty checkpoint file (an interrupted copy?)")
    check_torch_device(device)
    with open(path, "rb") as f:  # an unreadable file is reported as such, not as damage
        try:
            state = torch.load(f, map_location=device, weights_only=False)
        except (RuntimeError, OSError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile) as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise CheckpointError(f"{path}: not a readable checkpoint, truncated or damaged ({reason})") from error
    if not isinstance(state, dict) or not {"config", "model"} <= state.keys():
        raise CheckpointError(f"{path}: not a gcc_sgcl checkpoint (expected a dict with 'config' and 'model')")
    return state


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
