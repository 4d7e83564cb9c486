"""What a seeded experiment sweep is: its jobs — every (method, mode, seed) — their pre-training configurations,
the budget that identifies their rows, the evaluation protocol and the datasets it finds.

Methods are any ``pretrain.sh`` preset (with bracketed settings, ``sgcl[c=0.35]``, ``sgcl[k=64]``), or a
training-free method of :mod:`gcc_sgcl.classical` (mode ``none``: the embedding is computed on the downstream
graph itself). The sweeps themselves: :mod:`~gcc_sgcl.experiments.frozen_sweep` (frozen embeddings) and
:mod:`~gcc_sgcl.experiments.finetune_sweep`; their encoders: :mod:`~gcc_sgcl.experiments.encoders`.
"""
from __future__ import annotations

import dataclasses
import sys
import warnings
from pathlib import Path
from typing import Any, Callable

from gcc_sgcl.config import STAGES, Config
from gcc_sgcl.classical import METHODS, STRUCTURAL
from gcc_sgcl.data import KINDS, dataset_kind
from gcc_sgcl.engine.checkpoint import CHECKPOINT_NAME
from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow
from gcc_sgcl.experiments.settings import SweepConfig
from gcc_sgcl.experiments.tables import HEATMAP_STAGES
from gcc_sgcl.method import VARIANT_SETTINGS, MethodSpec
from gcc_sgcl.presets import LEAVE_ONE_OUT, canonical_name, make_config, settings_read
from gcc_sgcl.tasks.folds import cache_folder
from gcc_sgcl.tasks.settings import EvalConfig

Job = tuple[str, str, int]  # (method, mode, seed)

# Whether to start a job now, given the rows it would add (dataset → row labels); e.g. a deadline's
# (:class:`gcc_sgcl.experiments.plan.Deadline`). A job it refuses is left for a later run.
Admission = Callable[[Job, dict[str, list[str]]], bool]


# Named groups of presets a sweep stage runs (``python -m gcc_sgcl.experiments method @pairs``): the
# single-stage presets of the heat-map, their pairs (similar and diverse are alternative filters, never
# paired) and the leave-one-out variants (each switchable stage of :data:`gcc_sgcl.config.STAGES` off).
PRESET_GROUPS: dict[str, tuple[str, ...]] = {
    "singles": tuple(f"sgcl-{s}" for s in HEATMAP_STAGES),
    "pairs": tuple(f"sgcl-{a}+{b}" for i, a in enumerate(HEATMAP_STAGES) for b in HEATMAP_STAGES[i + 1:]
                   if {a, b} != {"similar", "diverse"}),
    "loo": tuple(f"{LEAVE_ONE_OUT}{stage}" for stage in STAGES),
}


def expand_groups(bases: list[str]) -> list[str]:
    """``bases`` with each ``@<group>`` replaced by its presets (:data:`PRESET_GROUPS`); an unknown group is a
    ``ValueError`` naming the groups.

    >>> expand_groups(["gcc", "@loo"])[:3], len(expand_groups(["@pairs"]))
    (['gcc', 'sgcl-no-filter', 'sgcl-no-crop'], 14)
    """
    out = []
    for base in bases:
        if base.startswith("@") and base[1:] not in PRESET_GROUPS:
            raise ValueError(f"unknown preset group {base!r}; groups: {', '.join('@' + g for g in PRESET_GROUPS)}")
        out += PRESET_GROUPS[base[1:]] if base.startswith("@") else [base]
    return out


def derived_method(base: str, like: str, *settings: str) -> str:
    """The canonical name of preset ``base`` with the bracketed settings of method ``like`` that ``base`` reads
    (e.g. the tables' c for a method with SGCL's filter, nothing for one without), then ``settings`` (``name=value``):
    how a sweep names the variants of its chosen ``sgcl`` without editing strings.

    >>> derived_method("sgcl-no-crop", "sgcl[c=0.4]"), derived_method("sgcl-no-filter", "sgcl[c=0.4]")
    ('sgcl-no-crop[c=0.4]', 'sgcl-no-filter')
    >>> derived_method("sgcl", "sgcl[c=0.4]", "crop=random")
    'sgcl[c=0.4,crop=random]'
    """
    spec = MethodSpec.parse(base)
    reads = settings_read(spec.preset)
    inherited = {name: value for name, value in MethodSpec.parse(like).settings
                 if reads.get(VARIANT_SETTINGS[name][1], True)}
    extra = MethodSpec.parse(f"{spec.preset}[{','.join(settings)}]").values if settings else {}
    return str(MethodSpec.of(spec.preset, {**inherited, **spec.values, **extra}))


def joined_name(method: str) -> str:
    """The method label of ``method``'s embedding joined to the structural vector."""
    return str(MethodSpec.parse(method).join(STRUCTURAL))


