"""Seeded experiment sweeps: pre-train, embed and evaluate every (method, mode, seed) on every dataset.

``python -m gcc_sgcl.experiments run --methods gcc sgcl --seeds 0 1 2 --modes e2e moco --corpus ca-hepth
--datasets usa_airport imdb-binary kdd_icdm`` (``scripts/reproduce.sh`` runs the whole recorded sweep).

Results are rows of a JSON-lines store (one row per metric): method, mode, seed, dataset, task, metric, the
per-repetition scores and their summary, the per-λ2-quintile accuracy of classification tasks, the full
configuration and the git commit. A combination whose rows are already in the store is skipped and a finished
pre-training run is reused (an unfinished one resumes from its checkpoint), so an interrupted sweep picks up
where it stopped. Views of the downstream datasets do not depend on the encoder; they are built once and
cached (:func:`gcc_sgcl.engine.generate.cached_views`). Every encoder is evaluated on the same CV splits
(``eval_seed``), so methods are compared on identical folds.

Methods are any ``pretrain.sh`` preset (with bracketed settings, ``sgcl[c=0.35]``, ``sgcl[k=64]``), or a
training-free method of :mod:`gcc_sgcl.classical` (mode ``none``: the embedding is computed on the downstream
graph itself). With ``--with-structural`` every pre-trained encoder is also evaluated on its embedding joined to
the training-free structural vector (:func:`joined`), in rows of method ``"<method> ⊕ structural"``.
"""
from __future__ import annotations

import subprocess
import sys
import time
import dataclasses
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from tqdm import tqdm

from gcc_sgcl.config import (Config, EvalConfig, FinetuneConfig, RuntimeConfig, SweepConfig, canonical_method,
                             default_of, method_slug)
from gcc_sgcl.classical import STRUCTURAL, joined
from gcc_sgcl.data import KINDS, dataset_kind
from gcc_sgcl.engine.checkpoint import CHECKPOINT_NAME, load_checkpoint
from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow, RowStore
from gcc_sgcl.fileio import copy_atomic
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.connectivity import lambda2
from gcc_sgcl.tasks.common import TaskResult
from gcc_sgcl.tasks.folds import cache_folder
from gcc_sgcl.tasks.registry import TASKS

QUINTILES = 5


def joined_name(method: str) -> str:
    """The method label of ``method``'s embedding joined to the structural vector."""
    return f"{method} ⊕ {STRUCTURAL}"


@dataclasses.dataclass
class Sweep(SweepConfig):
    """A :class:`~gcc_sgcl.config.SweepConfig` and what follows from it: the jobs, their pre-training
    configurations, the budget that identifies their rows and the evaluation protocol.

    Every ``reuse`` folder must hold a checkpoint when the sweep starts (a FileNotFoundError names the first that
    does not); :meth:`carried` is what is left of them while it runs."""

    def __post_init__(self) -> None:
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
            "save_freq": self.save_freq, "device": self.device,
        }
        if mode == "moco":
            train["nce_k"] = self.moco_queue
        return make_config(method, {"train": train})

    def jobs(self) -> list[tuple[str, str, int]]:
        """Every (method, mode, seed), seed by seed: every method's first seed comes before any second seed, so a
        sweep cut off part-way (across sessions) leaves every row of a table with as many seeds as it could.
        Training-free methods get the single mode ``none``, pre-trained ones are named canonically
        (:func:`~gcc_sgcl.presets.canonical_method`)."""
        named = [(method, [CLASSICAL_MODE]) if is_classical(method) else (canonical_method(method), self.modes)
                 for method in self.methods]
        return [(name, mode, seed) for seed in self.seeds for name, modes in named for mode in modes]

    def budget(self, mode: str | None = None) -> dict[str, Any]:
        """The fields that make two rows of the same (method, mode, seed, dataset) comparable; a pre-trained
        ``mode``'s frozen rows also name the inference views averaged per row (``copies``)."""
        return {"steps": self.steps, "batch_size": self.batch_size, "corpus": "+".join(self.corpus),
                "repeats": self.repeats, "folds": self.folds, "eval_seed": self.eval_seed, "svc": self.svc,
                **({"copies": self.copies} if mode not in (None, CLASSICAL_MODE) else {})}

    def ship_folder(self, cfg: Config) -> Path | None:
        """Where :func:`ship` exports ``cfg``'s encoder (None without ``ship``):
        ``<ship>/<method>_<mode>_<tag>_<steps>x<batch>_s<seed>``, the method's brackets written as
        :meth:`~gcc_sgcl.config.Config.run_dir_name` writes them (``sgcl[c=0.4]`` → ``sgcl-c=0.4``)."""
        if self.ship is None:
            return None
        tag = self.ship_tag or "+".join(Path(c).name for c in self.corpus)
        return Path(self.ship) / f"{method_slug(cfg.method)}_{cfg.train.mode}_{tag}_{self.steps}x{self.batch_size}_s{cfg.train.seed}"

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
    from gcc_sgcl.classical import METHODS

    return method in METHODS


