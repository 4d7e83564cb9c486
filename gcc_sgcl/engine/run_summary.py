"""What a pre-training run says before its first step: the method and its settings beyond the preset, the corpus,
the budget, the device, workers and threads, the run folder and when it checkpoints (:func:`run_summary`); and,
after its first measured steps, how long it will take (:class:`PaceEstimate`); for a run shown in a sweep's bar,
where it stands (:class:`StepNote`). The same block goes to the run's TensorBoard text and its ``config.json``."""
from __future__ import annotations

import math
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from gcc_sgcl.config import RUN_PLACE_FIELDS, Config
from gcc_sgcl.engine.threads import ThreadPlan
from gcc_sgcl.gcc_compat import GCC_CORPUS
from gcc_sgcl.presets import settings_beyond_preset

BUILT_IN_CORPUS = "synthetic"
OWN_LINES = ("mode", "seed", "steps", "batch_size", "corpus")  # training fields the summary gives a line of their own
TABLE_BUDGET = {"e2e": ("--steps", "6000", "--batch-size", "256"),
                "moco": ("--mode", "moco", "--steps", "6000", "--batch-size", "32")}
"""The tables' pre-training budget per mode (``scripts/reproduce.sh``'s ``BUDGET`` and ``MOCO``)."""
DAY = 24 * 3600


def flags_beyond_preset(cfg: Config) -> list[str]:
    """The learning settings of ``cfg`` beyond its method's preset
    (:func:`~gcc_sgcl.presets.settings_beyond_preset`) as ``--flag value``; the mode, seed, budget and corpus have
    lines of their own, and where and at what pace a run goes is not a setting.

    >>> from gcc_sgcl.presets import make_config
    >>> flags_beyond_preset(make_config("sgcl", {"train": {"steps": 60, "lr": 0.01}, "augment": {"p_mask": 0.2}}))
    ['--lr 0.01', '--p-mask 0.2']
    """
    skip = tuple(("train", name) for name in (*OWN_LINES, *RUN_PLACE_FIELDS))
    return [f"--{key.split('.', 1)[1].replace('_', '-')} {value}" for key, value in
            settings_beyond_preset(cfg, skip).items()]


def tables_command(cfg: Config, gpu: str = "<gpu>") -> str:
    """The command that trains ``cfg``'s method on GCC's corpus at the tables' budget."""
    return " ".join(["bash scripts/pretrain.sh", gpu, shlex.quote(cfg.method), "--corpus", *GCC_CORPUS,
                     *TABLE_BUDGET[cfg.train.mode]])


def run_summary(cfg: Config, run_dir: Path, plan: ThreadPlan, device_note: str = "", world_size: int = 1) -> str:
    """The block a run prints before its first step (plain text, one setting per line); ``plan``: the model's
    threads and the DataLoader workers (:func:`~gcc_sgcl.engine.pretrain.training_plan`)."""
    t = cfg.train
    beyond = flags_beyond_preset(cfg)
    corpus = " ".join(t.corpus)
    if t.corpus == [BUILT_IN_CORPUS]:
        corpus += (" (a small built-in stand-in, no download; GCC's corpus: --corpus " + " ".join(GCC_CORPUS) + ")")
    batch = t.effective_batch_size()
    minutes = f" and every {t.save_minutes:g} min" if t.save_minutes else ""
    lines = [
        f"[gcc_sgcl] pre-training {cfg.method} ({t.mode.upper()}), seed {t.seed}",
        f"  settings  {'preset defaults' if not beyond else ' '.join(beyond) + ' (beyond the preset)'}",
        f"  corpus    {corpus}",
        f"  budget    {t.steps} steps x {batch} pairs"
        + (" (the tables: " + " ".join(TABLE_BUDGET[t.mode]) + ")" if (t.steps, batch) != (6000, int(
            TABLE_BUDGET[t.mode][-1])) else " (the tables' budget)"),
        f"  device    {t.device}{f' ({device_note})' if device_note else ''}"
        f"{f', {world_size} processes' if world_size > 1 else ''}"
        + (f", {flush_note(t.device, plan.model)}" if t.flush_denormal else ""),
        f"  {plan.describe().replace('view builder', 'DataLoader worker').replace('threads: ', 'threads   ', 1)}"
        + (" per process" if world_size > 1 else ""),
        f"  run       {run_dir}: checkpoint every {t.save_freq} steps{minutes}, at the end and on Ctrl-C",
    ]
    return "\n".join(lines)


