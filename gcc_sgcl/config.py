"""The method's settings and the settings machinery: dataclass groups and the argparse built from them.

This module holds the pre-training settings (:class:`SamplingConfig`, :class:`ModelConfig`, :class:`TrainConfig`,
the augmentation families of :data:`AUGMENT_FAMILIES`, :class:`Config` and :func:`migrate`), the input settings
every tool shares (:class:`InputConfig`) and the machinery every settings class uses (:func:`setting`,
:class:`Range`, :class:`Settings`, :func:`add_arguments`, :func:`from_args`, :func:`given_flags`,
:class:`OneLineParser`, :func:`default_of`, …). Each tool's own settings live beside the tool (e.g.
:class:`~gcc_sgcl.engine.generate.GenerateConfig`, :class:`~gcc_sgcl.tasks.settings.EvalConfig`,
:class:`~gcc_sgcl.experiments.settings.SweepConfig`).

Every field becomes a command-line flag (``rw_hops`` → ``--rw-hops``) through :func:`add_arguments`, and the
parsed flags become the dataclass again through :func:`from_args`; every command line of the package is built
this way, so each setting has one default, stated with its field, and every settings dataclass checks itself when
made (:class:`Settings`). A run's augmentation settings are its family's (:data:`AUGMENT_FAMILIES`: SGCL's stages
or one baseline's), chosen by the method's preset. The pre-training configuration is stored in each checkpoint, so
``generate`` needs only the run folder; one stored in an older layout is read through :func:`migrate`. This module
imports only :mod:`gcc_sgcl.method` (a method's name, :class:`~gcc_sgcl.method.MethodSpec`) from the package; the
method presets (``gcc``, ``sgcl``, …) that fill the pre-training dataclasses live in :mod:`gcc_sgcl.presets`.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import sys
import types
import typing
from dataclasses import dataclass, field
from collections.abc import Iterable, Sequence
from typing import Any, Callable, TypeVar, Union

from gcc_sgcl.method import MethodSpec

MODES = ("e2e", "moco")
PE_SIGNS = ("random", "canonical")
# Visit budget of a node's inference view, max(rw_hops, round(deg^power · e/(e−1) / restart_prob)), by name: the
# power of pre-training (GCC's LoadBalanceGraphDataset), or the one of GCC's generate.py (GraphDataset.__getitem__).
VISIT_BUDGETS: dict[str, float] = {"pretrain": 0.75, "gcc": 1.0}


def visit_budget_power(name: str, parameter: str = "visit_budget") -> float:
    """The power of visit budget ``name`` (:data:`VISIT_BUDGETS`); an unknown name is refused naming ``parameter``."""
    if name not in VISIT_BUDGETS:
        raise ValueError(f"{parameter} must be one of {', '.join(VISIT_BUDGETS)}, got {name!r}")
    return VISIT_BUDGETS[name]


STAGES = ("filter", "crop", "align", "mask", "reorder")

Box = tuple[float, float, float, float]
"""``(x_min, x_max, y_min, y_max)`` as rank percentiles in ``[0, 1]`` (``0.2`` means ``R_0.2``)."""

PAPER_CROP_TABLE: tuple[tuple[Box, float], ...] = (
    ((0.2, 0.8, 0.2, 0.8), 0.1),
    ((0.1, 0.9, 0.1, 0.9), 0.1),
    ((0.0, 0.8, 0.0, 0.8), 0.05),
    ((0.2, 1.0, 0.2, 1.0), 0.05),
)
"""The appendix's crops ``c_1..c_4`` as ``(box, probability)``; "no crop" takes the rest (``c_5 = 0.7``)."""

T = TypeVar("T")