def applicable(method: str, mode: str, dataset: str) -> bool:
    """Whether (method, dataset) can be evaluated: node-level training-free methods skip graph datasets."""
    if mode != CLASSICAL_MODE:
        return True
    from gcc_sgcl.classical import METHODS

    return not KINDS[dataset_kind(dataset)].per_graph or METHODS[method].graphs is not None


def git_commit(root: str | Path | None = None) -> str:
    """``HEAD``'s hash of the repository holding ``root`` (default: the folder holding this package), with
    ``-dirty`` if tracked files outside its top-level ``docs/`` changed: the sweep writes its rows, tables and
    figures there while it runs, which says nothing about the code that produced them."""
    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":/",
                                ":(top,exclude)docs"], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def quintile_scores(lam: np.ndarray, correct: np.ndarray) -> tuple[list[float], list[list[float]]]:
    """Mean out-of-fold correctness in each rank quintile of ``lam`` (ties broken by position) and each
    quintile's λ2 range. ``correct`` is (repetitions, examples)."""
    per_example = np.asarray(correct, dtype=np.float64).mean(axis=0)
    parts = np.array_split(np.argsort(np.nan_to_num(lam, nan=-1.0), kind="stable"), QUINTILES)
    scores = [float(per_example[p].mean()) for p in parts]
    bounds = [[float(np.nanmin(lam[p])), float(np.nanmax(lam[p]))] if np.isfinite(lam[p]).any() else [np.nan] * 2
              for p in parts]
    return scores, bounds


def evaluate_dataset(name: str, data: Any, emb: np.ndarray, lam: np.ndarray | None,
                     protocol: EvalConfig) -> list[tuple[TaskResult, dict[str, Any]]]:
    """The task of dataset ``name`` (loaded as ``data``; :data:`gcc_sgcl.tasks.registry.TASKS`) on ``emb``: each
    metric's result, with the accuracy of each λ2 quintile of the examples for classification (``lam``: the λ2
    of each example's view) as extra row fields."""
    fields = []
    for result in TASKS[dataset_kind(name)].evaluate(emb, data, name, protocol):
        extra: dict[str, Any] = {}
        if result.correct is not None and lam is not None:
            scores, bounds = quintile_scores(lam, result.correct)
            extra = {"lambda2_quintiles": scores, "lambda2_bounds": bounds}
        fields.append((result, extra))
    return fields


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


def ensure_pretrained(cfg: Config, exported: Sequence[str | Path] = ()) -> float | None:
    """Pre-train ``cfg`` unless its run already finished or one of the ``exported`` encoders is that run; a carried
    state further along than the run folder's is copied in first and resumed (:func:`reuse_exported`). Returns its
    pre-training seconds: every segment's, when a resumed run's checkpoint counts them (``train_seconds``), else
    this call's (None if reused or finished before)."""
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
    pretrain(cfg, resume=ckpt.exists(), progress=False)
    total = load_checkpoint(ckpt).get("train_seconds")
    return time.time() - start if total is None else total


