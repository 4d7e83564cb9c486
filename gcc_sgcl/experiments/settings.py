"""The settings of the runner's subcommands (``python -m gcc_sgcl.experiments run|finetune|export|report|
sgcl-method|method|shipped``): a sweep (:class:`SweepConfig`, extended by
:class:`~gcc_sgcl.experiments.sweep.Sweep`), its export, the report, the tables' ``sgcl`` choice, variants' names and
the shipped listing. ``runtime``'s are :class:`~gcc_sgcl.experiments.runtime.RuntimeConfig`; fine-tuning's,
:class:`~gcc_sgcl.tasks.finetune.FinetuneConfig`.

One name, one idea at 3 layers: :mod:`gcc_sgcl.settings` (the machinery), :mod:`gcc_sgcl.tasks.settings` (the tasks'
settings), :mod:`gcc_sgcl.experiments.settings` (the runner's settings).
"""
from __future__ import annotations

from dataclasses import dataclass

from gcc_sgcl.config import MODES, TrainConfig
from gcc_sgcl.engine.views import GCC_COPIES
from gcc_sgcl.settings import NON_NEGATIVE, PROBABILITY, SEED32, Settings, at_least, default_of, setting
from gcc_sgcl.tasks.settings import EvalConfig


@dataclass
class SweepConfig(Settings):
    """A sweep (``python -m gcc_sgcl.experiments run|finetune``): every method × mode × seed, pre-trained on
    ``corpus`` for ``steps`` × ``batch_size``, evaluated on every dataset with ``repeats`` × ``folds``-fold CV.

    The pre-training budget is the sweep's own (``scripts/reproduce.sh`` passes the table budget the learning curve
    chose); the MoCo queue defaults to the paper's, as pre-training's ``nce_k``."""

    methods: list[str] = setting(help="pretrain.sh presets or training-free methods")
    seeds: list[int] = setting(help="seeds of the pre-training runs", valid=NON_NEGATIVE)
    datasets: list[str] = setting(help="downstream datasets")
    modes: list[str] = setting(["e2e"], "pre-training modes", choices=MODES)
    corpus: list[str] = setting(default_of(TrainConfig, "corpus"), "pre-training graphs")
    steps: int = setting(100, "pre-training steps of every run", valid=NON_NEGATIVE)
    batch_size: int = setting(128, "pre-training batch size of every run", valid=at_least(1))
    moco_queue: int = setting(default_of(TrainConfig, "nce_k"), "MoCo queue length (nce_k)", valid=at_least(1))
    num_workers: int = setting(2, "DataLoader workers of pre-training and view building", valid=NON_NEGATIVE)
    save_freq: int = setting(50, "checkpoint every N steps", valid=at_least(1))
    flush_denormal: bool = setting(default_of(TrainConfig, "flush_denormal"), "pre-train with denormal floats "
                                   "flushed to zero (pre-training's --flush-denormal: faster late steps on a CPU, "
                                   "other bits, the same experiment)")
    output_dir: str = setting("saved/repro", "where the run folders go")
    rows: str = setting("saved/repro/rows.jsonl", "JSON-lines result store")
    data_dir: str | None = setting(None, "data root (default: $GCC_SGCL_DATA, else ./data)")
    device: str = setting(default_of(TrainConfig, "device"), "torch device")
    folds: int = setting(default_of(EvalConfig, "folds"), "stratified CV folds per repetition", valid=at_least(2))
    repeats: int = setting(default_of(EvalConfig, "repeats"), "repetitions of the K-fold CV (paper: 10)",
                           valid=at_least(1))
    eval_seed: int = setting(default_of(EvalConfig, "seed"), "seed of the CV splits, same for all encoders",
                             valid=SEED32)
    svc: str = setting(default_of(EvalConfig, "svc"), "graph classification's SVC protocol (see the tasks' --svc)")
    eval_jobs: int = setting(0, "processes fitting the CV folds and the fine-tuning folds (0: every available "
                                "core; the sweep evaluates between pre-training runs, so the cores are free)",
                                valid=NON_NEGATIVE)
    fold_cache: str | None = setting(None, "folder keeping each CV fold's predictions while an evaluation runs, so "
                                           "a sweep killed mid-evaluation resumes at its missing folds (default: "
                                           "<output-dir>/folds)")
    copies: int = setting(GCC_COPIES, "inference views averaged into each embedding row (generate's --copies); the "
                                      "tables' protocol is GCC's 2, whatever generate's default", valid=at_least(1))
    ship: str | None = setting(None, "export every encoder the sweep trains or reuses, as it finishes, to "
                                     "<ship>/<method>_<mode>_<ship-tag>_<steps>x<batch>_s<seed> (weights and "
                                     "configuration, no optimiser; e.g. saved/pretrained)")
    ship_tag: str | None = setting(None, "corpus label in the exported folders' names (default: the corpus names "
                                         "joined by '+')")
    with_structural: bool = setting(False, "also evaluate each pre-trained embedding joined to the training-free "
                                           "structural vector (rows of method '<method> ⊕ structural')")
    reuse: list[str] = setting([], "exported encoders (folders with checkpoint.pt, e.g. saved/pretrained/<name>) "
                                   "to use as the finished run of the same training instead of pre-training it")
    plan: bool = setting(False, "print what is still to do, with time estimates from the stored rows; run nothing")
    stash: str | None = setting(None, "run nothing; write the encoders that the missing rows still need, finished "
                                      "(exported weights) or not (the whole training state), under this folder, "
                                      "to carry them to a machine without this one's saved/ (give its "
                                      "<budget>/<run> folders to --reuse there)")
    timings: list[str] = setting([], "further row stores whose wall times feed the estimates of --plan and --until "
                                     "(e.g. the tables' store, for a study that keeps its rows in a store of its "
                                     "own)")
    until: str | None = setting(None, "deadline, HH:MM (its next occurrence) or an ISO date-time: a job starts only "
                                      "if its estimated pre-training and evaluation (as --plan's) end before it; "
                                      "later jobs that fit still run (e.g. before a machine is reclaimed)")


