"""The settings of the task commands (``python -m gcc_sgcl.tasks.<task>``): the evaluation protocol
(:class:`EvalConfig`, also the sweep's) and what the tasks add to their inputs (:class:`TaskConfig`); fine-tuning's
are :class:`~gcc_sgcl.tasks.finetune.FinetuneConfig`.

One name, one idea at 3 layers: :mod:`gcc_sgcl.settings` (the machinery), :mod:`gcc_sgcl.tasks.settings` (the tasks'
settings), :mod:`gcc_sgcl.experiments.settings` (the runner's settings).
"""
from __future__ import annotations

from dataclasses import dataclass

from gcc_sgcl.settings import NON_NEGATIVE, SEED32, Settings, at_least, setting


@dataclass(frozen=True)
class EvalConfig(Settings):
    """The evaluation protocol (appendix, "statistical experimental methodology"): ``repeats`` × stratified
    ``folds``-fold CV, splits and bootstrap draws from ``seed``; graph classification with the RBF SVC ``svc``
    (``gcc_sgcl.tasks.graph_classification.SVC_PROTOCOLS``)."""

    folds: int = setting(10, "stratified CV folds per repetition", valid=at_least(2))
    repeats: int = setting(10, "repetitions of the CV, each with a new split (paper: 10)", valid=at_least(1))
    bootstrap: bool = setting(True, "score a bootstrap resample of each test fold (the paper's protocol)")
    seed: int = setting(0, "seed of the CV splits and bootstrap draws", valid=SEED32)
    svc: str = setting("gcc", "graph classification's SVC: gcc = C=100000, gamma=1/n_features (GCC); gcc-scale = "
                              "C=100000, gamma=scale (GCC's SVC under scikit-learn >= 0.22); grid = C by inner grid "
                              "search in each training fold; c1 = C=1, gamma=scale")
    jobs: int = setting(1, "processes fitting the CV folds (0: every available core); scores do not depend on it",
                        valid=NON_NEGATIVE)
    fold_cache: str | None = setting(None, "folder keeping each CV fold's predictions while an evaluation runs (one "
                                           "sub-folder per dataset), so one killed part-way resumes at its missing "
                                           "folds (none: no cache)")


@dataclass
class TaskConfig(Settings):
    """What the task commands add to their inputs: the embedding width, and labels or pairs of datasets given
    by path."""

    hidden: int = setting(help="embedding size (columns of each .npy)", valid=at_least(1))
    labels: list[str] = setting([], "labels of the datasets given by path, one file each in order (lines "
                                    "'node label' or 'graph_index label', a header line allowed); unnamed items "
                                    "stay unlabelled and are not evaluated")
    pairs: str | None = setting(None, "ground-truth pairs 'id_1 id_2' of the two graphs given by path as "
                                      "--dataset A B")
    ks: list[int] = setting([20, 40], "cut-offs k of HITS@k", valid=at_least(1))