def ship(sweep: Sweep, cfg: Config) -> Path | None:
    """Export ``cfg``'s finished encoder to :meth:`Sweep.ship_folder` unless that folder holds it already (same
    training, same step); the folder, or None without ``ship``. An exported folder of another training is
    replaced: the name says which training it holds, so it was written by an older sweep of that name."""
    from gcc_sgcl.engine.checkpoint import export_encoder

    dest = sweep.ship_folder(cfg)
    if dest is None:
        return None
    if (dest / CHECKPOINT_NAME).is_file():
        state = load_checkpoint(dest / CHECKPOINT_NAME)
        if int(state["step"]) == cfg.train.steps and same_training(Config.from_dict(state["config"]), cfg):
            return dest
    return export_encoder(run_folder(cfg), dest)


def stash(sweep: Sweep, jobs: Iterable[Job], dest: str | Path) -> list[Path]:
    """Write the encoder state of each pre-trained job of ``jobs`` that has one (in its run folder or among the
    sweep's ``reuse`` folders, whichever is further along) to ``dest/<steps>x<batch>/<run folder name>``: a
    finished encoder as exported weights (:func:`~gcc_sgcl.engine.checkpoint.export_encoder`), an unfinished one
    as its whole training state. Passed to ``--reuse`` on another machine, each is used or resumed there, so a
    sweep's progress outlives a machine that does not keep ``saved/``. Returns the folders written."""
    from gcc_sgcl.engine.checkpoint import export_encoder

    written = []
    for method, mode, seed in jobs:
        cfg = None if mode == CLASSICAL_MODE else sweep.encoder_config(method, mode, seed)
        if cfg is None or cfg.train.steps == 0:
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
    cfg = sweep.encoder_config(canonical_method(method), mode, seed)
    dest = dest if dest is not None else sweep.ship_folder(cfg)
    if dest is None:
        raise ValueError("export: give --to or --ship (where to write the encoder)")
    ensure_pretrained(cfg, sweep.carried())
    return export_encoder(run_folder(cfg), dest)


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


def _budget_key(budget: dict[str, Any]) -> tuple:
    """The budget part of :attr:`ResultRow.key` (every identifying field after method, mode, seed, dataset, task)."""
    return tuple(budget.get(f) for f in ResultRow.KEY[5:])


Job = tuple[str, str, int]  # (method, mode, seed)


def pending(sweep: Sweep, store: RowStore, datasets: Iterable[str]) -> list[tuple[Job, dict[str, list[str]]]]:
    """Each (method, mode, seed) of ``sweep`` with, per dataset of ``datasets`` it applies to, the row labels not
    yet in ``store`` at the sweep's budget: the method, and with ``with_structural`` its join
    (:func:`joined_name`)."""
    budgets = {mode: _budget_key(sweep.budget(mode)) for mode in {*sweep.modes, CLASSICAL_MODE}}
    done = {k[:4] for k in store.keys() if k[5:] == budgets.get(k[1])}

    def labels(method: str, mode: str) -> list[str]:
        joins = sweep.with_structural and mode != CLASSICAL_MODE
        return [method, joined_name(method)] if joins else [method]

    return [(job, {n: missing for n in datasets if applicable(*job[:2], n)
                   if (missing := [m for m in labels(*job[:2]) if (m, *job[1:], n) not in done])})
            for job in sweep.jobs()]


# Whether to start a job now, given the rows it would add (dataset → row labels); e.g. a deadline's
# (:class:`gcc_sgcl.experiments.plan.Deadline`). A job it refuses is left for a later run.
Admission = Callable[[Job, dict[str, list[str]]], bool]