@dataclass
class ExportConfig(Settings):
    """Where ``python -m gcc_sgcl.experiments export`` writes a sweep's encoder for shipping."""

    to: str | None = setting(None, "folder to write (checkpoint.pt and config.json), e.g. saved/pretrained/<name> "
                                   "(default: the sweep's --ship folder of the encoder)")


@dataclass
class ShippedConfig(Settings):
    """The listing of the shipped encoders (``python -m gcc_sgcl.experiments shipped``)."""

    folder: str = setting("saved/pretrained", "folder of the exported encoders (one sub-folder with checkpoint.pt "
                                              "and config.json each)")
    readme: str | None = setting(None, "README whose listing (between its listing markers) is rewritten (default: "
                                       "<folder>/README.md)")


@dataclass
class ReportConfig(Settings):
    """The sweep's Markdown report, CSV tables and heat-map (``python -m gcc_sgcl.experiments report``)."""

    rows: str = setting(default_of(SweepConfig, "rows"), "JSON-lines result store")
    out: str = setting("docs/results.md", "Markdown report to write")
    intro: str | None = setting(None, "Markdown file put before the tables")
    protocol: str | None = setting(None, "Markdown file put after the main tables (machine, protocol, commands)")
    status: str | None = setting(None, "Markdown file put before the sweep progress and provenance")
    heatmap_dataset: str = setting("rdt-b", "dataset of the pairwise-ablation heat-map")
    readme: str | None = setting(None, "README whose headline block (between its headline markers) is rewritten "
                                       "from the rows, e.g. README.md")
    c_grid: list[float] | None = setting(None, "c values of the grid besides the default: the tables' sgcl row "
                                               "stays at the default c until each has its seed-0 rows",
                                               valid=PROBABILITY)


@dataclass
class MethodNameConfig(Settings):
    """Variants' method names (``python -m gcc_sgcl.experiments method``), e.g. the leave-one-out of the tables'
    ``sgcl``: ``method sgcl-no-crop --like 'sgcl[c=0.4]'`` prints ``sgcl-no-crop[c=0.4]``."""

    bases: list[str] = setting(help="presets (optionally with bracketed settings); one name printed per line",
                               positional=True)
    like: str = setting("gcc", "the method whose bracketed settings the variant takes where its stages read them")
    set: list[str] = setting([], "further settings, name=value (e.g. crop=random, k=64)")


@dataclass
class ChoiceConfig(Settings):
    """Which method the tables' ``sgcl`` row is (``python -m gcc_sgcl.experiments sgcl-method``)."""

    rows: str = setting(default_of(SweepConfig, "rows"), "JSON-lines result store")
    grid: list[float] | None = setting(None, "c values of the grid besides the default: fail unless each has its "
                                             "seed-0 rows at the table budget", valid=PROBABILITY)
