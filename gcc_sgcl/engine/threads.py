"""How many cores go to the model and how many to view building, decided once per run.

Embedding builds views (walks, induced subgraphs, batched ``eigh``) in worker processes while the model encodes
the previous chunk (:mod:`gcc_sgcl.engine.stream`). Both sides run single-threaded BLAS best on small graphs: on 2
busy cores a two-thread model forward was 5-7x slower per view than a one-thread one beside a view builder
(issue 66). :func:`plan_threads` therefore gives the model ``max(1, cores // 4)`` torch threads (1 on 2-7 cores)
and the remaining cores to view builders, so the two never ask for more cores than the process may use
(``os.sched_getaffinity``). A value given explicitly (``--threads``, ``--num-workers``, ``threads=``,
``workers=``) is honoured as given, and the summary line says when it oversubscribes.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask; ``os.cpu_count()`` where there is none).

    >>> available_cores() >= 1
    True
    """
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


OVERSUBSCRIBE_LIMIT = 8
"""Model threads plus worker processes beyond this many per core are refused (``--threads 1000000`` aborts inside
OpenMP, ``workers=1000`` forks a thousand processes) unless :data:`OVERSUBSCRIBE_ENV` is set."""
OVERSUBSCRIBE_ENV = "GCC_SGCL_OVERSUBSCRIBE"


@dataclass(frozen=True)
class ThreadPlan:
    """Torch threads of the model and view-building worker processes of one run.

    Attributes:
        model: torch intra-op threads of the model forward (on a GPU: of its host side).
        builders: worker processes building views, each one-threaded (0: built in this process, between forwards).
        cores: cores available to the process when the plan was made.
        chosen: ``"auto"``, or ``"given"`` when a count came from the caller.
    """

    model: int
    builders: int
    cores: int
    chosen: str = "auto"

    def __post_init__(self) -> None:
        if self.model < 1 or self.builders < 0:
            raise ValueError(f"a plan needs >= 1 model thread and >= 0 builders, got {self.model}, {self.builders}")
        limit = OVERSUBSCRIBE_LIMIT * max(1, self.cores)
        if self.model + self.builders > limit and os.environ.get(OVERSUBSCRIBE_ENV, "") in ("", "0"):
            raise ValueError(f"threads ({self.model}) + workers ({self.builders}) exceed {OVERSUBSCRIBE_LIMIT}x the "
                             f"{self.cores} cores this process may use ({limit}): a typo? (set {OVERSUBSCRIBE_ENV}=1 to "
                             f"run that many)")

    @property
    def oversubscribed(self) -> bool:
        """More threads than cores (only when a count was given)."""
        return self.model + self.builders > self.cores

    def describe(self) -> str:
        """The plan in words, for a run's summary line.

        >>> ThreadPlan(1, 1, 2).describe()
        'threads: model 1 + 1 view builder = 2 of 2 cores (auto)'
        """
        builders = f"{self.builders} view builder{'s' if self.builders != 1 else ''}"
        note = ", over the cores" if self.oversubscribed else ""
        return (f"threads: model {self.model} + {builders} = {self.model + self.builders} of {self.cores} cores "
                f"({self.chosen}{note})")


def plan_threads(model: int | None = None, builders: int | None = None, cores: int | None = None,
                 on_gpu: bool = False) -> ThreadPlan:
    """The model's threads and the view builders for ``cores`` (default :func:`available_cores`).

    Args:
        model: torch threads of the model; None (or 0) decides: 1 on a GPU (the host only launches kernels), else
            ``max(1, cores // 4)``, and never more than ``cores - builders`` when ``builders`` is given.
        builders: view-building worker processes; None decides: the cores the model leaves, 0 on one core.
        cores: cores to plan for (default: this process's affinity).
        on_gpu: the model runs on a GPU.

    >>> plan_threads(cores=2), plan_threads(cores=16).builders, plan_threads(cores=1).builders
    (ThreadPlan(model=1, builders=1, cores=2, chosen='auto'), 12, 0)
    >>> plan_threads(builders=3, cores=2).describe()
    'threads: model 1 + 3 view builders = 4 of 2 cores (given, over the cores)'
    """
    cores = available_cores() if cores is None else cores
    if (model is not None and model < 0) or (builders is not None and builders < 0):
        raise ValueError(f"threads and builders must be >= 0 (0 or None: decided from the cores), got {model}, "
                         f"{builders}")
    given = bool(model) or builders is not None
    if not model:
        model = 1 if on_gpu else max(1, cores // 4)
        if builders is not None:
            model = max(1, min(model, cores - builders))
    if builders is None:
        builders = max(0, cores - model)
    return ThreadPlan(model, builders, cores, "given" if given else "auto")


@contextlib.contextmanager
def model_threads(threads: int) -> Iterator[None]:
    """Torch intra-op threads set to ``threads`` inside the block, the caller's setting restored after it.

    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with model_threads(1):
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def processes_line(processes: int, requested: int, what: str = "fold processes", cores: int | None = None) -> str:
    """The summary-line words for ``processes`` one-threaded worker processes (the tasks' CV folds, fine-tuning's
    folds), ``requested`` being the flag's value (0: decided from the cores).

    >>> processes_line(2, 0, cores=2)
    'threads: 2 fold processes x 1 thread = 2 of 2 cores (auto)'
    >>> processes_line(4, 4, cores=2)
    'threads: 4 fold processes x 1 thread = 4 of 2 cores (given, over the cores)'
    """
    cores = available_cores() if cores is None else cores
    note = ", over the cores" if processes > cores else ""
    return (f"threads: {processes} {what} x 1 thread = {processes} of {cores} cores "
            f"({'given' if requested else 'auto'}{note})")
