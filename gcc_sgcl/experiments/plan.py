"""What a sweep still has to do, and how long that should take: ``python -m gcc_sgcl.experiments run|finetune
... --plan`` (``PLAN=1 bash scripts/reproduce.sh`` for every stage) prints it without running anything.

Per (method, mode, seed) with missing rows: how its encoder is obtained (already trained, copied from an exported
encoder, resumed from its checkpoint at some step, or pre-trained from scratch), how many evaluations are
missing, and estimates of both times from the wall times recorded in the stored rows (the sweep's store and the
stores of ``--timings``, e.g. the tables' store for a study that keeps its rows apart): pre-training, the median
over rows of the same steps, batch and corpus, or, with none at those steps, the median time per step over rows of
the same batch and corpus at the largest steps stored (where set-up weighs least) times the steps (a longer
schedule than any stored), for the same method if it has any, else for its preset, else for any method of the
mode; an evaluation, the median over rows of the same dataset, kind (encoder, encoder joined to the structural
vector, fine-tuning, or a training-free method) and evaluation protocol (CV repetitions and folds, SVC protocol,
fine-tuning epochs, folds and view copies), whatever the pre-training budget, for the same method if it has any
(GCC's SVC converges at a speed that depends on the features), else for every method. An
evaluation cut off part-way (its CV folds kept in the sweep's fold cache under the sweep's repetitions, folds and
CV seed, :mod:`gcc_sgcl.tasks.folds`) is estimated for its missing folds only: that median (embedding included)
times the share of folds missing, or, with no timed row of the dataset and kind for any method, the stored folds'
mean fit time times the rounds of parallel fits the missing folds need (embedding not counted). An
estimate with nothing to go on is unknown, and the totals say so.
"""
from __future__ import annotations

import math
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from statistics import median
from typing import Callable, Iterable, Sequence

from gcc_sgcl.config import Config
from gcc_sgcl.data import dataset_present
from gcc_sgcl.engine.checkpoint import CHECKPOINT_NAME, load_checkpoint
from gcc_sgcl.method import MethodSpec
from gcc_sgcl.classical import STRUCTURAL
from gcc_sgcl.experiments.encoders import carried_state, run_folder
from gcc_sgcl.experiments.finetune_sweep import finetune_budget, pending_finetune
from gcc_sgcl.experiments.frozen_sweep import pending
from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow, RowStore
from gcc_sgcl.experiments.sweep import Job, Sweep
from gcc_sgcl.tasks.cv import forked_jobs
from gcc_sgcl.tasks.finetune import FinetuneConfig
from gcc_sgcl.tasks.folds import CacheProgress, cache_folder, cache_progress

FINETUNED = "fine-tuned"


@dataclass(frozen=True)
class PlannedJob:
    """One (method, mode, seed) with missing rows: how its encoder is obtained (``encoder``), how many
    evaluations are missing, the estimated minutes of each part (None: no stored timing to go on) and the CV folds
    its evaluations cut off part-way have stored (``folds``: stored, in all)."""

    method: str
    mode: str
    seed: int
    encoder: str
    evaluations: int
    pretrain_minutes: float | None
    eval_minutes: float | None
    folds: tuple[int, int] = (0, 0)


def encoder_state(cfg: Config | None, exported: Sequence[str | Path] = ()) -> tuple[str, float]:
    """How the runner will obtain ``cfg``'s encoder (None: a training-free method) and the fraction of its
    pre-training still to run: a state of ``exported`` further along than the run folder's is copied first
    (:func:`~gcc_sgcl.experiments.encoders.carried_state`)."""
    if cfg is None:
        return "training-free", 0.0
    ckpt = run_folder(cfg) / CHECKPOINT_NAME
    step = int(load_checkpoint(ckpt)["step"]) if ckpt.exists() else None
    carried = carried_state(cfg, exported)
    source = "" if carried is None else f"copied from {carried[0]}"
    if carried is not None:
        step = carried[1]
    if step is None:
        return ("untrained (0 steps)", 0.0) if cfg.train.steps == 0 else ("to pre-train", 1.0)
    if step >= cfg.train.steps:
        return source or "trained", 0.0
    return f"resumes at step {step}" + (f" ({source})" if source else ""), 1.0 - step / cfg.train.steps