def run_sweep(sweep: Sweep, progress: bool = True, admit: Admission | None = None) -> list[ResultRow]:
    """Run every missing (method, mode, seed, dataset) of ``sweep`` (the jobs ``admit`` accepts, when given);
    returns the rows it added.

    Each dataset is loaded and its views (and their λ2) built once for the whole sweep; each encoder is
    pre-trained (if needed) and loaded once for all its datasets.
    """
    from gcc_sgcl.classical import embed_dataset
    from gcc_sgcl.engine.generate import cached_views, embed_parts, load_encoder

    store = RowStore(sweep.rows)
    commit = git_commit()
    data = load_present(sweep.datasets, sweep.data_dir)
    default_sampling = make_config("gcc").sampling  # the views of training-free rows' λ2
    default_copies = default_of(SweepConfig, "copies")
    views_of: dict[tuple[str, str], list[list[ViewBatch]]] = {}  # (dataset, sampling settings) → views
    lambda2_of: dict[str, np.ndarray] = {}
    structural_of: dict[str, np.ndarray] = {}
    todo = pending(sweep, store, data)
    added: list[ResultRow] = []
    bar = tqdm(total=sum(len(names) for _, names in todo), desc="sweep", unit="eval", disable=not progress)
    for (method, mode, seed), names in todo:
        if not names:
            continue
        if admit is not None and not admit((method, mode, seed), names):
            bar.total -= len(names)
            bar.refresh()
            continue
        classical = mode == CLASSICAL_MODE
        cfg = None if classical else sweep.encoder_config(method, mode, seed)
        bar.set_postfix_str(f"{method} {mode} s{seed} pre-training")
        pretrain_s = None if classical else ensure_pretrained(cfg, sweep.carried())
        if not classical:
            ship(sweep, cfg)
        model = None if classical else load_encoder(run_folder(cfg), sweep.device)[0]
        for name, missing in names.items():
            bar.set_postfix_str(f"{method} {mode} s{seed} {name}")
            sampling = default_sampling if cfg is None else cfg.sampling
            copies = default_copies if classical else sweep.copies
            key = (name, repr(sampling), copies)  # views depend on the sampling settings (e.g. k), not the encoder
            if key not in views_of:
                views_of[key] = cached_views(name, sampling, sweep.data_dir, 0, sweep.num_workers, progress=False,
                                             copies=copies, data=data[name])
            if name not in lambda2_of:
                lambda2_of[name] = lambda2(views_of[key][0][0])
            start = time.time()
            if classical:
                emb = embed_dataset(method, name, sweep.data_dir, seed=seed)
                config: dict[str, Any] = {"classical": method, "seed": seed}
            else:
                emb = embed_parts(model, views_of[key], 256, name, progress=False)
                config = cfg.to_dict()
            for label in missing:
                features = emb
                if label != method:
                    if name not in structural_of:
                        structural_of[name] = embed_dataset(STRUCTURAL, name, sweep.data_dir)
                    features = joined(emb, structural_of[name])
                results = evaluate_dataset(name, data[name], features, lambda2_of[name],
                                           sweep.protocol(label, mode, seed))
                resumed = max((result.resumed_seconds for result, _ in results), default=0.0)
                seconds, now = time.time() - start + resumed, datetime.now().isoformat(timespec="seconds")
                rows = [ResultRow.from_result(
                    result, **extra, **sweep.budget(mode), method=label, mode=mode, seed=seed, config=config, commit=commit,
                    time=now, pretrain_seconds=pretrain_s, eval_seconds=seconds, columns=int(features.shape[1]),
                ) for result, extra in results]
                store.append(rows)
                added += rows
                pretrain_s = None  # counted once, on the encoder's first row
                start = time.time()
            bar.update(1)
    bar.close()
    return added


