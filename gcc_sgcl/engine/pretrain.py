"""Contrastive pre-training (E2E or MoCo), with TensorBoard logging and exact resume.

``python -m gcc_sgcl.engine.pretrain --method gcc --steps 100 …`` (see ``--help``); wrapped by
``scripts/pretrain.sh <gpu> <method> [flags]``. Under ``torchrun`` (``NPROC=N bash scripts/pretrain.sh …``)
every process trains its share of each global batch (:mod:`gcc_sgcl.engine.distributed`).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import dgl
import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from gcc_sgcl.augment import PairPipeline, build_pair_pipeline, cached_global_embedding
from gcc_sgcl.cli import check_writable_dir, exit_after_stop, stop_exit, user_errors
from gcc_sgcl.config import Config
from gcc_sgcl.data.graphs import graphs_digest
from gcc_sgcl.data.paths import resolve_cache_dir
from gcc_sgcl.data.load import check_dataset_names
from gcc_sgcl.contrastive.builder import ContrastiveStep
from gcc_sgcl.contrastive.hooks import step_hook
from gcc_sgcl.engine.checkpoint import CHECKPOINT_NAME, check_resumable, load_checkpoint, save_checkpoint
from gcc_sgcl.engine.device import resolve_device_quietly
from gcc_sgcl.engine.distributed import (
    DistContext,
    GlobalBatchNorm,
    all_gather_rows,
    barrier,
    cleanup_distributed,
    init_distributed,
    launched_by_torchrun,
    mean_over_ranks,
    rank_batches,
    wrap_ddp,
)
from gcc_sgcl.engine.interrupt import StopRequest, stop_at_once_on_signals, stop_on_signals
from gcc_sgcl.engine.run_lock import run_folder_lock
from gcc_sgcl.engine.run_summary import PaceEstimate, pace_lines, run_summary
from gcc_sgcl.engine.threads import ThreadPlan, available_cores
from gcc_sgcl.fileio import atomic_target, refuse_link, remove_stale_temporaries
from gcc_sgcl.gcc_compat import HELP as GCC_HELP, translate_pretrain
from gcc_sgcl.models import build_encoder
from gcc_sgcl.presets import PretrainParser, config_from_args, current_name
from gcc_sgcl.sampling.dataset import PretrainPairDataset, collate_pairs, loader_batches, worker_init
from gcc_sgcl.settings import Settings, from_args, setting

def training_plan(cfg: Config, dist: DistContext | None = None, cores: int | None = None) -> ThreadPlan:
    """Torch threads of the model step and DataLoader workers of this process, from the cores it may use
    (:func:`~gcc_sgcl.engine.threads.available_cores`, shared among the processes of this node: ``LOCAL_WORLD_SIZE``
    under torchrun). The model gets ``--threads``, or when it is 0 half of the cores (measured on 2 cores, batch 256:
    1 model thread + 2 workers 0.30 s/step, 2 + 2 0.50 s/step); the workers are ``--num-workers``, or by default the
    cores the model leaves (at least 1 where there are 2 cores: on 0 the views are built between steps).

    The model's threads never follow ``--num-workers`` (batches built in this process run under
    :func:`~gcc_sgcl.sampling.dataset.sampling_threads`), since float reductions depend on the thread count; the
    workers change no bit of the result.

    >>> import dataclasses
    >>> from gcc_sgcl.config import Config
    >>> cfg = Config()
    >>> training_plan(cfg, cores=2), training_plan(cfg, cores=16).builders, training_plan(cfg, cores=1).builders
    (ThreadPlan(model=1, builders=1, cores=2, chosen='auto'), 8, 0)
    >>> given = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, num_workers=0, threads=2))
    >>> training_plan(given, cores=2).describe()
    'threads: model 2 + 0 view builders = 2 of 2 cores (given)'
    """
    t = cfg.train
    local = 1 if dist is None else int(os.environ.get("LOCAL_WORLD_SIZE", dist.world_size))
    cores = max(1, (available_cores() if cores is None else cores) // local)
    model = t.threads or max(1, cores // 2)
    workers = t.num_workers if t.num_workers is not None else max(0, cores - model)
    return ThreadPlan(model, workers, cores, "given" if t.threads or t.num_workers is not None else "auto")


def build_pipeline(
    cfg: Config, graphs: list[dgl.DGLGraph], progress: bool = True
) -> tuple[PairPipeline, list[np.ndarray] | None]:
    """Pair pipeline and per-graph global embeddings E_t for ``cfg`` (None when its pipeline needs none: GCC's
    plain pairs are a pipeline without filter or steps).

    E_t has ``positional_embedding_size`` columns (alignment needs equal dimensions); it is a deterministic
    function of the graph (fixed solver seed 0) cached under ``<cache dir>/global_embeddings``.
    """
    pipeline = build_pair_pipeline(cfg.augment)
    if not pipeline.needs_global:
        return pipeline, None
    cache_dir = resolve_cache_dir() / "global_embeddings"
    a = cfg.augment
    embeddings = [
        cached_global_embedding(g, cfg.sampling.positional_embedding_size, 0, cache_dir, a.global_method,
                                window=a.global_window)
        for g in tqdm(graphs, desc="global embeddings E_t", disable=not progress, unit="graph")
    ]
    return pipeline, embeddings


class Trainer(ContrastiveStep):
    """The contrastive method of :mod:`gcc_sgcl.contrastive.builder` set up for one run: the encoder built from
    ``cfg`` under its seed, the family's step hook, and the run's bookkeeping (wall time, corpus digest) in its state.

    With ``dist`` this process trains its slice of each global batch on ``dist.device``: batch norm uses
    global-batch statistics, gradients are averaged by DistributedDataParallel and the keys are gathered,
    so the update is the single-process update of the global batch.
    """

    def __init__(self, cfg: Config, dist: DistContext | None = None) -> None:
        t = cfg.train
        device = torch.device(t.device) if dist is None else dist.device
        hook = step_hook(cfg)  # the family's part of the step beyond its views (CuCo's negatives, BYOV's generators)
        if hook is not None and hook.single_process and dist is not None:
            raise ValueError(f"{cfg.family} trains its view generators on the whole batch in one process: run it "
                             f"without torchrun")
        torch.manual_seed(t.seed)
        model = build_encoder(cfg).to(device)
        if dist is not None:
            model = GlobalBatchNorm.convert(model)
        self.dist = dist
        # the forward passes call the encoder itself, or its wrapper that averages gradients over ranks
        super().__init__(model, cfg, hook, net=None if dist is None else wrap_ddp(model, dist),
                         gather=self._global_rows, mean=self._mean_over_ranks, device=device,
                         rank=0 if dist is None else dist.rank)
        self.train_seconds: float | None = 0.0  # wall time of every segment so far; None: a checkpoint without it
        self.corpus_sha256: str | None = None  # graphs_digest of the graphs trained on (None: not loaded yet)

    def _global_rows(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        """``x`` of every rank concatenated (``x`` itself in a single process) and where the local rows start."""
        if self.dist is None:
            return x, 0
        return all_gather_rows(x), self.dist.rank * x.shape[0]

    def _mean_over_ranks(self, stats: dict[str, float]) -> dict[str, float]:
        """Global-batch means of the batch statistics (every rank holds an equal share)."""
        if self.dist is not None:
            names = ("loss", "prob", "nodes_q", "nodes_k")
            means = mean_over_ranks(torch.tensor([stats[n] for n in names], dtype=torch.float64, device=self.device))
            stats.update(zip(names, means.tolist()))
        return stats

    def state_dict(self) -> dict:
        """Everything needed to continue exactly (the per-step RNG is derived from seed and step)."""
        method = super().state_dict()
        hooked = {"step_hook": method.pop("step_hook")} if "step_hook" in method else {}
        return {"config": self.cfg.to_dict(), **method, "train_seconds": self.train_seconds,
                "corpus_sha256": self.corpus_sha256, **hooked}

    def load_state_dict(self, state: dict) -> None:
        """Restore from :meth:`state_dict`."""
        super().load_state_dict(state)
        self.train_seconds = state.get("train_seconds")
        self.corpus_sha256 = state.get("corpus_sha256")


def _check_resume_config(saved: dict, cfg: Config, path: Path, corpus_by_digest: bool = False) -> None:
    # fields added to the config after the checkpoint was written take their defaults; where and at what pace
    # the run goes (RUN_PLACE_FIELDS: data root, workers, threads, device, save/log frequency) may change; with
    # corpus_by_digest the corpus is compared by its graphs' digest once loaded, not by how it is named
    before = Config.from_dict(saved)
    old, new = before.learning_settings(), cfg.learning_settings()
    groups = ("sampling", "model", "train") + (("augment",) if before.family == cfg.family else ())
    diffs = [
        f"{group}.{key}: checkpoint {old[group][key]!r} vs now {value!r}"
        for group in groups
        for key, value in new[group].items()
        if old[group][key] != value and not (corpus_by_digest and (group, key) == ("train", "corpus"))
    ]
    old["method"] = current_name(old["method"], old["augment"])  # a plain `sgcl` of before is sgcl[c=0.3]
    diffs = [f"{key}: checkpoint {old[key]!r} vs now {new[key]!r}" for key in ("method", "family")
             if old[key] != new[key]] + diffs
    if diffs:
        raise ValueError(f"--resume with a configuration that differs from {path}:\n  " + "\n  ".join(diffs))
    rounding = [f"--{key.replace('_', '-')} {getattr(before.train, key)!r} -> {getattr(cfg.train, key)!r}"
                for key in ("threads", "flush_denormal", "device")
                if getattr(before.train, key) != getattr(cfg.train, key)]
    if rounding:
        print(f"{path}: resuming with {', '.join(rounding)}: float rounding may differ from an uninterrupted run "
              f"(the checkpoint records the new setting)", file=sys.stderr)


def pretrain(
    cfg: Config,
    resume: bool = False,
    progress: bool = True,
    graphs: list[dgl.DGLGraph] | None = None,
    dist: DistContext | None = None,
    device_note: str = "",
    on_step: Callable[[int], None] | None = None,
) -> Path:
    """Train ``cfg``; returns the run folder holding ``checkpoint.pt`` and the TensorBoard logs.

    The corpus is ``cfg.train.corpus`` loaded from the data root unless ``graphs`` are given. With ``dist``
    (:func:`~gcc_sgcl.engine.distributed.init_distributed`) this process trains its ``1/world_size`` of every
    global batch of ``--batch-size``; every rank resumes from the checkpoint, only rank 0 writes. The writing
    process holds the run folder's lock (:func:`~gcc_sgcl.engine.run_lock.run_folder_lock`) throughout and
    first removes what killed saves left behind. Names and folders are checked before any data is loaded.

    With ``progress`` the run first prints what it will do (:func:`~gcc_sgcl.engine.run_summary.run_summary`; also
    in TensorBoard's text and ``config.json``), then its pace after the first measured steps. It checkpoints every
    ``save_freq`` steps and every ``save_minutes`` of wall time; SIGINT / SIGTERM stop it after the step in progress
    with a checkpoint and raise :class:`Interrupted`. ``device_note`` says why the device differs from the one
    asked for (a GPU without CUDA). ``on_step`` is called with the step after each step on the writing process
    (e.g. a :class:`~gcc_sgcl.engine.run_summary.StepNote` of a run shown in a sweep's bar).
    """
    cfg.check()
    if graphs is None:
        check_dataset_names(cfg.train.corpus, ("pretrain",), "--corpus")
    main = dist is None or dist.is_main
    run_dir = Path(cfg.train.output_dir) / cfg.run_dir_name()
    if main:
        check_writable_dir(run_dir, "--output-dir", create=True)
    with run_folder_lock(run_dir) if main else contextlib.nullcontext():
        if main:
            for name in (CHECKPOINT_NAME, RUN_RECORD):  # a planted link: refused before anything is loaded
                refuse_link(run_dir / name)
            remove_stale_temporaries(run_dir / CHECKPOINT_NAME)
        return _train(cfg, run_dir, resume, progress, graphs, dist, device_note, on_step)


class Interrupted(Exception):
    """Pre-training stopped by SIGINT / SIGTERM after writing its checkpoint at ``step``."""

    def __init__(self, run_dir: Path, step: int, signum: int) -> None:
        super().__init__(f"{run_dir}: stopped at step {step}, checkpoint written")
        self.run_dir, self.step, self.signum = run_dir, step, signum


RUN_RECORD = "config.json"
"""The run folder's record of its configuration (:func:`write_run_record`)."""


def write_run_record(run_dir: Path, cfg: Config, summary: str) -> None:
    """``config.json`` of the run folder: the configuration and the summary printed at its start."""
    with atomic_target(run_dir / RUN_RECORD) as tmp:
        tmp.write_text(json.dumps({"summary": summary, **cfg.to_dict()}, indent=2, sort_keys=True) + "\n")


def _train(
    cfg: Config, run_dir: Path, resume: bool, progress: bool, graphs: list[dgl.DGLGraph] | None,
    dist: DistContext | None, device_note: str = "", on_step: Callable[[int], None] | None = None,
) -> Path:
    began = time.time()  # this segment's wall time, setup included: adds to train_seconds, divides steps_per_second
    t = cfg.train
    main = dist is None or dist.is_main
    ckpt_path = run_dir / CHECKPOINT_NAME
    if ckpt_path.exists() and not resume:
        raise FileExistsError(f"{ckpt_path} exists: pass --resume to continue it, or choose --run-name/--seed")
    if resume and not ckpt_path.exists():
        raise FileNotFoundError(f"--resume given but {ckpt_path} does not exist")
    trainer = Trainer(cfg, dist)
    if resume:
        state = load_checkpoint(ckpt_path, trainer.device)
        unfinished = state["step"] < t.steps  # its corpus is loaded, so checked by digest
        _check_resume_config(state["config"], cfg, ckpt_path, unfinished and state.get("corpus_sha256") is not None)
        check_resumable(state, ckpt_path, trainer.model, trainer.key_model)
        trainer.load_state_dict(state)
    batch_size = t.effective_batch_size()
    rank, world_size = (0, 1) if dist is None else (dist.rank, dist.world_size)
    batches = rank_batches(trainer.step_count, t.steps, batch_size, rank, world_size)
    if dist is not None:  # every rank has checked and read the checkpoint before rank 0 overwrites it
        barrier()
    if t.steps == 0 and main and not ckpt_path.exists():  # the untrained encoder ("random init") as a run
        save_checkpoint(trainer.state_dict(), ckpt_path)
    if trainer.step_count >= t.steps:
        if main:
            print(f"{run_dir}: already trained for {trainer.step_count} steps", file=sys.stderr)
        return run_dir

    plan = training_plan(cfg, dist)
    threads = plan.model
    summary = run_summary(cfg, run_dir, plan, device_note, world_size)
    if main:
        if progress:
            print(summary, file=sys.stderr, flush=True)
        write_run_record(run_dir, cfg, summary)
    if graphs is None:
        from gcc_sgcl.data import load_pretrain_corpus

        graphs = load_pretrain_corpus(t.corpus, t.data_dir or None)
    digest = graphs_digest(graphs)
    if trainer.corpus_sha256 not in (None, digest):
        raise ValueError(f"--resume: the corpus graphs differ from those {ckpt_path} was trained on (a corpus file "
                         f"edited or replaced?): restore them, or start a new run with another --run-name")
    trainer.corpus_sha256 = digest
    pipeline, global_embs = build_pipeline(cfg, graphs, progress and main)
    dataset = PretrainPairDataset(graphs, cfg.sampling, t.seed, t.steps * batch_size, pipeline, global_embs)
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_sampler=batches,
        collate_fn=collate_pairs,
        num_workers=plan.builders,
        worker_init_fn=worker_init,
        generator=torch.Generator().manual_seed(t.seed),
    )
    torch.set_num_threads(threads)
    writer = SummaryWriter(str(run_dir)) if main else None
    if main:
        writer.add_text("run", "    " + summary.replace("\n", "\n    "), trainer.step_count)
    bar = tqdm(total=t.steps, initial=trainer.step_count, desc=cfg.run_dir_name(), disable=not (progress and main),
               unit="step")
    with stop_on_signals() as stop:
        try:
            _loop(trainer, loader, cfg, ckpt_path, writer, bar, began, stop, progress and main, on_step)
        finally:
            bar.close()
            if main:
                writer.close()
    if stop:
        raise Interrupted(run_dir, trainer.step_count, stop.signal)
    if dist is not None:  # the final checkpoint exists when any rank returns
        barrier()
    return run_dir


def _loop(trainer: Trainer, loader, cfg: Config, ckpt_path: Path, writer, bar, began: float, stop: StopRequest,
          report_pace: bool, on_step: Callable[[int], None] | None = None) -> None:
    """The training steps: log, checkpoint by step and by wall clock, and on a stop request checkpoint and return."""
    t, dist = cfg.train, trainer.dist
    main = dist is None or dist.is_main
    first_step, seconds_before = trainer.step_count, trainer.train_seconds
    pace = PaceEstimate(t.steps)
    last_save = time.time()
    hint = report_pace and not t.flush_denormal and trainer.device.type == "cpu"
    for graph_q, graph_k in loader_batches(loader):
        with flushed_denormals(t.flush_denormal):
            stats = trainer.step(graph_q, graph_k)
        check_finite_loss(stats["loss"], trainer.step_count, ckpt_path)
        stopping = _stop_everywhere(stop, dist)
        if not main:
            if stopping:
                return
            continue
        step = trainer.step_count
        if seconds_before is not None:
            trainer.train_seconds = seconds_before + time.time() - began
        if step % t.log_freq == 0 or step == t.steps:
            for name, value in stats.items():
                writer.add_scalar(f"train/{name}", value, step)
            writer.add_scalar("train/steps_per_second", (step - first_step) / (time.time() - began), step)
        bar.set_postfix(loss=f"{stats['loss']:.3f}", prob=f"{stats['prob']:.3f}")
        bar.update(1)
        if on_step is not None:
            on_step(step)
        measured = pace.step(step) if report_pace else None
        if measured is not None:
            bar.write(pace_lines(cfg, *measured), file=sys.stderr)
        late = t.save_minutes and time.time() - last_save >= 60 * t.save_minutes
        if step % t.save_freq == 0 or step == t.steps or late or stopping:
            save_checkpoint(trainer.state_dict(), ckpt_path)
            writer.flush()  # a killed run keeps the scalars of every step its checkpoint covers
            last_save = time.time()
            if hint and (tiny := denormal_parameters(trainer.model)):
                bar.write(f"[gcc_sgcl] {tiny} weights are denormal (below 1.2e-38: channels without a gradient, which "
                          f"weight decay drives towards 0), which slows each step on a CPU (2.5x at 15 000 steps x 256 "
                          f"in docs/performance.md); --flush-denormal flushes them (the bits of the result change, as "
                          f"with --threads)", file=sys.stderr)
                hint = False
        if stopping:
            return


@contextlib.contextmanager
def flushed_denormals(on: bool) -> Iterator[None]:
    """With ``on``, denormal floats are flushed to zero on this thread while the block runs (``--flush-denormal``;
    x86 FTZ / DAZ, :func:`torch.set_flush_denormal`), and kept after it (torch cannot read the setting, so one
    made before the block is not restored). Other threads, torch's intra-op pool among them, keep theirs.

    >>> tiny = torch.tensor([1e-39])
    >>> with flushed_denormals(True):
    ...     flushed = (tiny * 2).item()
    >>> flushed, (tiny * 2).item() > 0
    (0.0, True)
    """
    if not on:
        yield
        return
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def denormal_parameters(model: torch.nn.Module) -> int:
    """How many of ``model``'s floating-point parameters are denormal (non-zero, below the smallest normal float)."""
    count = 0
    for p in model.parameters():
        if p.is_floating_point():
            a = p.detach().abs()
            count += int(((a > 0) & (a < torch.finfo(p.dtype).tiny)).sum())
    return count


def _stop_everywhere(stop: StopRequest, dist: DistContext | None) -> bool:
    """Whether any process got a stop request (every rank stops after the same step, so none waits on another)."""
    if dist is None:
        return bool(stop)
    flag = torch.tensor([1.0 if stop else 0.0], device=dist.device)
    torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
    return bool(flag.item())


def check_finite_loss(loss: float, step: int, ckpt_path: Path) -> None:
    """Stop a diverged run: a ValueError naming the step whose loss is not finite (its update is never saved, so
    ``ckpt_path`` keeps the last good state). Under DDP the loss is the mean over ranks, so every rank stops."""
    if not math.isfinite(loss):
        kept = f"{ckpt_path} keeps step {load_checkpoint(ckpt_path)['step']}" if ckpt_path.exists() else "nothing saved"
        raise ValueError(f"training diverged: the loss is {loss} at step {step} ({kept}); try a larger --nce-t or a "
                         f"smaller --lr")


@dataclass
class LaunchConfig(Settings):
    """How the command was launched, beside the run's configuration (``scripts/pretrain.sh`` passes GCC's ``<gpu>``)."""

    gpu: str = setting("", "GCC's <gpu>: a GPU index, or -1 / cpu; sets --device, and a GPU without CUDA falls back "
                           "to the CPU, said in the run's summary")


def command_parser() -> argparse.ArgumentParser:
    """Pre-training's parser with the command's own settings (:class:`LaunchConfig`) and GCC's flag spellings in its
    help (:data:`~gcc_sgcl.gcc_compat.HELP`), for every method's family (the parser rebuilt for ``--method``
    keeps both)."""
    return PretrainParser(extras=[(LaunchConfig, "launch")], epilog=GCC_HELP)


RESUME_ENV = "GCC_SGCL_COMMAND"
"""The command as the user typed it (``scripts/pretrain.sh`` sets it), for the literal resume hint."""


def resume_command(argv: Sequence[str]) -> str:
    """The literal command that resumes this run: the one typed (``$GCC_SGCL_COMMAND``, set by
    ``scripts/pretrain.sh``), else this module's with ``argv``, with ``--resume`` added unless it is there.

    >>> import os; os.environ.pop(RESUME_ENV, None) and None
    >>> resume_command(["--method", "sgcl", "--run-name", "my run"])
    "python -m gcc_sgcl.engine.pretrain --method sgcl --run-name 'my run' --resume"
    """
    typed = os.environ.get(RESUME_ENV) or shlex.join(["python", "-m", "gcc_sgcl.engine.pretrain", *argv])
    return typed if "--resume" in shlex.split(typed) else f"{typed} --resume"


def check_command_line_steps(steps: int) -> None:
    """``--steps`` of the command line: 0 would write an untrained checkpoint as a run's, so it is refused with one
    line saying what to do instead (the experiments runner and :func:`pretrain` still make the 0-step "random init"
    encoders).

    >>> check_command_line_steps(0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: --steps 0 trains nothing ...: give --steps 1 or more; for the untrained ("random init") encoder use ...
    """
    if steps == 0:
        raise ValueError("--steps 0 trains nothing and would write an untrained encoder as the run's checkpoint: give "
                         "--steps 1 or more; for the untrained (\"random init\") encoder use the experiments runner "
                         "(python -m gcc_sgcl.experiments run --methods gcc --steps 0 ...) or pretrain(cfg) with "
                         "cfg.train.steps = 0 from Python")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: GCC's spellings read as this code's (:mod:`gcc_sgcl.gcc_compat`); Ctrl-C or
    SIGTERM ends with the checkpoint written and one line naming the command that resumes."""
    argv = sys.argv[1:] if argv is None else list(argv)
    typed = list(argv)
    with user_errors():
        argv, notes = translate_pretrain(argv)
    args = command_parser().parse_args(argv)
    cfg = config_from_args(args)
    with user_errors():
        check_command_line_steps(cfg.train.steps)
    note, gpu = "", from_args(LaunchConfig, args).gpu
    if gpu:
        with user_errors():
            device, note = resolve_device_quietly(gpu)
        cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, device=device))
    dist = init_distributed(cfg.train.device) if launched_by_torchrun() else None
    main_rank = dist is None or dist.is_main
    for line in notes if main_rank else ():
        print(f"[gcc_sgcl] {line}", file=sys.stderr)
    try:
        with user_errors():
            run_dir = pretrain(cfg, resume=args.resume, dist=dist, device_note=note)
    except Interrupted as stop:
        stop_at_once_on_signals()  # another Ctrl-C from here to the exit ends it at once, not with a traceback
        if main_rank:
            print(f"[gcc_sgcl] stopped at step {stop.step} of {cfg.train.steps}; checkpoint in {stop.run_dir}. "
                  f"Resume: {resume_command(typed)}", file=sys.stderr)
        exit_after_stop(stop_exit(stop.signum))
    finally:
        cleanup_distributed()
    if main_rank:
        print(run_dir)


if __name__ == "__main__":
    main()