def evaluation_kind(method: str, mode: str, label: str) -> str:
    """What an evaluation's wall time depends on besides the dataset: a training-free method's own embedding,
    an encoder's embedding, or that embedding joined to the structural vector."""
    if mode == CLASSICAL_MODE:
        return method
    return STRUCTURAL + " join" if label != method else "encoder"


PRETRAIN_BUDGET = ("steps", "batch_size", "corpus")
PER_STEP = PRETRAIN_BUDGET[1:]  # what a pre-training step's time depends on besides the method
EVAL_PROTOCOL = ("repeats", "folds", "svc", "epochs", "max_folds", "view_copies")


class Timings:
    """Median wall times of stored rows (see the module docstring): pre-training at the pre-training budget of
    ``budget`` (:data:`PRETRAIN_BUDGET`), evaluations under its protocol (:data:`EVAL_PROTOCOL`); ``budget`` has
    the row fields of the sweep (:meth:`Sweep.budget`, or a fine-tuning budget). A budget with no stored row at its
    steps is estimated per step (:data:`PER_STEP`) from the rows of the largest steps stored:

    >>> def row(steps, seconds):
    ...     return ResultRow(method="gcc", mode="e2e", seed=0, dataset="d", task="t", metric="m", mean=0.0, std=0.0,
    ...                      std_kind="", n=1, protocol="", steps=steps, batch_size=256, pretrain_seconds=seconds)
    >>> rows = [row(6000, 3000.0), row(300, 400.0), row(6000, 4500.0)]
    >>> Timings(rows, {"steps": 6000, "batch_size": 256}).pretrain("gcc", "e2e")  # the median at 6000 steps
    3750.0
    >>> Timings(rows, {"steps": 24000, "batch_size": 256}).pretrain("gcc", "e2e")  # 24000 x median(0.5, 0.75)
    15000.0
    """

    def __init__(self, rows: Iterable[ResultRow], budget: dict[str, object]) -> None:
        self.steps = budget.get("steps")
        self.step_s: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        self.eval_s: dict[tuple[str, ...], list[float]] = defaultdict(list)
        seen = set()
        for r in rows:
            if r.task == "runtime":
                continue
            if r.pretrain_seconds is not None and r.steps and all(getattr(r, f) == budget.get(f) for f in PER_STEP):
                for key in ((r.mode, r.method), (r.mode, MethodSpec.parse(r.method).preset), (r.mode,)):
                    self.step_s[key][r.steps].append(r.pretrain_seconds / r.steps)
            if not all(getattr(r, f) == budget.get(f) for f in EVAL_PROTOCOL):
                continue
            if r.eval_seconds is not None and r.key not in seen:  # one evaluation, several metric rows
                seen.add(r.key)
                encoder = str(MethodSpec.parse(r.method).encoder)
                kind = FINETUNED if r.task.endswith("_finetuned") else evaluation_kind(encoder, r.mode, r.method)
                for key in ((encoder, r.dataset, kind), (r.dataset, kind)):
                    self.eval_s[key].append(r.eval_seconds)

    def pretrain(self, method: str, mode: str) -> float | None:
        """Seconds to pre-train ``method`` in ``mode`` (its own median, else its preset's, else the mode's; each at
        the budget's steps, else per step)."""
        for key in ((mode, method), (mode, MethodSpec.parse(method).preset), (mode,)):
            by_steps = self.step_s.get(key)
            if by_steps and self.steps:
                return median(by_steps[self.steps if self.steps in by_steps else max(by_steps)]) * self.steps
        return None

    def evaluation(self, dataset: str, kind: str, method: str) -> float | None:
        """Seconds to embed and evaluate ``method``'s embedding on ``dataset`` (``kind``: :func:`evaluation_kind`
        or fine-tuning): the method's own median if it has one (an SVC's time depends on the features), else that
        of every method."""
        for key in ((method, dataset, kind), (dataset, kind)):
            if self.eval_s.get(key):
                return median(self.eval_s[key])
        return None


def timed_rows(sweep: Sweep) -> list[ResultRow]:
    """The rows whose wall times feed the estimates: the sweep's store and those of ``--timings`` (each read once;
    an absent one is empty)."""
    paths = dict.fromkeys(Path(p).resolve() for p in (sweep.rows, *sweep.timings))
    return [row for path in paths for row in RowStore(path).load()]


def _total(parts: Iterable[float | None]) -> float | None:
    parts = list(parts)
    return None if any(p is None for p in parts) else sum(parts)


Evaluation = tuple[str, str, str]  # (dataset, row label, evaluation kind)