def run_runtime(settings: RuntimeConfig, rows: str, data_dir: str | None = None) -> list[ResultRow]:
    """Seconds per mini-batch of each method, measured in one run (:mod:`gcc_sgcl.experiments.runtime`),
    stored as rows of task ``runtime`` (replacing earlier runtime rows of the same corpus)."""
    from gcc_sgcl.experiments.runtime import measure

    start = time.time()
    r = settings
    measured = measure(r.methods, r.corpus, r.batch_size, r.batches, data_dir, r.seed)
    commit = git_commit()
    now = datetime.now().isoformat(timespec="seconds")
    name = "+".join(r.corpus)
    new = [ResultRow(
        method=m, mode="e2e", seed=r.seed, dataset=name, task="runtime", metric=metric, mean=value, std=0.0,
        std_kind=f"mean over {r.batches} mini-batches", n=r.batches,
        protocol=f"batch {r.batch_size}, methods alternate batch by batch in one process, one thread",
        corpus=name, batch_size=r.batch_size, config=make_config(m).to_dict(), commit=commit, time=now,
        eval_seconds=time.time() - start,
    ) for m, result in measured.items() for metric, value in result.items()]
    RowStore(rows).replace(lambda r: r.task == "runtime" and r.dataset == name, new)
    return new


def finetune_budget(sweep: Sweep, ft: FinetuneConfig) -> dict[str, Any]:
    """The budget fields of fine-tuned rows: the sweep's, one CV repetition, the fine-tuning epochs, the folds run
    (``None``: all of them) and the view copies used (at most one per epoch)."""
    return {**sweep.budget(), "repeats": 1, "epochs": ft.epochs,
            "max_folds": None if ft.max_folds in (None, sweep.folds) else ft.max_folds,
            "view_copies": min(ft.view_copies, ft.epochs)}


def pending_finetune(sweep: Sweep, ft: FinetuneConfig, store: RowStore, datasets: Iterable[str]
                     ) -> list[tuple[Job, str]]:
    """Each (pre-trained job, labelled dataset of ``datasets``) whose fine-tuned row is not in ``store``."""
    budget = _budget_key(finetune_budget(sweep, ft))
    done = {k[:4] for k in store.keys() if str(k[4]).endswith("_finetuned") and k[5:] == budget}
    labelled = [n for n in datasets if KINDS[dataset_kind(n)].labelled]
    return [(job, name) for job in sweep.jobs() if job[1] != CLASSICAL_MODE for name in labelled
            if (*job, name) not in done]


def run_finetune(sweep: Sweep, settings: FinetuneConfig | None = None, progress: bool = True,
                 admit: Admission | None = None) -> list[ResultRow]:
    """Fine-tune every pre-trained (method, mode, seed) of ``sweep`` on each classification dataset
    (:mod:`gcc_sgcl.tasks.finetune`, with ``settings``' epochs, batch, schedule and ``max_folds``; folds, seed and
    processes are the sweep's ``folds``, ``eval_seed`` and ``eval_jobs``); rows of task ``*_finetuned``, skipped
    when already stored at this budget; with ``admit``, only the (job, dataset) units it accepts."""
    from gcc_sgcl.tasks.finetune import finetune

    ft = dataclasses.replace(settings or FinetuneConfig(), folds=sweep.folds, seed=sweep.eval_seed, progress=False,
                             jobs=sweep.eval_jobs)
    store = RowStore(sweep.rows)
    budget = finetune_budget(sweep, ft)
    commit = git_commit()
    units = pending_finetune(sweep, ft, store, load_present(sweep.datasets, sweep.data_dir))
    added = []
    bar = tqdm(units, desc="fine-tune", unit="run", disable=not progress)
    for (method, mode, seed), name in bar:
        if admit is not None and not admit((method, mode, seed), {name: [method]}):
            continue
        bar.set_postfix_str(f"{method} {mode} s{seed} {name}")
        cfg = sweep.encoder_config(method, mode, seed)
        pretrain_s = ensure_pretrained(cfg, sweep.carried())
        ship(sweep, cfg)
        start = time.time()
        result = finetune(run_folder(cfg), name, ft, sweep.device, sweep.data_dir)
        row = ResultRow.from_result(result, **budget, method=method, mode=mode, seed=seed, config=cfg.to_dict(),
                                    commit=commit, time=datetime.now().isoformat(timespec="seconds"),
                                    pretrain_seconds=pretrain_s,
                                    eval_seconds=time.time() - start + result.resumed_seconds)
        store.append([row])
        added.append(row)
    return added
