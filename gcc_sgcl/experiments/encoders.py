"""The encoders of a sweep: found, carried in, pre-trained, shipped and stashed.

A finished pre-training run is reused and an unfinished one resumes from its checkpoint; a ``--reuse`` folder (a
shipped encoder, or a state carried from another machine by :func:`stash`) further along than the run folder's
own state is copied in first (:func:`reuse_exported`). With ``ship``, every encoder a sweep trains or reuses is
exported to :meth:`~gcc_sgcl.experiments.sweep.Sweep.ship_folder` (:func:`ship`).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

from gcc_sgcl.config import Config
from gcc_sgcl.engine.checkpoint import CHECKPOINT_NAME, load_checkpoint
from gcc_sgcl.engine.run_summary import StepNote
from gcc_sgcl.experiments.rows import CLASSICAL_MODE
from gcc_sgcl.experiments.sweep import Job, Sweep, is_classical
from gcc_sgcl.fileio import copy_atomic
from gcc_sgcl.method import MethodSpec


def same_training(a: Config, b: Config) -> bool:
    """Whether two configurations train the same encoder (:meth:`~gcc_sgcl.config.Config.learning_settings`)."""
    return a.learning_settings() == b.learning_settings()


def run_folder(cfg: Config) -> Path:
    """The folder of ``cfg``'s pre-training run."""
    return Path(cfg.train.output_dir) / cfg.run_dir_name()


def furthest_state(cfg: Config, folders: Sequence[str | Path]) -> tuple[Path, int] | None:
    """Among ``folders`` (each holding a ``checkpoint.pt``), the one furthest along ``cfg``'s training, with its
    step: an encoder that finished that training (exported weights suffice), or a whole training state (optimiser
    included) stopped before its end, which a run resumes from; None if no folder holds either. A folder without
    a readable checkpoint is an error naming it."""
    best = None
    for folder in folders:
        state = load_checkpoint(Path(folder) / CHECKPOINT_NAME)
        step = int(state["step"])
        usable = step == cfg.train.steps or (step < cfg.train.steps and "optimizer" in state)
        if usable and same_training(Config.from_dict(state["config"]), cfg) and (best is None or step > best[1]):
            best = (Path(folder), step)
    return best


def _beyond_own(cfg: Config, found: tuple[Path, int] | None) -> tuple[Path, int] | None:
    """``found`` (a :func:`furthest_state` of ``cfg``) if it is further along than the state in ``cfg``'s run
    folder and that folder holds no checkpoint of another training; else None."""
    if found is None or not (run_folder(cfg) / CHECKPOINT_NAME).exists():
        return found
    own = furthest_state(cfg, [run_folder(cfg)])
    return None if own is None or own[1] >= found[1] else found


def carried_state(cfg: Config, exported: Sequence[str | Path]) -> tuple[Path, int] | None:
    """The state of ``exported`` (:func:`furthest_state`: a shipped encoder, or one carried from another machine by
    :func:`stash`) that :func:`reuse_exported` copies into ``cfg``'s run folder, with its step: one further along
    than the folder's own state of that training; never over a checkpoint of another training, which stays for
    :func:`ensure_pretrained` to refuse. None if there is nothing to copy."""
    return _beyond_own(cfg, furthest_state(cfg, exported))


def reuse_exported(cfg: Config, exported: Sequence[str | Path]) -> Path | None:
    """Copy :func:`carried_state` into ``cfg``'s run folder, under the folder's lock (a run training there is
    never overwritten); the folder it came from, or None."""
    from gcc_sgcl.engine.run_lock import run_folder_lock

    found = furthest_state(cfg, exported)
    if _beyond_own(cfg, found) is None:
        return None
    with run_folder_lock(run_folder(cfg)):
        if _beyond_own(cfg, found) is None:  # the folder may have moved on before the lock was taken
            return None
        copy_atomic(found[0] / CHECKPOINT_NAME, run_folder(cfg) / CHECKPOINT_NAME)
    return found[0]


def ensure_pretrained(cfg: Config, exported: Sequence[str | Path] = (),
                      on_step: Callable[[int], None] | None = None) -> float | None:
    """Pre-train ``cfg`` unless its run already finished or one of the ``exported`` encoders is that run; a carried
    state further along than the run folder's is copied in first and resumed (:func:`reuse_exported`). Returns its
    pre-training seconds: every segment's, when a resumed run's checkpoint counts them (``train_seconds``), else
    this call's (None if reused or finished before). ``on_step``: as :func:`~gcc_sgcl.engine.pretrain.pretrain`'s."""
    from gcc_sgcl.engine.pretrain import pretrain

    ckpt = run_folder(cfg) / CHECKPOINT_NAME
    reuse_exported(cfg, exported)
    if ckpt.exists():
        state = load_checkpoint(ckpt)
        saved = Config.from_dict(state["config"])
        if (saved.method, saved.sampling, saved.model, saved.augment) != (cfg.method, cfg.sampling, cfg.model,
                                                                         cfg.augment):
            raise ValueError(f"{ckpt} was trained with another method, sampling, model or augmentation "
                             f"configuration than the sweep asks for; move it away or use another --output-dir")
        if state["step"] >= cfg.train.steps:
            return None
    start = time.time()
    pretrain(cfg, resume=ckpt.exists(), progress=False, on_step=on_step)
    total = load_checkpoint(ckpt).get("train_seconds")
    return time.time() - start if total is None else total