def evaluation_seconds(sweep: Sweep, timings: Timings, job: Job, evaluation: Evaluation
                       ) -> tuple[float | None, CacheProgress]:
    """Estimated seconds of one of ``job``'s evaluations still to run, and how far its fold cache has got (see the
    module docstring)."""
    name, label, kind = evaluation
    seconds = timings.evaluation(name, kind, job[0])
    if kind == FINETUNED:
        return seconds, CacheProgress()
    protocol = sweep.protocol(label, job[1], job[2])
    progress = cache_progress(cache_folder(protocol.fold_cache, name), repeats=protocol.repeats,
                              folds=protocol.folds, seed=protocol.seed)
    if progress.stored and progress.total:
        missing = max(progress.total - progress.stored, 0)
        rounds = math.ceil(missing / forked_jobs(protocol.jobs, max(missing, 1)))
        seconds = (seconds * missing / progress.total if seconds is not None
                   else progress.seconds / progress.stored * rounds)
    return seconds, progress


def _job(sweep: Sweep, timings: Timings, job: Job, evaluations: list[Evaluation]) -> PlannedJob:
    method, mode, seed = job
    cfg = None if mode == CLASSICAL_MODE else sweep.encoder_config(method, mode, seed)
    state, left = encoder_state(cfg, sweep.carried())
    estimate = timings.pretrain(method, mode) if left > 0 else 0.0
    estimates = [evaluation_seconds(sweep, timings, job, e) for e in evaluations]
    evals = _total(seconds for seconds, _ in estimates)
    folds = (sum(p.stored for _, p in estimates), sum(p.total for _, p in estimates if p.stored))
    return PlannedJob(method, mode, seed, state, len(evaluations), None if estimate is None else estimate * left / 60,
                      None if evals is None else evals / 60, folds)


def _evaluations(job: Job, names: dict[str, list[str]]) -> list[Evaluation]:
    """(dataset, row label, evaluation kind) of each row label the runner would add for ``job``."""
    return [(name, label, evaluation_kind(job[0], job[1], label)) for name, labels in names.items()
            for label in labels]


def local_now() -> datetime:
    """The current time, aware of the local time zone."""
    return datetime.now().astimezone()


def parse_deadline(text: str, now: datetime | None = None) -> datetime:
    """``--until``'s deadline, time-zone aware: ``HH:MM`` is its next occurrence after ``now`` (default: local
    now), anything else an ISO date-time with a time of day (local unless it gives an offset).

    >>> from datetime import timezone
    >>> eve = datetime(2026, 11, 24, 20, 0, tzinfo=timezone.utc)
    >>> parse_deadline("23:10", eve).isoformat(), parse_deadline("1:05", eve).isoformat()
    ('2026-11-24T23:10:00+00:00', '2026-11-25T01:05:00+00:00')
    """
    now = now or local_now()
    try:
        if re.fullmatch(r"\d{1,2}:\d{2}", text):
            at = datetime.combine(now.date(), datetime.strptime(text, "%H:%M").time(), tzinfo=now.tzinfo)
            return at if at > now else at + timedelta(days=1)
        if not re.search(r"\d[T ]\d", text):
            raise ValueError("no time of day")
        at = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--until {text!r}: expected HH:MM or an ISO date-time such as 2026-11-24T23:10") from None
    return at if at.tzinfo else at.astimezone()