@dataclass
class PaceEstimate:
    """Seconds per step over the steps after the first (which also starts the workers); reported once, after
    ``after`` steps or ``seconds`` of them, whichever comes first.

    >>> pace = PaceEstimate(total=100, after=2)
    >>> pace.step(1, now=10.0) is None and pace.step(2, now=12.0) is None
    True
    >>> pace.step(3, now=14.0)
    (2.0, 194.0)
    """

    total: int
    after: int = 5
    seconds: float = 60.0
    _start: tuple[int, float] | None = None
    _done: bool = field(default=False)

    def step(self, step: int, now: float | None = None) -> tuple[float, float] | None:
        """Note that ``step`` finished; once measured, ``(seconds per step, seconds left)``, else None."""
        now = time.time() if now is None else now
        if self._done:
            return None
        if self._start is None:
            self._start = (step, now)
            return None
        steps, elapsed = step - self._start[0], now - self._start[1]
        if steps < self.after and elapsed < self.seconds:
            return None
        self._done = True
        per_step = elapsed / steps
        return per_step, per_step * (self.total - step)


@dataclass
class StepNote:
    """Where a run without a bar of its own stands (a sweep's pre-training, shown in the sweep's bar): called after
    each step, it passes ``show`` the step and, once a step after the first is timed, the time left at the pace
    since the first; at most once per ``every`` seconds, and at the last step.

    >>> notes = []
    >>> note = StepNote(total=1000, show=notes.append, every=60.0)
    >>> for step, now in ((401, 0.0), (402, 1.0), (500, 50.0), (700, 150.0), (1000, 300.0)):
    ...     note(step, now)
    >>> notes
    ['step 401 of 1,000', 'step 700 of 1,000, about 3 min left', 'step 1,000 of 1,000']
    """

    total: int
    show: Callable[[str], object]
    every: float = 60.0
    _start: tuple[int, float] | None = field(default=None, init=False)
    _shown: float = field(default=-math.inf, init=False)

    def __call__(self, step: int, now: float | None = None) -> None:
        now = time.time() if now is None else now
        self._start = self._start or (step, now)
        if now - self._shown < self.every and step < self.total:
            return
        self._shown = now
        done, elapsed = step - self._start[0], now - self._start[1]
        left = f", about {_duration(elapsed / done * (self.total - step))} left" if done and step < self.total else ""
        self.show(f"step {step:,} of {self.total:,}{left}")


def flush_note(device: str, threads: int) -> str:
    """What ``--flush-denormal`` does here: it flushes on the CPU (not on a GPU), in the thread that runs the step."""
    if not device.startswith("cpu"):
        return "denormals flushed to zero in the step's CPU work only"
    if not flush_supported():
        return "--flush-denormal has no effect on this CPU (no FTZ / DAZ)"
    return ("denormals flushed to zero" if threads == 1 else
            f"denormals flushed to zero in the step's main thread only (not in the other {threads - 1})")


def flush_supported() -> bool:
    """Whether this CPU can flush denormal floats (:func:`torch.set_flush_denormal` says so; left off)."""
    supported = torch.set_flush_denormal(True)
    torch.set_flush_denormal(False)
    return supported


def pace_lines(cfg: Config, per_step: float, left: float) -> str:
    """The estimate printed after the first measured steps; beyond a day, the command for the tables' budget."""
    text = f"[gcc_sgcl] {per_step:.2f} s/step: about {_duration(left)} for the remaining steps"
    if left > DAY:
        text += (f"\n[gcc_sgcl] that is more than a day on this machine; the tables' encoders train in "
                 f"{6000 * per_step * int(TABLE_BUDGET[cfg.train.mode][-1]) / cfg.train.effective_batch_size() / 3600:.1f}"
                 f" h at this pace: {tables_command(cfg)}")
    return text


def _duration(seconds: float) -> str:
    """``seconds`` in the largest fitting unit.

    >>> _duration(42), _duration(5400), _duration(3 * 86400)
    ('42 s', '1.5 h', '3.0 days')
    """
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"
    return f"{seconds / 3600:.1f} h" if seconds < 2 * DAY else f"{seconds / DAY:.1f} days"
