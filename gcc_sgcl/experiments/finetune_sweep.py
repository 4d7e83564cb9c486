"""The fine-tuning sweep: every pre-trained (method, mode, seed) of a sweep fine-tuned on each of its labelled
datasets (:mod:`gcc_sgcl.tasks.finetune`), in rows of task ``*_finetuned`` (``python -m gcc_sgcl.experiments
finetune``). A unit whose row is stored at the same budget is skipped, so an interrupted sweep resumes."""
from __future__ import annotations

import dataclasses
import time
from datetime import datetime
from typing import Any, Iterable

from tqdm import tqdm

from gcc_sgcl.data import KINDS, dataset_kind
from gcc_sgcl.experiments.encoders import ensure_pretrained, run_folder, ship, sweep_note
from gcc_sgcl.experiments.code_version import git_commit, host_fingerprint
from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow, RowStore
from gcc_sgcl.experiments.sweep import Admission, Job, Sweep, budget_key, load_present
from gcc_sgcl.tasks.finetune import FinetuneConfig, finetune


def finetune_budget(sweep: Sweep, ft: FinetuneConfig) -> dict[str, Any]:
    """The budget fields of fine-tuned rows: the sweep's, one CV repetition, the fine-tuning epochs, the folds run
    (``None``: all of them) and the view copies used (at most one per epoch)."""
    return {**sweep.budget(), "repeats": 1, "epochs": ft.epochs,
            "max_folds": None if ft.max_folds in (None, sweep.folds) else ft.max_folds,
            "view_copies": min(ft.view_copies, ft.epochs)}


def pending_finetune(sweep: Sweep, ft: FinetuneConfig, store: RowStore, datasets: Iterable[str]
                     ) -> list[tuple[Job, str]]:
    """Each (pre-trained job, labelled dataset of ``datasets``) whose fine-tuned row is not in ``store``."""
    budget = budget_key(finetune_budget(sweep, ft))
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

    ft = dataclasses.replace(settings or FinetuneConfig(), folds=sweep.folds, seed=sweep.eval_seed, progress=False,
                             jobs=sweep.eval_jobs)
    store = RowStore(sweep.rows)
    budget = finetune_budget(sweep, ft)
    commit, host = git_commit(), host_fingerprint()
    units = pending_finetune(sweep, ft, store, load_present(sweep.datasets, sweep.data_dir))
    added = []
    bar = tqdm(units, desc="fine-tune", unit="run", disable=not progress)
    for (method, mode, seed), name in bar:
        if admit is not None and not admit((method, mode, seed), {name: [method]}):
            continue
        bar.set_postfix_str(f"{method} {mode} s{seed} {name}")
        cfg = sweep.encoder_config(method, mode, seed)
        pretrain_s = ensure_pretrained(cfg, sweep.carried(), sweep_note(bar, f"{method} {mode} s{seed}", cfg))
        bar.set_postfix_str(f"{method} {mode} s{seed} {name}")
        ship(sweep, cfg)
        start = time.time()
        result = finetune(run_folder(cfg), name, ft, sweep.device, sweep.data_dir)
        row = ResultRow.from_result(result, **budget, method=method, mode=mode, seed=seed, config=cfg.to_dict(),
                                    commit=commit, host=host, time=datetime.now().isoformat(timespec="seconds"),
                                    pretrain_seconds=pretrain_s,
                                    eval_seconds=time.time() - start + result.resumed_seconds)
        store.append([row])
        added.append(row)
    return added