def sweep_note(bar, label: str, cfg: Config) -> StepNote:
    """Where ``cfg``'s pre-training stands, written after ``label`` into the postfix of a sweep's tqdm ``bar`` (a
    long schedule otherwise shows nothing for hours)."""
    return StepNote(cfg.train.steps, lambda text: bar.set_postfix_str(f"{label} pre-training, {text}"))


def ship(sweep: Sweep, cfg: Config) -> Path | None:
    """Export ``cfg``'s finished encoder to :meth:`Sweep.ship_folder` unless that folder holds it already (same
    training, same step); the folder, or None without ``ship``. An exported folder of another training is
    replaced: the name says which training it holds, so it was written by an older sweep of that name."""
    from gcc_sgcl.engine.checkpoint import export_encoder

    dest = sweep.ship_folder(cfg)
    if dest is None:
        return None
    return dest if is_shipped(sweep, cfg) else export_encoder(run_folder(cfg), dest)


def is_shipped(sweep: Sweep, cfg: Config) -> bool:
    """Whether :meth:`Sweep.ship_folder` holds ``cfg``'s finished encoder (same training, its last step)."""
    dest = sweep.ship_folder(cfg)
    if dest is None or not (dest / CHECKPOINT_NAME).is_file():
        return False
    state = load_checkpoint(dest / CHECKPOINT_NAME)
    return int(state["step"]) == cfg.train.steps and same_training(Config.from_dict(state["config"]), cfg)


def stash(sweep: Sweep, jobs: Iterable[Job], dest: str | Path) -> list[Path]:
    """Write the encoder state of each pre-trained job of ``jobs`` that has one (in its run folder or among the
    sweep's ``reuse`` folders, whichever is further along) to ``dest/<steps>x<batch>/<run folder name>``: a
    finished encoder as exported weights (:func:`~gcc_sgcl.engine.checkpoint.export_encoder`), an unfinished one
    as its whole training state. Passed to ``--reuse`` on another machine, each is used or resumed there, so a
    sweep's progress outlives a machine that does not keep ``saved/``. An encoder the sweep's ship folder holds
    finished (:func:`is_shipped`) is not written: that folder is committed and reused there as it is. Returns the
    folders written."""
    from gcc_sgcl.engine.checkpoint import export_encoder

    written = []
    for method, mode, seed in jobs:
        cfg = None if mode == CLASSICAL_MODE else sweep.encoder_config(method, mode, seed)
        if cfg is None or cfg.train.steps == 0 or is_shipped(sweep, cfg):
            continue
        own = [run_folder(cfg)] if (run_folder(cfg) / CHECKPOINT_NAME).exists() else []
        found = furthest_state(cfg, [*own, *sweep.carried()])
        if found is None:
            continue
        target = Path(dest) / Path(cfg.train.output_dir).name / cfg.run_dir_name()
        if found[1] == cfg.train.steps:
            export_encoder(found[0], target)
        else:
            target.mkdir(parents=True, exist_ok=True)
            copy_atomic(found[0] / CHECKPOINT_NAME, target / CHECKPOINT_NAME)
        written.append(target)
    return written


def export_run(sweep: Sweep, method: str, mode: str, seed: int, dest: str | Path | None = None) -> Path:
    """The sweep's encoder of (method, mode, seed), pre-trained unless finished or exported already
    (:func:`ensure_pretrained`), written to ``dest`` (default: :meth:`Sweep.ship_folder`) for shipping
    (:func:`~gcc_sgcl.engine.checkpoint.export_encoder`: configuration, step and weights)."""
    from gcc_sgcl.engine.checkpoint import export_encoder

    if is_classical(method):
        raise ValueError(f"{method!r} is training-free: there is no encoder to export")
    cfg = sweep.encoder_config(str(MethodSpec.parse(method)), mode, seed)
    dest = dest if dest is not None else sweep.ship_folder(cfg)
    if dest is None:
        raise ValueError("export: give --to or --ship (where to write the encoder)")
    ensure_pretrained(cfg, sweep.carried())
    return export_encoder(run_folder(cfg), dest)