@dataclasses.dataclass
class Sweep(SweepConfig):
    """A :class:`~gcc_sgcl.experiments.settings.SweepConfig` and what follows from it: the jobs, their pre-training
    configurations, the budget that identifies their rows and the evaluation protocol.

    Every ``reuse`` folder must hold a checkpoint when the sweep starts (a FileNotFoundError names the first that
    does not); :meth:`carried` is what is left of them while it runs."""

    def __post_init__(self) -> None:
        super().__post_init__()
        missing = self._without_checkpoint()
        if missing:
            raise FileNotFoundError(f"--reuse {missing[0]}: no {CHECKPOINT_NAME} there"
                                    + (f" (nor in {len(missing) - 1} more)" if len(missing) > 1 else ""))

    def _without_checkpoint(self) -> list[str]:
        return [folder for folder in self.reuse if not (Path(folder) / CHECKPOINT_NAME).is_file()]

    def carried(self) -> list[str]:
        """The ``reuse`` folders that still hold a checkpoint. One removed after the start (e.g. a stash replacing
        ``saved/carry`` beside a running sweep) is skipped with a warning: its state was carried in, or its
        rows are stored, so the sweep goes on without it."""
        gone = self._without_checkpoint()
        for folder in gone:
            warnings.warn(f"--reuse {folder} has no {CHECKPOINT_NAME} any more (removed since the sweep started); "
                          f"skipping it", RuntimeWarning, stacklevel=2)
        return [folder for folder in self.reuse if folder not in gone]

    def encoder_config(self, method: str, mode: str, seed: int) -> Config:
        """The pre-training configuration of one (method, mode, seed); runs of a budget live in
        ``<output_dir>/<steps>x<batch_size>``, so the budgets of a learning curve do not share folders."""
        train: dict[str, Any] = {
            "mode": mode, "steps": self.steps, "batch_size": self.batch_size, "seed": seed,
            "corpus": list(self.corpus), "output_dir": str(Path(self.output_dir) / f"{self.steps}x{self.batch_size}"),
            "num_workers": self.num_workers, "data_dir": self.data_dir or "",
            "save_freq": self.save_freq, "device": self.device, "flush_denormal": self.flush_denormal,
        }
        if mode == "moco":
            train["nce_k"] = self.moco_queue
        return make_config(method, {"train": train})

    def jobs(self) -> list[Job]:
        """Every (method, mode, seed), seed by seed: every method's first seed comes before any second seed, so a
        sweep cut off part-way (across sessions) leaves every row of a table with as many seeds as it could.
        Training-free methods get the single mode ``none``, pre-trained ones are named canonically
        (:func:`~gcc_sgcl.presets.canonical_name`: ``sgcl`` is ``sgcl[c=0.4]``), each once."""
        named = dict.fromkeys((method, (CLASSICAL_MODE,)) if is_classical(method) else (canonical_name(method),
                                                                                          tuple(self.modes))
                              for method in self.methods)
        return [(name, mode, seed) for seed in self.seeds for name, modes in named for mode in modes]

    def budget(self, mode: str | None = None) -> dict[str, Any]:
        """The fields that make two rows of the same (method, mode, seed, dataset) comparable; a pre-trained
        ``mode``'s frozen rows also name the inference views averaged per row (``copies``)."""
        return {"steps": self.steps, "batch_size": self.batch_size, "corpus": "+".join(self.corpus),
                "repeats": self.repeats, "folds": self.folds, "eval_seed": self.eval_seed, "svc": self.svc,
                **({"copies": self.copies} if mode not in (None, CLASSICAL_MODE) else {})}

    def ship_folder(self, cfg: Config) -> Path | None:
        """Where :func:`~gcc_sgcl.experiments.encoders.ship` exports ``cfg``'s encoder (None without ``ship``):
        ``<ship>/<method>_<mode>_<tag>_<steps>x<batch>_s<seed>``, the method's brackets written as
        :meth:`~gcc_sgcl.config.Config.run_dir_name` writes them (``sgcl[c=0.4]`` → ``sgcl-c=0.4``)."""
        if self.ship is None:
            return None
        tag = self.ship_tag or "+".join(Path(c).name for c in self.corpus)
        return Path(self.ship) / f"{MethodSpec.parse(cfg.method).slug}_{cfg.train.mode}_{tag}_{self.steps}x{self.batch_size}_s{cfg.train.seed}"

    def protocol(self, label: str, mode: str, seed: int) -> EvalConfig:
        """How every encoder of the sweep is evaluated; the fold predictions of the rows of (``label``, ``mode``,
        ``seed``) are kept in ``<fold_cache>/<label>-<mode>-s<seed>-<steps>x<batch_size>/<dataset>`` (default
        ``fold_cache``: ``<output_dir>/folds``) until every fold is in, so a sweep killed mid-evaluation resumes
        there (:mod:`gcc_sgcl.tasks.folds`)."""
        root = cache_folder(self.fold_cache or Path(self.output_dir) / "folds",
                            f"{label}-{mode}-s{seed}-{self.steps}x{self.batch_size}")
        return EvalConfig(folds=self.folds, repeats=self.repeats, seed=self.eval_seed, svc=self.svc,
                          jobs=self.eval_jobs, fold_cache=str(root))


def is_classical(method: str) -> bool:
    """Whether ``method`` is a training-free embedding of :mod:`gcc_sgcl.classical`."""
    return method in METHODS


def applicable(method: str, mode: str, dataset: str) -> bool:
    """Whether (method, dataset) can be evaluated: node-level training-free methods skip graph datasets, graph-level
    ones node and similarity datasets."""
    if mode != CLASSICAL_MODE:
        return True
    return METHODS[method].covers(KINDS[dataset_kind(dataset)].per_graph)


def budget_key(budget: dict[str, Any]) -> tuple:
    """The budget part of :attr:`ResultRow.key` (every identifying field after method, mode, seed, dataset, task)."""
    return tuple(budget.get(f) for f in ResultRow.KEY[5:])


def load_present(datasets: list[str], data_dir: str | None) -> dict[str, Any]:
    """Each dataset whose files are under the data root, loaded once; the others are reported on stderr and
    dropped (an unknown name still raises)."""
    from gcc_sgcl.data import DatasetNotFoundError, load_any

    found = {}
    for name in datasets:
        try:
            found[name] = load_any(name, data_dir)
        except DatasetNotFoundError as err:
            print(f"skipping dataset {name}: {err}", file=sys.stderr)
    return found
