"""The sweep of frozen embeddings: pre-train, embed and evaluate every (method, mode, seed) on every dataset.

``python -m gcc_sgcl.experiments run --methods gcc sgcl --seeds 0 1 2 --modes e2e moco --corpus ca-hepth
--datasets usa_airport imdb-binary kdd_icdm`` (``scripts/reproduce.sh`` runs the whole recorded sweep).

Results are rows of a JSON-lines store (one row per metric): method, mode, seed, dataset, task, metric, the
per-repetition scores and their summary, the per-λ2-quintile accuracy of classification tasks, the full
configuration and the git commit. A combination whose rows are already in the store is skipped and a finished
pre-training run is reused (an unfinished one resumes from its checkpoint), so an interrupted sweep picks up
where it stopped. Views of the downstream datasets do not depend on the encoder; they are built once and
cached (:func:`gcc_sgcl.engine.views.cached_views`). Every encoder is evaluated on the same CV splits
(``eval_seed``), so methods are compared on identical folds.

With ``--with-structural`` every pre-trained encoder is also evaluated on its embedding joined to the
training-free structural vector (:func:`~gcc_sgcl.classical.joined`), in rows of method
``"<method> ⊕ structural"``.
"""
from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Iterable

import numpy as np
from tqdm import tqdm

from gcc_sgcl.classical import STRUCTURAL, joined
from gcc_sgcl.experiments.encoders import ensure_pretrained, run_folder, ship, sweep_note
from gcc_sgcl.experiments.code_version import git_commit, host_fingerprint
from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow, RowStore
from gcc_sgcl.experiments.scoring import evaluate_dataset
from gcc_sgcl.experiments.settings import SweepConfig
from gcc_sgcl.experiments.sweep import Admission, Job, Sweep, applicable, budget_key, joined_name, load_present
from gcc_sgcl.presets import make_config
from gcc_sgcl.sampling.batch import ViewBatch
from gcc_sgcl.sampling.connectivity import lambda2
from gcc_sgcl.settings import default_of


def pending(sweep: Sweep, store: RowStore, datasets: Iterable[str]) -> list[tuple[Job, dict[str, list[str]]]]:
    """Each (method, mode, seed) of ``sweep`` with, per dataset of ``datasets`` it applies to, the row labels not
    yet in ``store`` at the sweep's budget: the method, and with ``with_structural`` its join
    (:func:`joined_name`)."""
    budgets = {mode: budget_key(sweep.budget(mode)) for mode in {*sweep.modes, CLASSICAL_MODE}}
    done = {k[:4] for k in store.keys() if k[5:] == budgets.get(k[1])}

    def labels(method: str, mode: str) -> list[str]:
        joins = sweep.with_structural and mode != CLASSICAL_MODE
        return [method, joined_name(method)] if joins else [method]

    return [(job, {n: missing for n in datasets if applicable(*job[:2], n)
                   if (missing := [m for m in labels(*job[:2]) if (m, *job[1:], n) not in done])})
            for job in sweep.jobs()]


def run_sweep(sweep: Sweep, progress: bool = True, admit: Admission | None = None) -> list[ResultRow]:
    """Run every missing (method, mode, seed, dataset) of ``sweep`` (the jobs ``admit`` accepts, when given);
    returns the rows it added.

    Each dataset is loaded and its views (and their λ2) built once for the whole sweep; each encoder is
    pre-trained (if needed) and loaded once for all its datasets.
    """
    from gcc_sgcl.classical import embed_dataset
    from gcc_sgcl.engine.inference import embed_parts
    from gcc_sgcl.engine.checkpoint import load_encoder_checkpoint
    from gcc_sgcl.engine.views import ViewOptions, cached_views

    store = RowStore(sweep.rows)
    commit, host = git_commit(), host_fingerprint()
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
        pretrain_s = None if classical else ensure_pretrained(cfg, sweep.carried(),
                                                              sweep_note(bar, f"{method} {mode} s{seed}", cfg))
        if not classical:
            ship(sweep, cfg)
        model = None if classical else load_encoder_checkpoint(run_folder(cfg), sweep.device)[0]
        for name, missing in names.items():
            bar.set_postfix_str(f"{method} {mode} s{seed} {name}")
            sampling = default_sampling if cfg is None else cfg.sampling
            copies = default_copies if classical else sweep.copies
            key = (name, repr(sampling), copies)  # views depend on the sampling settings (e.g. k), not the encoder
            if key not in views_of:
                views_of[key] = cached_views(name, ViewOptions(sampling, 0, copies), sweep.data_dir, data=data[name],
                                             num_workers=sweep.num_workers, progress=False)
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
                    result, **extra, **sweep.budget(mode), method=label, mode=mode, seed=seed, config=config, commit=commit, host=host,
                    time=now, pretrain_seconds=pretrain_s, eval_seconds=seconds, columns=int(features.shape[1]),
                ) for result, extra in results]
                store.append(rows)
                added += rows
                pretrain_s = None  # counted once, on the encoder's first row
                start = time.time()
            bar.update(1)
    bar.close()
    return added