class Deadline:
    """Admits a job of ``sweep`` (:data:`~gcc_sgcl.experiments.sweep.Admission`) when the known parts of its
    estimated pre-training and evaluation (:func:`plan_sweep`'s, or :func:`plan_finetune`'s with ``finetune``)
    end by ``at``, counted from the moment it would start (a part with no stored timing counts 0). With
    ``finetune``, only trained (or exported) encoders are admitted: an encoder pre-trained for its fine-tuned rows
    alone would be lost with the machine before its frozen rows, which the sweep's ``run`` then trains it again
    for. A refused job is named on stderr."""

    def __init__(self, sweep: Sweep, at: datetime, finetune: FinetuneConfig | None = None,
                 clock: Callable[[], datetime] = local_now) -> None:
        self.sweep, self.at, self.finetune, self.clock = sweep, at, finetune, clock
        budget = sweep.budget() if finetune is None else finetune_budget(sweep, finetune)
        self.timings = Timings(timed_rows(sweep), budget)

    def minutes(self, job: Job, names: dict[str, list[str]]) -> tuple[float | None, float, bool]:
        """For ``job`` producing the rows ``names`` (dataset → row labels): its pre-training minutes (0: none to
        do, None: unknown), the total minutes of the known parts, and whether every part is known."""
        evaluations = ([(name, name, FINETUNED) for name in names] if self.finetune
                       else _evaluations(job, names))
        pretrain = _job(self.sweep, self.timings, job, []).pretrain_minutes
        parts = [pretrain] + [None if (s := evaluation_seconds(self.sweep, self.timings, job, e)[0]) is None
                              else s / 60 for e in evaluations]
        return pretrain, sum(p for p in parts if p is not None), all(p is not None for p in parts)

    def __call__(self, job: Job, names: dict[str, list[str]]) -> bool:
        """Whether ``job`` may start now (see the class)."""
        pretrain, minutes, complete = self.minutes(job, names)
        left = (self.at - self.clock()).total_seconds() / 60
        if self.finetune and pretrain != 0.0:
            why = "its encoder is not trained (under a deadline, fine-tuning uses trained encoders only)"
        elif minutes <= left:
            return True
        else:
            why = (f"it would end after the deadline ({'≥ ' if not complete else '≈ '}{minutes:.1f} min estimated, "
                   f"{max(left, 0.0):.1f} min left before {self.at:%Y-%m-%d %H:%M %Z})")
        print(f"not started: {' '.join(map(str, job))} on {', '.join(names) or 'export'}: {why}", file=sys.stderr)
        return False


def plan_sweep(sweep: Sweep) -> list[PlannedJob]:
    """The jobs of ``python -m gcc_sgcl.experiments run`` with missing rows (datasets absent under the data root
    are left out, as the runner leaves them out)."""
    store = RowStore(sweep.rows)
    timings = Timings(timed_rows(sweep), sweep.budget())
    present = [n for n in sweep.datasets if dataset_present(n, sweep.data_dir)]
    return [_job(sweep, timings, job, _evaluations(job, names)) for job, names in pending(sweep, store, present)
            if names]


def plan_finetune(sweep: Sweep, settings: FinetuneConfig) -> list[PlannedJob]:
    """The jobs of ``python -m gcc_sgcl.experiments finetune`` with missing rows."""
    store = RowStore(sweep.rows)
    timings = Timings(timed_rows(sweep), finetune_budget(sweep, settings))
    present = [n for n in sweep.datasets if dataset_present(n, sweep.data_dir)]
    by_job: dict[Job, list[Evaluation]] = defaultdict(list)
    for job, name in pending_finetune(sweep, settings, store, present):
        by_job[job].append((name, name, FINETUNED))
    return [_job(sweep, timings, job, evaluations) for job, evaluations in by_job.items()]


def _minutes(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f} min"


def format_plan(jobs: Sequence[PlannedJob]) -> str:
    """The plan as a table with a totals line (hours; unknown estimates are counted and named); a job whose
    evaluations have CV folds stored says how many."""
    if not jobs:
        return "nothing to do: every row of this sweep is stored"
    width, state = max(len(j.method) for j in jobs), max(len(j.encoder) for j in jobs)
    lines = [f"{'method':<{width}}  mode  seed  {'encoder':<{state}}  evals  pre-train  evaluate"]
    lines += [f"{j.method:<{width}}  {j.mode:<4}  {j.seed:>4}  {j.encoder:<{state}}  {j.evaluations:>5}  "
              f"{_minutes(j.pretrain_minutes):>9}  {_minutes(j.eval_minutes):>8}"
              + (f"  ({j.folds[0]} of {j.folds[1]} CV folds stored)" if j.folds[0] else "") for j in jobs]
    train = [j for j in jobs if j.pretrain_minutes != 0.0]
    hours = [_total(j.pretrain_minutes for j in train), _total(j.eval_minutes for j in jobs)]
    known = [sum(j.pretrain_minutes or 0.0 for j in train) / 60, sum(j.eval_minutes or 0.0 for j in jobs) / 60]
    parts = [f"{len(train)} encoders to pre-train", f"{sum(j.evaluations for j in jobs)} evaluations"]
    total = "; ".join(
        f"{part} ≈ {k:.1f} h" + ("" if h is not None else " (plus those without an estimate)")
        for part, h, k in zip(parts, hours, known))
    return "\n".join(lines + [f"total: {total} (medians of stored wall times, see gcc_sgcl.experiments.plan)"])
