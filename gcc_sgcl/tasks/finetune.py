"""Fine-tune a pre-trained encoder end to end on downstream labels (the paper's "fine-tuned" block).

``python -m gcc_sgcl.tasks.finetune --load-path saved/RUN --dataset imdb-binary`` (settings:
:class:`~gcc_sgcl.tasks.finetune.FinetuneConfig`); wrapped by
``scripts/finetune.sh <load_path> <gpu> <dataset...> [flags]``. Each fold of a stratified k-fold CV starts
from the pre-trained query encoder plus a fresh linear head, trains both with Adam (lr 0.005, 3 epochs of
linear warm-up and 3 of linear ramp-down, as the paper's appendix) and a cross-entropy loss for 30 epochs of
batch 32 (GCC's ``finetune.sh``), and is scored on its test fold after the last epoch: micro-F1 for node
datasets (RWR views of the nodes, GCC's labelled subgraphs), accuracy for graph datasets (each whole graph as
one view). As GCC samples a new view of an example each time, each epoch trains on another copy of the views
(``--view-copies``: new walks for nodes, new eigenvector signs for graphs); the test fold is scored on the first.
Folds run side by side with ``--jobs``; finished folds are kept in ``<load_path>/finetune-folds/`` (or
``--fold-cache``) until all are in, so a run killed part-way resumes at its missing folds. The result is printed
and appended to ``<load_path>/results.csv`` as task ``node_classification_finetuned`` /
``graph_classification_finetuned``.
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import dgl
import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from gcc_sgcl.cli import PlainHelpParser, check_writable_dir, user_errors
from gcc_sgcl.config import Config, InputConfig
from gcc_sgcl.data.load import check_dataset_names, dataset_name
from gcc_sgcl.engine.inference import embed
from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
from gcc_sgcl.engine.views import ViewOptions, cached_views
from gcc_sgcl.engine.threads import processes_line
from gcc_sgcl.fileio import folder_of
from gcc_sgcl.models import GraphEncoder, to_model_input
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.dataset import copy_keys, limit_threads
from gcc_sgcl.sampling.induced import flip_signs, sign_draws
from gcc_sgcl.settings import (
    NON_NEGATIVE, POSITIVE, SEED32, Settings, add_arguments, at_least, default_of, from_args, setting,
)
from gcc_sgcl.tasks.cv import class_labels, cv_jobs, fold_predictions, forked_jobs, repeated_stratified_folds
from gcc_sgcl.tasks.folds import cache_folder, cache_meta
from gcc_sgcl.tasks.records import RESULTS_FILE, TaskResult, append_results_csv, check_results_csv
from gcc_sgcl.tasks.registry import FINETUNED_KINDS, TASKS
from gcc_sgcl.tasks.settings import EvalConfig


@dataclass
class FinetuneConfig(Settings):
    """Fine-tuning on downstream labels: Adam with linear warm-up and ramp-down (the paper's appendix), stratified
    k-fold CV scored after the last epoch."""

    folds: int = setting(default_of(EvalConfig, "folds"), "stratified CV folds", valid=at_least(2))
    max_folds: int | None = setting(None, "run only the first N folds (budget)", valid=at_least(1))
    epochs: int = setting(30, "epochs per fold (GCC's 30)", valid=at_least(1))
    batch_size: int = setting(32, "views per optimisation step (GCC's 32)", valid=at_least(1))
    view_copies: int = setting(30, "independently sampled views of every example, epoch e training on copy e mod "
                                   "N (GCC samples a fresh view per example and epoch: N = epochs)", valid=at_least(1))
    jobs: int = setting(1, "processes fine-tuning folds side by side (0: every available core)", valid=NON_NEGATIVE)
    lr: float = setting(0.005, "peak learning rate", valid=POSITIVE)
    warmup_epochs: int = setting(3, "epochs of linear warm-up", valid=NON_NEGATIVE)
    rampdown_epochs: int = setting(3, "epochs of linear ramp-down", valid=NON_NEGATIVE)
    seed: int = setting(default_of(EvalConfig, "seed"), "seed of the CV splits, views, head init, dropout, "
                                                        "batches", valid=SEED32)
    fold_cache: str | None = setting(None, "folder keeping each finished fold's test predictions until all are in "
                                           "(a sub-folder per dataset and settings), so a fine-tuning killed part-way "
                                           "resumes at its missing folds (default: <load-path>/finetune-folds)")
    progress: bool = setting(True, "show progress bars")

    def check_together(self) -> None:
        if self.max_folds is not None and self.max_folds > self.folds:
            raise ValueError(f"--max-folds must be <= --folds ({self.folds}), got {self.max_folds}")


FOLD_CACHE = "finetune-folds"  # the folder under a run's that keeps a fine-tuning's finished folds while it runs
VERSION = 1  # raise when fine-tuning changes in a way its settings do not show (stored folds are then refitted)


def finetune_lr(
    step: int, steps_per_epoch: int, epochs: int, lr: float,
    warmup_epochs: int = default_of(FinetuneConfig, "warmup_epochs"),
    rampdown_epochs: int = default_of(FinetuneConfig, "rampdown_epochs"),
) -> float:
    """Learning rate of optimisation step ``step`` (0-based) out of ``epochs * steps_per_epoch``.

    Linear warm-up from 0 to ``lr`` over the first ``warmup_epochs`` epochs (reached on their last step),
    flat, then linear ramp-down to 0 over the last ``rampdown_epochs`` (the last step has ``lr`` divided by
    the ramp's length). The schedule moves every step. When warm-up and ramp-down overlap (few epochs)
    the smaller of the two applies.

    >>> [round(finetune_lr(s, 1, 8, 0.006), 4) for s in range(8)]
    [0.002, 0.004, 0.006, 0.006, 0.006, 0.006, 0.004, 0.002]
    """
    total = epochs * steps_per_epoch
    if not 0 <= step < total:
        raise ValueError(f"step must be in [0, {total}) for {epochs} epochs of {steps_per_epoch} steps, got {step}")
    warmup, rampdown = warmup_epochs * steps_per_epoch, rampdown_epochs * steps_per_epoch
    up = (step + 1) / warmup if warmup else 1.0
    down = (total - step) / rampdown if rampdown else 1.0
    return lr * min(1.0, up, down)


class Classifier(nn.Module):
    """The encoder followed by a linear head on its ``hidden``-dimensional graph embedding."""

    def __init__(self, encoder: GraphEncoder, hidden: int, n_classes: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, g: dgl.DGLGraph) -> torch.Tensor:
        """(batch_size, n_classes) logits of the batched views ``g``."""
        return self.head(self.encoder(g))


def labelled_kind(name: str) -> str:
    """``"node"`` or ``"graph"``: the kind of dataset ``name``; other kinds have no labels to fine-tune on."""
    from gcc_sgcl.data import dataset_kind

    kind = dataset_kind(name)
    if kind not in FINETUNED_KINDS:
        raise ValueError(f"dataset {name!r} is a {kind} dataset; fine-tuning needs labels (a node or graph dataset)")
    return kind


class SignCopies(Sequence[ViewBatch]):
    """``copies`` copies of the whole-graph views ``views`` (copy 0 of ``seed``, as ``GraphViewDataset`` builds
    them): copy ``c`` equals ``GraphViewDataset``'s copy ``c``, whose views differ only in their eigenvector
    signs, by flipping those of copy 0 (:func:`~gcc_sgcl.sampling.induced.flip_signs`) instead of decomposing
    again. The flips are drawn once, here (one ``(B, k)`` array of ±1 per copy after the first, shared
    copy-on-write by forked folds); asking for a copy costs one multiplication. Canonical-sign views have one copy
    (all would be equal)."""

    def __init__(self, views: ViewBatch, copies: int, seed: int) -> None:
        self.views = views
        self.copies = 1 if views.pe_sign == "canonical" else copies
        items = np.arange(len(views))
        draws = [sign_draws(views.pe_sign, copy_keys(seed, items, c), views.k) for c in range(self.copies)]
        self.flips = [(draws[0] * other).astype(np.int8) for other in draws[1:]]

    def __len__(self) -> int:
        return self.copies

    def __getitem__(self, c: int) -> ViewBatch:
        if not 0 <= c < self.copies:
            raise IndexError(f"copy {c} of {self.copies}")
        return self.views if c == 0 else flip_signs(self.views, self.flips[c - 1])


def build_views(
    name: str, data_dir: str | None, cfg: Config, seed: int, progress: bool = True, copies: int = 1
) -> tuple[Sequence[ViewBatch], np.ndarray, str]:
    """``(views, labels, kind)`` of a node or graph dataset: ``copies`` view sets.

    Node datasets give one RWR view per node and copy (independent walks seeded by ``seed``, as ``generate``),
    each built once (the eigendecompositions) and held in memory; graph datasets one view per whole graph,
    decomposed once, its copies redrawing the eigenvector signs (:class:`SignCopies`: GCC draws new signs for
    every sample). The views follow ``cfg.sampling``, the encoder's pre-training settings. Sets torch and BLAS to
    one thread (``limit_threads``), as pre-training and ``generate`` do.
    """
    from gcc_sgcl.data import load_graph_dataset, load_node_dataset

    kind = labelled_kind(name)
    data = load_node_dataset(name, data_dir) if kind == "node" else load_graph_dataset(name, data_dir)
    labelled = int((np.asarray(data.labels) >= 0).sum())
    if labelled < len(data.labels):
        items = "nodes" if kind == "node" else "graphs"
        raise ValueError(f"{name}: fine-tuning needs every one of its {len(data.labels)} {items} labelled, "
                         f"{labelled} are (a graph file given by path carries no labels; the frozen "
                         f"{kind}_classification task takes --labels)")
    limit_threads()
    built = 1 if kind == "graph" else copies
    (views,) = cached_views(name, ViewOptions(cfg.sampling, seed, built), data_dir, data=data, progress=progress)
    return SignCopies(views[0], copies, seed) if kind == "graph" else views, class_labels(data.labels), kind


def _batches(indices: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """``ceil(n / batch_size)`` near-equal consecutive batches (no singleton tail for batch norm)."""
    return np.array_split(indices, math.ceil(len(indices) / batch_size))


def finetune_fold(
    encoder: GraphEncoder,
    cfg: Config,
    views: Sequence[ViewBatch],
    targets: np.ndarray,
    train_idx: np.ndarray,
    ft: FinetuneConfig,
    fold: int = 0,
) -> Classifier:
    """A deep copy of ``encoder`` plus a fresh linear head, both trained on the ``train_idx`` examples, epoch
    ``e`` on their views in ``views[e % len(views)]`` (a fresh view each epoch when there are as many copies as
    epochs, as GCC's fine-tuning samples one per example and epoch).

    ``targets`` are the class indices ``0..C-1`` of all ``views``; the loss is cross-entropy. Adam takes
    the pre-training run's betas, eps and weight decay (``cfg.train``) and gradients are clipped to its
    ``clip_norm``; the learning rate follows :func:`finetune_lr` step by step; batches are reshuffled each
    epoch; ``ft`` gives epochs, batch size and schedule. Head initialisation, dropout and batch order
    derive from ``(ft.seed, fold)`` alone (the global torch RNG is forked, not consumed); ``encoder`` itself
    is left untouched.
    """
    device = next(encoder.parameters()).device
    rng = np.random.default_rng([ft.seed, fold])
    steps_per_epoch = math.ceil(len(train_idx) / ft.batch_size)
    y = torch.as_tensor(targets, dtype=torch.int64, device=device)
    t = cfg.train
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(int(rng.integers(2**63)))
        model = Classifier(copy.deepcopy(encoder), cfg.model.hidden_size, int(targets.max()) + 1).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=ft.lr, betas=(t.beta1, t.beta2), eps=t.eps,
                                     weight_decay=t.weight_decay)
        model.train()
        step = 0
        for epoch in tqdm(range(ft.epochs), desc=f"fold {fold}", disable=not ft.progress, unit="epoch",
                          leave=False):
            epoch_views = views[epoch % len(views)]
            for batch in _batches(rng.permutation(train_idx), ft.batch_size):
                logits = model(to_model_input(epoch_views.select(batch), device))
                loss = nn.functional.cross_entropy(logits, y[torch.from_numpy(batch).to(device)])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), t.clip_norm)
                for group in optimizer.param_groups:
                    group["lr"] = finetune_lr(step, steps_per_epoch, ft.epochs, ft.lr, ft.warmup_epochs,
                                              ft.rampdown_epochs)
                optimizer.step()
                step += 1
    return model


@torch.no_grad()
def predict(model: Classifier, views: ViewBatch, indices: np.ndarray, batch_size: int) -> np.ndarray:
    """Predicted class index of each of ``views[indices]``, in eval mode (running batch-norm statistics, no dropout)."""
    device = next(model.parameters()).device
    model.eval()
    out = [model(to_model_input(views.select(batch), device)).argmax(dim=1).cpu()
           for batch in _batches(np.asarray(indices), batch_size)]
    return torch.cat(out).numpy()


def finetune_cv(
    encoder: GraphEncoder,
    cfg: Config,
    views: Sequence[ViewBatch],
    labels: np.ndarray,
    kind: str,
    dataset: str = "",
    settings: FinetuneConfig | None = None,
    cache: str | Path | None = None,
) -> TaskResult:
    """Stratified ``settings.folds``-fold CV of fine-tuning on pre-built ``views`` (one or more copies of every
    example's view: training cycles through them epoch by epoch, the test fold is scored on the first; see
    :func:`finetune`).

    ``encoder`` (with its configuration ``cfg``) is never modified: each fold trains a deep copy plus a
    fresh ``nn.Linear(hidden, n_classes)`` head. Fold ``f``'s head initialisation, dropout and batch order
    derive from ``(settings.seed, f)`` only, so a fold's score does not depend on the folds run before it nor
    on ``settings.jobs``, the processes fitting folds side by side (:func:`~gcc_sgcl.tasks.cv.forked_map`).
    With a ``cache`` folder, each fold's test predictions are kept in its sub-folder named by the dataset and a
    digest of the settings until every fold is in (:func:`~gcc_sgcl.tasks.cv.fold_predictions`), so a run
    killed part-way resumes at its missing folds, and runs at other settings go side by side. The stored folds
    are reused only for the same settings, training configuration, labels and splits, device kind, torch version
    and :data:`VERSION`, and the same frozen embeddings of the test views (the encoder's weights and the views).
    """
    ft = settings or FinetuneConfig()
    labels = class_labels(labels)
    if kind not in FINETUNED_KINDS:
        raise ValueError(f"kind must be one of {sorted(FINETUNED_KINDS)}, got {kind!r}")
    if not len(views) or len(views[0]) != len(labels):
        raise ValueError(f"{len(views[0]) if len(views) else 0} views but {len(labels)} labels")
    task = TASKS[kind]
    limit_threads()  # as pre-training and generate: batches of small graphs gain little from threads, lose a lot shared
    targets = np.unique(labels, return_inverse=True)[1]
    splits = repeated_stratified_folds(labels, ft.folds, 1, ft.seed)[0][:ft.max_folds]
    device = next(encoder.parameters()).device
    jobs = forked_jobs(ft.jobs, len(splits)) if device.type == "cpu" else 1  # CUDA does not survive a fork
    inner = dataclasses.replace(ft, progress=ft.progress and jobs == 1)  # epoch bars from one process only
    run = f"{len(splits)} folds" if len(splits) == ft.folds else f"the first {len(splits)} of {ft.folds} folds"
    protocol = (
        f"fine-tuned encoder + linear head, cross-entropy, Adam lr={ft.lr:g} with {ft.warmup_epochs}-epoch "
        f"linear warm-up and {ft.rampdown_epochs}-epoch ramp-down, {ft.epochs} epochs, batch {ft.batch_size}, "
        f"{'one fixed view' if len(views) == 1 else f'{len(views)} views cycled over the epochs'} per example, "
        f"stratified {ft.folds}-fold CV ({run} run), scored after the last epoch"
    )
    features = meta = folder = None
    if cache is not None:
        with torch.no_grad():
            features = embed(copy.deepcopy(encoder).eval(), views[0], ft.batch_size, progress=False)
        trained = json.dumps([dataclasses.asdict(cfg.train), dataclasses.asdict(cfg.sampling), device.type,
                              torch.__version__, VERSION], sort_keys=True, default=str)
        meta = cache_meta(labels, [splits], f"{protocol}; {trained}", ft.seed)
        digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()[:12]
        folder = cache_folder(cache, f"{dataset}-{digest}")

    def fold_predict(fold: int) -> np.ndarray:
        train_idx, test_idx = splits[fold]
        model = finetune_fold(encoder, cfg, views, targets, train_idx, inner, fold)
        return predict(model, views[0], test_idx, ft.batch_size)

    fitted = fold_predictions(fold_predict, [len(test) for _, test in splits], jobs, folder, features, meta,
                              f"finetune {dataset}" if ft.progress else None)
    scores = np.array([task.finetuned_score(targets[test], f.predictions) for (_, test), f in zip(splits, fitted)])
    return TaskResult(
        task=task.finetuned,
        dataset=dataset,
        metric=task.finetuned_metric,
        scores=scores,
        mean=float(scores.mean()),
        std=float(scores.std(ddof=1)) if len(scores) > 1 else 0.0,
        std_kind=f"sample std over {run}",
        n=sum(len(test) for _, test in splits),
        protocol=protocol,
        seed=ft.seed,
        resumed_seconds=sum(f.seconds for f in fitted if f.stored) / jobs,
    )


def finetune(
    load_path: str | Path,
    dataset: str,
    settings: FinetuneConfig | None = None,
    device: str = "cpu",
    data_dir: str | None = None,
) -> TaskResult:
    """Fine-tune the query encoder of the run ``load_path`` on ``dataset``'s labels, stratified k-fold CV.

    ``settings`` (default :class:`~gcc_sgcl.tasks.finetune.FinetuneConfig`): its ``seed`` fixes the CV splits, the node
    datasets' RWR views and each fold's head initialisation, dropout and batch order, so on CPU two calls with
    the same arguments give identical scores; ``max_folds`` runs only the first ``max_folds`` of the ``folds``
    splits (a budget-limited estimate; ``std_kind`` and ``protocol`` say so, ``n`` counts the test examples
    actually scored). The checkpoint is only read; while the folds run, their test predictions are kept under
    ``settings.fold_cache`` (default ``<load_path>/finetune-folds``, :data:`FOLD_CACHE`), so a run killed part-way
    resumes at its missing folds when called again with the same arguments; its folder is removed once every fold
    is in.
    """
    ft = settings or FinetuneConfig()
    labelled_kind(dataset)
    encoder, cfg, _ = load_encoder_checkpoint(load_path, device)  # a missing checkpoint fails before the slow views
    views, labels, kind = build_views(dataset, data_dir, cfg, ft.seed, ft.progress, min(ft.view_copies, ft.epochs))
    cache = Path(ft.fold_cache) if ft.fold_cache else folder_of(load_path) / FOLD_CACHE
    return finetune_cv(encoder, cfg, views, labels, kind, dataset_name(dataset), ft, cache)


def command_line() -> argparse.ArgumentParser:
    """The command line: :class:`~gcc_sgcl.config.InputConfig` and :class:`~gcc_sgcl.tasks.finetune.FinetuneConfig`."""
    p = PlainHelpParser(prog="python -m gcc_sgcl.tasks.finetune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p, InputConfig, required=("load_path", "dataset"))
    add_arguments(p, FinetuneConfig)
    return p


def main(argv: list[str] | None = None) -> list[TaskResult]:
    """Command-line entry point: fine-tune on each dataset, print a table line and log it to results.csv."""
    a = command_line().parse_args(argv)
    where = from_args(InputConfig, a)
    with user_errors():
        settings = from_args(FinetuneConfig, a)
        check_dataset_names(where.dataset, FINETUNED_KINDS, "--dataset")
        load_dir = check_writable_dir(folder_of(where.load_path), "--load-path")
        check_results_csv(load_dir / RESULTS_FILE)
        print(f"finetune  load_path={where.load_path}  {processes_line(cv_jobs(settings.jobs), settings.jobs)}")
        print(f"{'dataset':<16} | {'metric':<9} | mean ± std (%)")
        results = []
        for name in where.dataset:
            result = finetune(where.load_path, name, settings, where.device, where.data_dir)
            print(result.line(), flush=True)
            append_results_csv(load_dir / RESULTS_FILE, [result], where.load_path)
            results.append(result)
    return results


if __name__ == "__main__":
    main()