@dataclass(frozen=True)
class Range:
    """The valid values of a numeric setting: ``low`` ≤ x ≤ ``high`` (either end open, or absent when None).

    >>> Range(0, 1, low_open=True).check(0.0, "--p")
    Traceback (most recent call last):
    ...
    ValueError: --p must be in (0, 1], got 0.0
    >>> str(Range(1))
    '>= 1'
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def __str__(self) -> str:
        if self.high is None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        if self.low is None:
            return f"{'<' if self.high_open else '<='} {self.high:g}"
        return f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"

    def contains(self, value: float) -> bool:
        """Whether ``value`` is valid (NaN never is)."""
        if value != value:
            return False
        low_ok = self.low is None or (value > self.low if self.low_open else value >= self.low)
        high_ok = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return low_ok and high_ok

    def check(self, value: float, name: str) -> None:
        """Raise ``ValueError`` naming ``name`` unless ``value`` is valid."""
        if not self.contains(value):
            raise ValueError(f"{name} must be {self}, got {value}")


def at_least(low: float) -> Range:
    """Values ≥ ``low``."""
    return Range(low)


POSITIVE = Range(0, low_open=True)
NON_NEGATIVE = Range(0)
PROBABILITY = Range(0, 1)


def setting(default: Any = dataclasses.MISSING, help: str = "", *, choices: Sequence[str] = (),
            positional: bool = False, parse: Callable[[str], Any] | None = None, valid: Range | None = None) -> Any:
    """A dataclass field with its command-line ``help``: fixed ``choices``, a ``positional`` argument instead of a
    flag, a ``parse`` function of each value of a list, the ``valid`` range of a number (of each number of a
    list), checked as the command line is parsed and by :func:`check_fields`; no ``default`` makes the argument
    required. A list default is copied for each instance."""
    metadata = {"help": help, "choices": tuple(choices), "positional": positional, "parse": parse, "valid": valid}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def default_of(klass: type, name: str) -> Any:
    """The default of field ``name`` of dataclass ``klass``: another group's field of the same quantity refers
    to it instead of repeating it."""
    return _field_default(next(f for f in dataclasses.fields(klass) if f.name == name))


def _field_default(f: dataclasses.Field) -> Any:
    """The default of ``f`` (a fresh copy if made by a factory), or ``dataclasses.MISSING``."""
    return f.default if f.default_factory is dataclasses.MISSING else f.default_factory()


def flag_name(field_name: str, klass: type | None = None) -> str:
    """The command-line flag of a field of dataclass ``klass``: ``rw_hops`` → ``--rw-hops``; a baseline's settings
    prefix their family (:attr:`Settings.FLAG_PREFIX`: ``GraphCLConfig.ratio`` → ``--graphcl-ratio``)."""
    return "--" + (getattr(klass, "FLAG_PREFIX", "") + field_name).replace("_", "-")


def check_fields(obj: Any) -> None:
    """Raise ``ValueError`` naming the flag of the first field of dataclass ``obj`` outside its declared range or
    choices (:func:`setting`'s ``valid`` and ``choices``); the one check every configuration goes through, from the
    command line and from Python."""
    for f in dataclasses.fields(obj):
        value, valid, choices = getattr(obj, f.name), f.metadata.get("valid"), f.metadata.get("choices")
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if valid is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
                valid.check(v, flag_name(f.name, type(obj)))
            if choices and isinstance(v, str) and v not in choices:
                raise ValueError(f"{flag_name(f.name, type(obj))} must be one of {', '.join(choices)}, got {v!r}")


class Settings:
    """Base of the settings dataclasses: each checks itself when made (:meth:`check`), from the command line and
    from Python alike; ``FLAG_PREFIX`` goes before its fields' names in their flags."""

    FLAG_PREFIX = ""

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise ``ValueError`` naming the flag of the first field outside its range or choices (:func:`check_fields`)
        or of fields that contradict each other (:meth:`check_together`)."""
        check_fields(self)
        self.check_together()

    def check_together(self) -> None:
        """Raise ``ValueError`` naming the flags of fields that contradict each other (none unless overridden)."""


def _ranged(kind: Callable[[str], Any], valid: Range) -> Callable[[str], Any]:
    """An argparse ``type`` converting with ``kind`` and refusing values outside ``valid`` (argparse then names the
    flag: ``argument --lr: must be > 0, got -1.0``)."""
    def convert(text: str) -> Any:
        value = kind(text)
        if not valid.contains(value):
            raise argparse.ArgumentTypeError(f"must be {valid}, got {value}")
        return value
    convert.__name__ = kind.__name__  # argparse's "invalid int value" message names the type
    return convert


def parse_crop_entry(text: str) -> tuple[Box, float]:
    """``"x_min,x_max,y_min,y_max:p"`` → ``((x_min, x_max, y_min, y_max), p)`` (a ``--crop-table`` entry)."""
    try:
        box_text, p_text = text.split(":")
        box = tuple(float(v) for v in box_text.split(","))
        if len(box) != 4:
            raise ValueError
        return box, float(p_text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--crop-table entries look like 'x_min,x_max,y_min,y_max:p' (rank percentiles), got {text!r}"
        ) from None


@dataclass
class SamplingConfig(Settings):
    """RWR subgraph sampling and positional embedding (GCC's defaults)."""

    rw_hops: int = setting(256, "minimum node visits collected per RWR view (the degree rule may ask for more; GCC)",
                           valid=at_least(1))
    restart_prob: float = setting(0.8, "probability that a random walk with restart returns to its seed at each "
                                       "step (GCC)", valid=Range(0, 1, low_open=True, high_open=True))
    walk_length: int = setting(10, "steps per walk before a forced restart; at restart 0.8 walks are effectively "
                                   "untruncated (this code)", valid=at_least(1))
    positional_embedding_size: int = setting(32, "k: Laplacian eigenvectors used as the nodes' positional "
                                                 "embedding (GCC: 32; the SGCL paper also reports 64)",
                                             valid=at_least(1))
    pe_sign: str = setting("random", "eigenvector signs of the positional embedding: random = a +-1 per column "
                                     "and view, as GCC's ARPACK start; canonical = fixed signs", choices=PE_SIGNS)


READOUTS = ("sum", "set2set")


@dataclass
class ModelConfig(Settings):
    """GIN encoder (GCC's UnsupervisedGIN)."""

    hidden_size: int = setting(64, "width of the GIN layers and of the embedding (GCC)", valid=at_least(1))
    num_layers: int = setting(5, "GIN layers counting the input layer, as GCC (5 = input + 4 GINConv)",
                              valid=at_least(2))
    degree_embedding_size: int = setting(16, "width of the learned node-degree embedding (GCC)", valid=at_least(1))
    max_degree: int = setting(512, "degrees above this share one embedding row (GCC)", valid=at_least(1))
    dropout: float = setting(0.5, "dropout on each layer's readout (GCC)", valid=Range(0, 1, high_open=True))
    readout: str = setting("sum", "graph readout: sum = sum-pool every layer and add (GCC); set2set = Set2Set on "
                                  "the last layer", choices=READOUTS)
    apply_node_func: bool = setting(True, "batch norm + ReLU after each GIN layer's MLP (GCC's ApplyNodeFunc)")


# What a field missing from a saved config means: the behaviour before the field existed (a saved config
# always holds every field of its day), so checkpoints written earlier rebuild the encoder they trained.
SAVED_BEFORE_FIELD: dict[str, dict[str, Any]] = {
    "model": {"apply_node_func": False},
    "sampling": {"pe_sign": "canonical"},
}


# Training settings that say where and at what pace a run goes, not what it learns: two runs differing only in
# them train the same encoder (``threads`` and ``device`` may change float reductions, not the experiment).
RUN_PLACE_FIELDS = ("num_workers", "threads", "save_freq", "save_minutes", "log_freq", "data_dir", "output_dir", "run_name",
                    "device")


@dataclass
class TrainConfig(Settings):
    """Contrastive pre-training loop."""

    mode: str = setting("e2e", "e2e = negatives from the batch (end to end); moco = negatives from a queue of "
                               "keys of a momentum encoder (MoCo)", choices=MODES)
    batch_size: int = setting(0, "pairs per step; 0 = the mode's default (GCC: E2E 1024, MoCo 32)",
                              valid=NON_NEGATIVE)
    nce_k: int = setting(16384, "MoCo queue length in keys (GCC; E2E uses the batch: K = batch size - 1)",
                         valid=at_least(1))
    nce_t: float = setting(0.07, "InfoNCE temperature (GCC)", valid=POSITIVE)
    momentum: float = setting(0.999, "MoCo key-encoder momentum (GCC)", valid=PROBABILITY)
    steps: int = setting(75000, "optimiser steps; 0 = save the untrained encoder (GCC: 75000)", valid=NON_NEGATIVE)
    lr: float = setting(0.005, "peak Adam learning rate (GCC)", valid=POSITIVE)
    beta1: float = setting(0.9, "Adam beta1 (GCC)", valid=Range(0, 1, high_open=True))
    beta2: float = setting(0.999, "Adam beta2 (GCC)", valid=Range(0, 1, high_open=True))
    eps: float = setting(1e-8, "Adam epsilon (GCC)", valid=POSITIVE)
    weight_decay: float = setting(1e-5, "Adam weight decay (GCC)", valid=NON_NEGATIVE)
    warmup_frac: float = setting(0.1, "fraction of the steps with a linear learning-rate warm-up (GCC)",
                                 valid=PROBABILITY)
    decay_frac: float = setting(0.1, "fraction of the steps with a linear decay at the end (GCC)", valid=PROBABILITY)
    clip_norm: float = setting(1.0, "gradient-norm clipping threshold (GCC)", valid=POSITIVE)
    num_workers: int = setting(0, "DataLoader processes building views (0 = in the main process); results do not "
                                  "depend on it", valid=NON_NEGATIVE)
    threads: int = setting(0, "torch threads of the model step (0 = half the CPU cores); float reductions, hence "
                              "the bits of the result, depend on it", valid=NON_NEGATIVE)
    seed: int = setting(0, "seed of the weights, walks and augmentations", valid=NON_NEGATIVE)
    save_freq: int = setting(1000, "write the checkpoint every N steps (and at the end)", valid=at_least(1))
    save_minutes: float = setting(10.0, "also write the checkpoint once this many minutes of wall time passed since "
                                        "the last one, so a kill loses minutes, not hours (0 = by step only)",
                                  valid=at_least(0))
    log_freq: int = setting(10, "write TensorBoard scalars every N steps", valid=at_least(1))
    corpus: list[str] = setting(["synthetic"], "pre-training graphs: registered names (e.g. ca-grqc ca-hepth "
                                               "ca-hepph ca-condmat email-enron, GCC's SNAP graphs) or graph files")
    data_dir: str = setting("", "data root ('' = $GCC_SGCL_DATA, else ./data)")
    output_dir: str = setting("saved", "where the run folder is made")
    run_name: str = setting("", "run folder name ('' = <method>_<mode>_<corpus>_s<seed>)")
    device: str = setting("cpu", "torch device of the model step (the scripts map <gpu> to it)")

    def effective_batch_size(self) -> int:
        """The batch size actually used (mode default when ``batch_size`` is 0)."""
        if self.batch_size > 0:
            return self.batch_size
        return 1024 if self.mode == "e2e" else 32

    def check_together(self) -> None:
        if self.warmup_frac + self.decay_frac > 1.0:
            raise ValueError(f"--warmup-frac + --decay-frac must be <= 1, got {self.warmup_frac} + {self.decay_frac}")
        if self.mode == "moco" and self.nce_k % self.effective_batch_size() != 0:
            raise ValueError(
                f"MoCo needs --nce-k ({self.nce_k}) to be a multiple of the batch size ({self.effective_batch_size()})"
            )
        if self.mode == "e2e" and self.effective_batch_size() < 2:
            raise ValueError("E2E needs --batch-size >= 2 (negatives come from the batch)")
        name = self.run_name
        if name in (".", "..") or "\0" in name or any(sep and sep in name for sep in (os.sep, os.altsep, "/")):
            raise ValueError(f"--run-name must be one folder name inside --output-dir (no '/', no '.' or '..'), "
                             f"got {name!r}")


@dataclass
class AugmentConfig(Settings):
    """SGCL's augmentations, the settings of :func:`~gcc_sgcl.augment.pipeline.build_pair_pipeline` (appendix,
    "Augmentation details and sequences"); each stage has a ``use_*`` flag so single-augmentation presets are
    expressible, and GCC is this family with every stage off.

    From the paper: the crop table (``p_crop = 0.3``) and the grid for ``c`` (0.2 ... 0.45). *Not* stated
    in the paper, chosen here: ``p_filter``, ``t_max``, ``p_align``, ``p_mask``, ``p_reorder``, ``r_max``,
    ``max_masked`` (the appendix's ``M``), ``c`` (middle of the grid) and the crop ``basis`` (the paper's text
    reads as the normalised Laplacian of the embedding; its grid/path theorems hold for ``D - A``).

    The global embedding ``E_t`` (filter, align) must have as many columns as the positional embedding for
    ``Align``. The contrastive baselines' view generation replaces this family: :class:`GraphCLConfig`,
    :class:`GraceConfig`, :class:`MVGRLConfig`, :class:`GCAConfig` (:data:`AUGMENT_FAMILIES`).
    """

    FAMILY = "sgcl"

    # similar / diverse filter of the candidate random-walk pairs (before views are built)
    use_filter: bool = setting(True, "SGCL stage: keep or redraw a pair by its views' spectral similarity")
    filter_mode: str = setting("similar", "similar = accept pairs with cos > 1 - c; diverse = cos < 1 - c (paper)")
    p_filter: float = setting(0.5, "probability that a pair goes through the filter (this code)", valid=PROBABILITY)
    c: float = setting(0.3, "filter threshold c; every preset with the filter trains at 0.4, the c grid's choice on "
                            "the tables' columns (the paper grid-searches 0.2 ... 0.45 and states no choice; before "
                            "the grid, the middle 0.3)", valid=PROBABILITY)
    t_max: int = setting(5, "redraws of a rejected pair before it is kept anyway (this code)", valid=at_least(1))
    # crop, each view independently; crop_table rows are (box, probability), "no crop" takes the rest
    use_crop: bool = setting(True, "SGCL stage: spectral crop of each view (keep a box of the eigen-grid)")
    crop_kind: str = setting("spectral", "spectral = the paper's crop; random = the random-crop control")
    crop_table: tuple[tuple[Box, float], ...] = setting(
        PAPER_CROP_TABLE, "crop boxes 'x_min,x_max,y_min,y_max:p' (rank percentiles) with their probabilities; "
                          "'no crop' takes the rest (paper's appendix: c_1 ... c_4)", parse=parse_crop_entry)
    crop_basis: str = setting("normalized", "eigenvectors spanning the crop grid: normalized = normalised "
                                            "Laplacian (the paper's text); combinatorial = D - A (its theorems)")
    recompute_pe: bool = setting(True, "recompute the positional embedding of a cropped view (this code)")
    # alignment to E_t, one draw for the pair
    use_align: bool = setting(True, "SGCL stage: local-global alignment of the pair to the global embedding E_t")
    p_align: float = setting(0.5, "probability that a pair is aligned (this code)", valid=PROBABILITY)
    # mask | reorder | nothing, each view independently (mask and reorder are mutually exclusive)
    use_mask: bool = setting(True, "SGCL stage: mask up to --max-masked eigenvectors of a view")
    p_mask: float = setting(0.25, "probability that a view is masked (this code; p_mask + p_reorder <= 1)",
                            valid=PROBABILITY)
    max_masked: int = setting(8, "most eigenvectors masked in one view (the appendix's M, value of this code)",
                              valid=at_least(1))
    use_reorder: bool = setting(True, "SGCL stage: frequency reorder of a view (its eigenvector columns sorted by "
                                      "their weight sum_{j<=r} (1 - lambda)^j in an r-step diffusion, r drawn per "
                                      "view)")
    p_reorder: float = setting(0.25, "probability that a view is reordered (this code)", valid=PROBABILITY)
    r_max: int = setting(10, "largest diffusion order r a reorder draws, r ~ U{1..r_max} (the paper's r <= r_max; "
                             "value of this code)", valid=at_least(1))
    permute_kind: str = setting("spectral", "spectral = the paper's reorder; random = the random-permute control")
    # global embedding E_t (see gcc_sgcl.augment.global_embedding)
    global_method: str = setting("netmf", "global embedding E_t of the corpus graph: netmf = NetMF matrix "
                                          "factorisation (this code: the paper names Node2vec, LINE and DeepWalk, "
                                          "whose implicit matrix NetMF factorises)")
    global_window: int = setting(1, "NetMF window size T (this code)", valid=at_least(1))

    def check_together(self) -> None:
        used = self.p_mask * self.use_mask + self.p_reorder * self.use_reorder
        if used > 1.0 + 1e-9:
            raise ValueError(f"--p-mask + --p-reorder must be <= 1 (they are exclusive), got {used}")

    @property
    def p_crop(self) -> float:
        """Probability that a view is cropped (the appendix's ``c_1 + ... + c_4``)."""
        return sum(p for _, p in self.crop_table)

    def augments(self) -> bool:
        """Whether a stage is on (GCC has none)."""
        return any(getattr(self, f"use_{stage}") for stage in STAGES)

    @classmethod
    def only(cls, *stages: str, **overrides: Any) -> AugmentConfig:
        """Config with just ``stages`` (names from :data:`STAGES`) enabled.

        >>> cfg = AugmentConfig.only("crop", crop_kind="random")
        >>> cfg.use_crop, cfg.use_filter, cfg.crop_kind
        (True, False, 'random')
        """
        unknown = set(stages) - set(STAGES)
        if unknown:
            raise ValueError(f"stages must be among {STAGES}, got {sorted(unknown)}")
        flags = {f"use_{stage}": stage in stages for stage in STAGES}
        return dataclasses.replace(cls(), **{**flags, **overrides})


# The contrastive baselines' view generation, re-implemented in GCC's structure-only setting (appendix, "Position
# of our work": GCC's encoder and training loop, ``PE`` as node features), each family with its settings and their
# sources; views built by :data:`gcc_sgcl.augment.pipeline.BASELINES` under the family's name.

@dataclass
class GraphCLConfig(Settings):
    """GraphCL (You et al., 2020): one of node dropping / subgraph / edge perturbation / attribute masking per view,
    uniformly, all at ratio 0.2 -- Shen-Lab/GraphCL ``semisupervised_TU/pre-training/main.py`` (``--aug_ratio1/2
    0.2``) and ``tu_dataset.py`` (``random4``)."""

    FAMILY = "graphcl"
    FLAG_PREFIX = "graphcl_"

    ratio: float = setting(0.2, "ratio of each augmentation (GraphCL's --aug_ratio)", valid=PROBABILITY)


@dataclass
class GraceConfig(Settings):
    """GRACE (Zhu et al., 2020): edge removing 0.2 / 0.4 and feature masking 0.3 / 0.4 for the query / key view --
    CRIPAC-DIG/GRACE ``config.yaml``, Cora (the script's default dataset, DBLP, uses 0.1 / 0.4 and 0.1 / 0.0)."""

    FAMILY = "grace"
    FLAG_PREFIX = "grace_"

    drop_edge_q: float = setting(0.2, "edge-removal rate of the query view (GRACE, Cora)", valid=PROBABILITY)
    drop_edge_k: float = setting(0.4, "edge-removal rate of the key view (GRACE, Cora)", valid=PROBABILITY)
    drop_feature_q: float = setting(0.3, "feature-masking rate of the query view (GRACE, Cora)", valid=PROBABILITY)
    drop_feature_k: float = setting(0.4, "feature-masking rate of the key view (GRACE, Cora)", valid=PROBABILITY)


@dataclass
class MVGRLConfig(Settings):
    """MVGRL (Hassani & Khasahmadi, 2020): the key view is the PPR diffusion of the key's structural view,
    ``alpha = 0.2`` (kavehhassani/mvgrl ``utils.compute_ppr``); MVGRL feeds the dense diffusion to its own encoder,
    GCC's ignores edge weights, so it is sparsified: top-``k`` per row with ``k`` = the view's mean degree (``topk =
    0``) by default, or ``sparsify="threshold"`` at ``eps`` (1e-2; MVGRL thresholds Citeseer only, at the eps of
    1e-5 ... 1e-2 that matches the graph's density; not density-matched on these views)."""

    FAMILY = "mvgrl"
    FLAG_PREFIX = "mvgrl_"

    alpha: float = setting(0.2, "PPR (personalised PageRank) teleport probability of the diffusion view (MVGRL)",
                           valid=Range(0, 1, low_open=True))
    sparsify: str = setting("topk", "how the dense diffusion is sparsified: topk or threshold")
    topk: int = setting(0, "entries kept per row with topk (0 = the view's mean degree)", valid=NON_NEGATIVE)
    eps: float = setting(1e-2, "entries below this are dropped with threshold (MVGRL, Citeseer)",
                         valid=Range(0, 1, low_open=True))
    diffusion: str = setting("ppr", "diffusion of the key view: ppr (MVGRL's default) or heat, exp(t ((A + I) D^-1 - "
                                    "I)) (MVGRL's other diffusion, the SGCL paper's 'MVGRL heat')")
    t: float = setting(5.0, "time of the heat diffusion (MVGRL's compute_heat default)", valid=POSITIVE)


@dataclass
class GCAConfig(Settings):
    """GCA (Zhu et al., 2021): degree-centrality scheme, edge dropping 0.3 / 0.4, feature masking 0.1 / 0.0, cap
    ``p_tau = 0.7`` for both -- CRIPAC-DIG/GCA ``train.py`` ``default_param`` (``drop_scheme='degree'``;
    ``drop_edge_weighted(threshold=0.7)``, ``drop_feature_weighted_2``'s default threshold 0.7); the script's default
    run (``--param local:wikics.json``) overrides them with edge dropping 0.2 / 0.3 and feature masking 0.1 / 0.1."""

    FAMILY = "gca"
    FLAG_PREFIX = "gca_"

    drop_edge_q: float = setting(0.3, "edge-dropping rate of the query view (GCA)", valid=PROBABILITY)
    drop_edge_k: float = setting(0.4, "edge-dropping rate of the key view (GCA)", valid=PROBABILITY)
    drop_feature_q: float = setting(0.1, "feature-masking rate of the query view (GCA)", valid=PROBABILITY)
    drop_feature_k: float = setting(0.0, "feature-masking rate of the key view (GCA)", valid=PROBABILITY)
    p_tau: float = setting(0.7, "cap of a degree-weighted dropping probability (GCA)", valid=PROBABILITY)


AugmentSettings = Union[AugmentConfig, GraphCLConfig, GraceConfig, MVGRLConfig, GCAConfig]
AUGMENT_FAMILIES: dict[str, type] = {k.FAMILY: k for k in typing.get_args(AugmentSettings)}
"""Augmentation family → its settings class; a method's preset chooses the family (``gcc`` and ``sgcl*``: ``sgcl``)."""

GROUPS = {"sampling": SamplingConfig, "model": ModelConfig, "train": TrainConfig}
"""The settings groups of every method; the ``augment`` group is the method's family's (:data:`AUGMENT_FAMILIES`)."""

CONFIG_KEYS = ("method", "family", *GROUPS, "augment")
"""The keys of a stored configuration (:meth:`Config.to_dict`)."""


def migrate(saved: dict[str, Any]) -> dict[str, Any]:
    """A stored configuration (:meth:`Config.to_dict`) in this code's layout: one written before the augmentation
    families (no ``family``; one flat ``augment`` group of SGCL's stages, a ``baseline`` name and every baseline's
    ``<family>_<field>`` settings) keeps the family it trained and that family's settings; one in this layout is
    returned as it is.

    >>> old = {"method": "mvgrl", "augment": {"baseline": "mvgrl", "use_crop": False, "mvgrl_alpha": 0.1,
    ...                                       "grace_drop_edge_q": 0.2}}
    >>> migrate(old)
    {'method': 'mvgrl', 'family': 'mvgrl', 'augment': {'alpha': 0.1}}
    >>> migrate({"method": "gcc", "augment": {"baseline": "", "use_crop": False, "mvgrl_alpha": 0.1}})["augment"]
    {'use_crop': False}
    """
    if "family" in saved:
        return saved
    flat = dict(saved.get("augment", {}))
    family = flat.pop("baseline", "") or AugmentConfig.FAMILY
    prefixes = {k.FLAG_PREFIX: k.FAMILY for k in AUGMENT_FAMILIES.values() if k.FLAG_PREFIX}
    stages = {f.name for f in dataclasses.fields(AugmentConfig)}
    # a name of no family stays, for Config.from_dict to refuse as unknown
    owner = {name: next((fam for pre, fam in prefixes.items() if name.startswith(pre)),
                        AugmentConfig.FAMILY if name in stages else family) for name in flat}
    prefix = AUGMENT_FAMILIES[family].FLAG_PREFIX if family in AUGMENT_FAMILIES else ""
    augment = {name.removeprefix(prefix): value for name, value in flat.items() if owner[name] == family}
    rest = {key: value for key, value in saved.items() if key not in ("method", "augment")}
    return {"method": saved.get("method", "gcc"), "family": family, **rest, "augment": augment}


@dataclass
class Config:
    """A full run configuration: the groups of every method and the method's augmentation family's settings."""

    method: str = "gcc"
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    augment: AugmentSettings = field(default_factory=AugmentConfig)

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise ``ValueError`` naming the flag of the first setting of a group outside its range or contradicting
        another (:meth:`Settings.check`); run when made, and again by pre-training (a group may have been replaced)."""
        if type(self.augment) not in AUGMENT_FAMILIES.values():
            raise ValueError(f"augment must be the settings of a family ({', '.join(AUGMENT_FAMILIES)}), got "
                             f"{type(self.augment).__name__}")
        for group in (*GROUPS, "augment"):
            getattr(self, group).check()

    @property
    def family(self) -> str:
        """The augmentation family of the views (:data:`AUGMENT_FAMILIES`): ``sgcl`` (GCC too) or a baseline's."""
        return self.augment.FAMILY

    def run_dir_name(self) -> str:
        """``<method>_<mode>_<corpus>_s<seed>`` unless ``--run-name`` is given (a corpus given by path goes by
        its file name; a method's bracketed settings become ``-name=value`` parts: ``sgcl[c=0.35]`` →
        ``sgcl-c=0.35``)."""
        if self.train.run_name:
            return self.train.run_name
        corpus = "+".join(os.path.basename(os.path.normpath(c)) for c in self.train.corpus)
        return f"{MethodSpec.parse(self.method).slug}_{self.train.mode}_{corpus}_s{self.train.seed}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form stored in checkpoints, config.json and result rows: the keys of :data:`CONFIG_KEYS`,
        ``augment`` holding only the family's settings."""
        d = dataclasses.asdict(self)
        return {"method": d.pop("method"), "family": self.family, **d}

    def learning_settings(self) -> dict[str, Any]:
        """:meth:`to_dict` without the training settings of :data:`RUN_PLACE_FIELDS`: what decides the encoder a
        run trains (two configurations with equal learning settings train the same encoder)."""
        d = self.to_dict()
        d["train"] = {k: v for k, v in d["train"].items() if k not in RUN_PLACE_FIELDS}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Config":
        """Inverse of :meth:`to_dict`, of a configuration in any layout stored so far (:func:`migrate`); unknown
        keys are rejected with their name, missing ones take the value of :data:`SAVED_BEFORE_FIELD` if listed
        there (the behaviour before they existed), else the default."""
        d = migrate(d)
        if d["family"] not in AUGMENT_FAMILIES:
            raise ValueError(f"unknown augmentation family {d['family']!r}; families: {', '.join(AUGMENT_FAMILIES)}")
        if "method" not in d:  # the family layout always stores its method
            raise ValueError("not a stored configuration: a 'family' but no 'method'")
        groups = {}
        for name, klass in {**GROUPS, "augment": AUGMENT_FAMILIES[d["family"]]}.items():
            known = {f.name for f in dataclasses.fields(klass)}
            extra = set(d.get(name, {})) - known
            if extra:
                raise ValueError(f"unknown {name} config keys: {sorted(extra)}")
            values = {**SAVED_BEFORE_FIELD.get(name, {}), **d.get(name, {})}
            if "crop_table" in values:
                values["crop_table"] = tuple((tuple(box), float(p)) for box, p in values["crop_table"])
            groups[name] = klass(**values)
        return cls(method=d["method"], **groups)

    def augmented(self) -> bool:
        """Whether any augmentation is enabled: an SGCL stage or a baseline's (``gcc`` has none)."""
        return not isinstance(self.augment, AugmentConfig) or self.augment.augments()


def _value_type(hint: Any) -> Any:
    """``hint`` without ``| None``."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1 else hint


def add_arguments(parser: argparse.ArgumentParser, klass: type, *, prefix: str = "", only: Iterable[str] = (),
                  required: Iterable[str] = (), choices: dict[str, Iterable[str]] | None = None,
                  title: str = "", shown: dict[str, Any] | None = None) -> None:
    """One argument per field of dataclass ``klass`` (or of the fields ``only``), in an argument group ``title``.

    ``rw_hops`` becomes ``--rw-hops`` (dest ``prefix + "rw_hops"``); a bool ``--x/--no-x``; a list ``nargs="+"``;
    a field without default, or named in ``required``, a required flag (a positional argument if the field says
    so); ``choices`` adds the valid values of fields whose set is defined outside this module (a registry). Every
    flag defaults to ``None`` (not given), so :func:`from_args` can tell given flags from defaults; the help shows
    the dataclass default once, or the value in ``shown`` (field → value, e.g. a method preset's).
    """
    target = parser.add_argument_group(title) if title else parser
    hints = typing.get_type_hints(klass)
    names = set(only)
    for f in dataclasses.fields(klass):
        if names and f.name not in names:
            continue
        hint, meta = _value_type(hints[f.name]), f.metadata
        default = dataclasses.MISSING if f.name in required else (shown or {}).get(f.name, _field_default(f))
        kwargs: dict[str, Any] = {"help": meta.get("help", "")}
        ranged = meta.get("valid")
        if meta.get("parse"):
            kwargs.update(type=meta["parse"], nargs="+")
        elif hint is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif typing.get_origin(hint) is list:
            item = typing.get_args(hint)[0]
            kwargs.update(type=_ranged(item, ranged) if ranged else item, nargs="+")
        else:
            kwargs["type"] = _ranged(hint, ranged) if ranged else hint
        valid = tuple((choices or {}).get(f.name, ())) or meta.get("choices", ())
        if valid:
            kwargs["choices"] = valid
        elif hint is not bool:
            kwargs["metavar"] = f.name.upper()
        if ranged:
            kwargs["help"] = f"{kwargs['help']}; {ranged}"
        if default is not dataclasses.MISSING and default is not None:
            kwargs["help"] = f"{kwargs['help']} (default: {default})".lstrip()
        if meta.get("positional"):
            kwargs["metavar"] = f.name.upper()
            target.add_argument(prefix + f.name, **kwargs)
            continue
        kwargs.update(dest=prefix + f.name, default=None)
        if default is dataclasses.MISSING:
            kwargs["required"] = True
        target.add_argument(flag_name(f.name, klass), **kwargs)


def given_flags(klass: type, args: argparse.Namespace, prefix: str = "") -> dict[str, Any]:
    """The fields of ``klass`` given on the command line (:func:`add_arguments` with ``prefix``), by name."""
    return {f.name: value for f in dataclasses.fields(klass)
            if (value := getattr(args, prefix + f.name, None)) is not None}


def from_args(klass: type[T], args: argparse.Namespace, prefix: str = "") -> T:
    """The dataclass ``klass`` of parsed flags: the given ones over the defaults (the inverse of
    :func:`add_arguments`).

    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser, ModelConfig)
    >>> model = from_args(ModelConfig, parser.parse_args(["--num-layers", "3", "--no-apply-node-func"]))
    >>> model.num_layers, model.apply_node_func, model.hidden_size  # the flags given, the default for the rest
    (3, False, 64)
    """
    return klass(**given_flags(klass, args, prefix))


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (the flag and why) and a pointer to ``--help``, exit status 2,
    instead of the whole usage text."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


DEFAULT_METHOD = "gcc"


class PretrainParser(OneLineParser):
    """Pre-training's command line: ``--method``, ``--resume``, one flag per field of every group of
    :data:`GROUPS` (dest ``<group>.<field>``) and of the method's augmentation family (dest ``augment.<field>``).

    The family is the one of the ``--method`` on the command line, read before the rest is parsed, so
    ``--method graphcl --help`` lists GraphCL's flags; a flag of another family is refused in one line naming it
    and the method. Flags default to ``None`` = not given, since the method's preset comes between the defaults
    and the flags. ``family_of`` maps a method to its family (a ``ValueError`` for an unknown method, which
    :func:`~gcc_sgcl.presets.config_from_args` reports), ``methods`` describes the valid methods, ``choices``
    (family → field → names) the values of augmentation settings whose set is a registry outside this module.
    """

    def __init__(self, family_of: Callable[[str], str], methods: str = "",
                 choices: dict[str, dict[str, Iterable[str]]] | None = None, method: str = DEFAULT_METHOD,
                 description: str = "gcc_sgcl pre-training",
                 preset_of: Callable[[str], dict[str, dict[str, Any]]] | None = None):
        self._settings = dict(family_of=family_of, methods=methods, choices=choices, description=description,
                              preset_of=preset_of)
        self.method, self.family = method, family_of(method)
        others = ", ".join(f for f in AUGMENT_FAMILIES if f != self.family)
        super().__init__(description=description, allow_abbrev=False, epilog=(
            f"The augment flags listed are those of method {method!r} ({self.family} family), with the values "
            f"{method!r} trains with shown as defaults. Another method's: --method <method> --help (other "
            f"families: {others}; e.g. --method {others.split(',')[0]} --help)."))
        self.add_argument("--method", default=DEFAULT_METHOD,
                          help=f"one of: {methods or 'a method preset'} (default: {DEFAULT_METHOD})")
        self.add_argument("--resume", action="store_true", help="continue from the run folder's checkpoint")
        try:
            preset = preset_of(method) if preset_of else {}
        except ValueError:  # an unknown method: reported with the valid methods once parsed
            preset = {}
        for group_name, klass in GROUPS.items():
            add_arguments(self, klass, prefix=f"{group_name}.", title=group_name, shown=preset.get(group_name))
        klass = AUGMENT_FAMILIES[self.family]
        add_arguments(self, klass, prefix="augment.", title=f"augment ({self.family} family: {klass.__name__})",
                      choices=(choices or {}).get(self.family), shown=preset.get("augment"))

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        argv = list(sys.argv[1:] if args is None else args)
        method = _given(argv, "--method") or DEFAULT_METHOD
        asks_help = "-h" in argv or "--help" in argv  # the help shows the method's own values
        try:
            family = self._settings["family_of"](method)
        except ValueError as err:  # an unknown or malformed method: one line with the valid methods
            self.error(f"argument --method: {err}")
        for token in argv[:argv.index("--") if "--" in argv else len(argv)]:
            owner = _family_flags().get(token.split("=", 1)[0])
            if owner not in (None, family):
                self.error(f"argument {token.split('=', 1)[0]}: a setting of the {owner} family, not of method "
                           f"{method!r} ({family} family; its flags: --method {method} --help)")
        if method != self.method and (family != self.family or asks_help):
            return PretrainParser(**self._settings, method=method).parse_known_args(argv, namespace)
        return super().parse_known_args(argv, namespace)


def _given(argv: Sequence[str], flag: str) -> str | None:
    """The last value of ``flag`` in ``argv`` (``flag value`` or ``flag=value``), None if not given."""
    value = None
    for i, token in enumerate(argv):
        if token == "--":
            break
        if token == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif token.startswith(flag + "="):
            value = token[len(flag) + 1:]
    return value


@functools.lru_cache(maxsize=None)
def _family_flags() -> dict[str, str]:
    """Every augmentation family's flags (``--no-`` forms included) → the family."""
    owners = {}
    for family, klass in AUGMENT_FAMILIES.items():
        hints = typing.get_type_hints(klass)
        for f in dataclasses.fields(klass):
            flag = flag_name(f.name, klass)
            owners.update({flag: family, **({"--no-" + flag[2:]: family} if hints[f.name] is bool else {})})
    return owners


# ---- the input settings every tool shares (each tool's own settings live beside it) ----

@dataclass
class InputConfig(Settings):
    """What a command reads: a pre-training run folder, the datasets, the data root and the device. Shared by the
    tools of several layers (``data.download``, ``classical``, ``engine.generate``, the tasks, ``experiments``,
    ``bench``), so it lives here, their lowest common layer; each tool's own settings live beside the tool."""

    load_path: str = setting("", "run folder (or checkpoint file) of a pre-training run; the tasks read its "
                                 "<dataset>.npy embeddings")
    dataset: list[str] = setting([], "registered dataset names or graph file paths")
    data_dir: str | None = setting(None, "data root (default: $GCC_SGCL_DATA, else ./data)")
    device: str = setting(default_of(TrainConfig, "device"), "torch device (the scripts map <gpu> to it)")
