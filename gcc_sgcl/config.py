"""All configuration in one place: dataclass groups and the argparse built from them.

Every field becomes a command-line flag (``rw_hops`` → ``--rw-hops``); the full configuration is stored in
each checkpoint, so ``generate`` needs only the run folder. This module imports nothing from the package; the
method presets (``gcc``, ``sgcl``, …) that fill these dataclasses live in :mod:`gcc_sgcl.presets`.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

MODES = ("e2e", "moco")
PE_SIGNS = ("random", "canonical")
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

def _check_probability(name: str, p: float) -> float:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {p}")
    return float(p)


@dataclass
class SamplingConfig:
    """RWR subgraph sampling and positional embedding (GCC's defaults)."""

    rw_hops: int = 256  # minimum visits collected per view; degree-dependent formula may ask for more
    restart_prob: float = 0.8
    walk_length: int = 10  # per-walk cap; P(no restart in 10 steps) = 0.2^10, so walks are effectively untruncated
    positional_embedding_size: int = 32
    pe_sign: str = "random"  # random: GCC's ARPACK random start (a ±1 per column per view); canonical: fixed signs


@dataclass
class ModelConfig:
    """GIN encoder (GCC's UnsupervisedGIN)."""

    hidden_size: int = 64
    num_layers: int = 5  # counts the input layer, as GCC
    degree_embedding_size: int = 16
    max_degree: int = 512
    dropout: float = 0.5
    readout: str = "sum"  # sum | set2set
    apply_node_func: bool = True  # batch norm + ReLU after each GIN layer's MLP, as GCC's ApplyNodeFunc


# What a field missing from a saved config means: the behaviour before the field existed (a saved config
# always holds every field of its day), so checkpoints written earlier rebuild the encoder they trained.
SAVED_BEFORE_FIELD: dict[str, dict[str, Any]] = {
    "model": {"apply_node_func": False},
    "sampling": {"pe_sign": "canonical"},
}


@dataclass
class TrainConfig:
    """Contrastive pre-training loop."""

    mode: str = "e2e"  # e2e | moco
    batch_size: int = 0  # 0: the paper's default for the mode (E2E 1024, MoCo 32)
    nce_k: int = 16384  # MoCo queue size (E2E uses the batch: K = batch_size - 1)
    nce_t: float = 0.07
    momentum: float = 0.999
    steps: int = 75000
    lr: float = 0.005
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 1e-5
    warmup_frac: float = 0.1
    decay_frac: float = 0.1
    clip_norm: float = 1.0
    num_workers: int = 0
    threads: int = 0  # torch threads of the model step (0: half the CPU cores); results depend on it, workers do not
    seed: int = 0
    save_freq: int = 1000
    log_freq: int = 10
    corpus: list[str] = field(default_factory=lambda: ["synthetic"])
    data_dir: str = ""  # "" → $GCC_SGCL_DATA, else ./data
    output_dir: str = "saved"
    run_name: str = ""  # "" → <method>_<mode>_<corpus>_s<seed>
    device: str = "cpu"

    def effective_batch_size(self) -> int:
        """The batch size actually used (mode default when ``batch_size`` is 0)."""
        if self.batch_size > 0:
            return self.batch_size
        return 1024 if self.mode == "e2e" else 32


@dataclass
class AugmentConfig:
    """Settings of :func:`~gcc_sgcl.augment.pipeline.build_pair_pipeline` (appendix, "Augmentation details
    and sequences"); each stage has a ``use_*`` flag so single-augmentation presets are expressible.

    From the paper: the crop table (``p_crop = 0.3``) and the grid for ``c`` (0.2 ... 0.45). *Not* stated
    in the paper, chosen here: ``p_filter``, ``t_max``, ``p_align``, ``p_mask``, ``p_reorder``, ``r_max``,
    ``max_masked`` (the appendix's ``M``), ``c`` (middle of the grid) and the crop ``basis`` (the paper's text
    reads as the normalised Laplacian of the embedding; its grid/path theorems hold for ``D - A``).

    The global embedding ``E_t`` (filter, align) must have as many columns as the positional embedding for
    ``Align``.

    ``baseline`` replaces SGCL's sequence by a contrastive baseline's view generation, re-implemented in GCC's
    structure-only setting (appendix, "Position of our work": GCC's encoder and training loop, ``PE`` as node
    features); the SGCL stages must then be off. Defaults and their sources:

    * ``graphcl`` (You et al., 2020): one of node dropping / subgraph / edge perturbation / attribute masking
      per view, uniformly, all at ratio 0.2 -- Shen-Lab/GraphCL ``semisupervised_TU/pre-training/main.py``
      (``--aug_ratio1/2 0.2``) and ``tu_dataset.py`` (``random4``).
    * ``grace`` (Zhu et al., 2020): edge removing 0.2 / 0.4 and feature masking 0.3 / 0.4 for the query /
      key view -- CRIPAC-DIG/GRACE ``config.yaml``, Cora (the script's default dataset, DBLP, uses
      0.1 / 0.4 and 0.1 / 0.0).
    * ``mvgrl`` (Hassani & Khasahmadi, 2020): the key view is the PPR diffusion of the key's structural view,
      ``alpha = 0.2`` (kavehhassani/mvgrl ``utils.compute_ppr``); MVGRL feeds the dense diffusion to its
      own encoder, GCC's ignores edge weights, so it is sparsified: top-``k`` per row with ``k`` = the view's
      mean degree (``mvgrl_topk = 0``) by default, or ``mvgrl_sparsify="threshold"`` at ``mvgrl_eps``
      (MVGRL's Citeseer threshold, chosen there from 1e-5 ... 1e-2 to match the mean degree; 1e-2 here).
    * ``gca`` (Zhu et al., 2021): degree-centrality scheme, edge dropping 0.3 / 0.4, feature masking
      0.1 / 0.0, cap ``p_tau = 0.7`` for both -- CRIPAC-DIG/GCA ``train.py`` ``default_param``
      (``drop_scheme='degree'``; ``drop_edge_weighted(threshold=0.7)``, ``drop_feature_weighted_2``'s default
      threshold 0.7).
    """

    # similar / diverse filter of the candidate random-walk pairs (before views are built)
    use_filter: bool = True
    filter_mode: str = "similar"  # or "diverse"
    p_filter: float = 0.5
    c: float = 0.3
    t_max: int = 5
    # crop, each view independently; crop_table rows are (box, probability), "no crop" takes the rest
    use_crop: bool = True
    crop_kind: str = "spectral"  # or "random" (control)
    crop_table: tuple[tuple[Box, float], ...] = PAPER_CROP_TABLE
    crop_basis: str = "normalized"  # or "combinatorial"
    recompute_pe: bool = True
    # alignment to E_t, one draw for the pair
    use_align: bool = True
    p_align: float = 0.5
    # mask | reorder | nothing, each view independently (mask and reorder are mutually exclusive)
    use_mask: bool = True
    p_mask: float = 0.25
    max_masked: int = 8
    use_reorder: bool = True
    p_reorder: float = 0.25
    r_max: int = 10
    permute_kind: str = "spectral"  # or "random" (control)
    # global embedding E_t (see gcc_sgcl.augment.global_embedding)
    global_method: str = "netmf"
    global_window: int = 1
    # baseline view generation instead of SGCL's ("" = none); key of gcc_sgcl.augment.pipeline.BASELINES
    baseline: str = ""
    graphcl_ratio: float = 0.2
    grace_drop_edge_q: float = 0.2
    grace_drop_edge_k: float = 0.4
    grace_drop_feature_q: float = 0.3
    grace_drop_feature_k: float = 0.4
    mvgrl_alpha: float = 0.2
    mvgrl_sparsify: str = "topk"  # or "threshold"; key of gcc_sgcl.augment.pipeline.SPARSIFIERS
    mvgrl_topk: int = 0  # 0: the structural view's mean degree (rounded, at least 1)
    mvgrl_eps: float = 1e-2
    gca_drop_edge_q: float = 0.3
    gca_drop_edge_k: float = 0.4
    gca_drop_feature_q: float = 0.1
    gca_drop_feature_k: float = 0.0
    gca_p_tau: float = 0.7

    def __post_init__(self) -> None:
        used = self.p_mask * self.use_mask + self.p_reorder * self.use_reorder
        if used > 1.0 + 1e-9:
            raise ValueError(f"p_mask + p_reorder must be <= 1 (they are exclusive), got {used}")
        stages = [stage for stage in STAGES if getattr(self, f"use_{stage}")]
        if self.baseline and stages:
            on = ", ".join(f"use_{stage}" for stage in stages)
            raise ValueError(f"baseline {self.baseline!r} replaces the SGCL stages: use its preset or switch off {on}")
        for f in dataclasses.fields(self):
            if f.name.startswith(("graphcl_", "grace_", "gca_")):
                _check_probability(f.name, getattr(self, f.name))
        if not 0.0 < self.mvgrl_alpha <= 1.0:
            raise ValueError(f"mvgrl_alpha must be in (0, 1], got {self.mvgrl_alpha}")
        if self.mvgrl_topk < 0:
            raise ValueError(f"mvgrl_topk must be >= 0 (0: the view's mean degree), got {self.mvgrl_topk}")
        if not 0.0 < self.mvgrl_eps <= 1.0:
            raise ValueError(f"mvgrl_eps must be in (0, 1], got {self.mvgrl_eps}")

    @property
    def p_crop(self) -> float:
        """Probability that a view is cropped (the appendix's ``c_1 + ... + c_4``)."""
        return sum(p for _, p in self.crop_table)

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


GROUPS = {"sampling": SamplingConfig, "model": ModelConfig, "train": TrainConfig, "augment": AugmentConfig}


@dataclass
class Config:
    """A full run configuration."""

    method: str = "gcc"
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    augment: AugmentConfig = field(default_factory=AugmentConfig)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the offending parameter."""
        t, s = self.train, self.sampling
        if t.mode not in MODES:
            raise ValueError(f"--mode must be one of {MODES}, got {t.mode!r}")
        if t.threads < 0:
            raise ValueError(f"--threads must be >= 0 (0: half the CPU cores), got {t.threads}")
        if t.steps < 0:
            raise ValueError(f"--steps must be >= 0 (0: the untrained encoder), got {t.steps}")
        if s.pe_sign not in PE_SIGNS:
            raise ValueError(f"--pe-sign must be one of {PE_SIGNS}, got {s.pe_sign!r}")
        if t.num_workers < 0:
            raise ValueError(f"--num-workers must be >= 0 (0 = build batches in the main process), got {t.num_workers}")
        if min(t.save_freq, t.log_freq) < 1:
            raise ValueError(f"--save-freq and --log-freq must be >= 1, got {t.save_freq} and {t.log_freq}")
        if not 0.0 < s.restart_prob < 1.0:
            raise ValueError(f"--restart-prob must be in (0, 1), got {s.restart_prob}")
        if t.warmup_frac + t.decay_frac > 1.0 or min(t.warmup_frac, t.decay_frac) < 0:
            raise ValueError("--warmup-frac and --decay-frac must be >= 0 and sum to at most 1")
        if t.mode == "moco" and t.nce_k % t.effective_batch_size() != 0:
            raise ValueError(
                f"MoCo needs --nce-k ({t.nce_k}) to be a multiple of the batch size ({t.effective_batch_size()})"
            )
        if t.mode == "e2e" and t.effective_batch_size() < 2:
            raise ValueError("E2E needs --batch-size >= 2 (negatives come from the batch)")

    def run_dir_name(self) -> str:
        """``<method>_<mode>_<corpus>_s<seed>`` unless ``--run-name`` is given (a corpus given by path goes by
        its file name)."""
        if self.train.run_name:
            return self.train.run_name
        corpus = "+".join(os.path.basename(os.path.normpath(c)) for c in self.train.corpus)
        return f"{self.method}_{self.train.mode}_{corpus}_s{self.train.seed}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form stored in checkpoints."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Config":
        """Inverse of :meth:`to_dict`; unknown keys are rejected with their name, missing ones take the value
        of :data:`SAVED_BEFORE_FIELD` if listed there (the behaviour before they existed), else the default."""
        groups = {}
        for name, klass in GROUPS.items():
            known = {f.name for f in dataclasses.fields(klass)}
            extra = set(d.get(name, {})) - known
            if extra:
                raise ValueError(f"unknown {name} config keys: {sorted(extra)}")
            values = {**SAVED_BEFORE_FIELD.get(name, {}), **d.get(name, {})}
            if "crop_table" in values:
                values["crop_table"] = tuple((tuple(box), float(p)) for box, p in values["crop_table"])
            groups[name] = klass(**values)
        return cls(method=d.get("method", "gcc"), **groups)

    def augmented(self) -> bool:
        """Whether any augmentation is enabled: an SGCL stage or a baseline's (``gcc`` has none)."""
        return bool(self.augment.baseline) or any(getattr(self.augment, f"use_{stage}") for stage in STAGES)


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


# Flags whose values need their own parser (name → (argparse type, nargs)).
_SPECIAL_FLAGS: dict[str, tuple[Callable[[str], Any], str]] = {"crop_table": (parse_crop_entry, "+")}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def build_parser(description: str = "gcc_sgcl pre-training", methods: str = "") -> argparse.ArgumentParser:
    """An argparse parser with one flag per config field (defaults left as ``None`` = not given); ``methods``
    describes the valid ``--method`` values."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--method", default="gcc", help=f"one of: {methods or 'a method preset'} (default: gcc)")
    parser.add_argument("--resume", action="store_true", help="continue from the run folder's checkpoint")
    for group_name, klass in GROUPS.items():
        group = parser.add_argument_group(group_name)
        hints = typing.get_type_hints(klass)
        for f in dataclasses.fields(klass):
            hint = hints[f.name]
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            kwargs: dict[str, Any] = {"default": None, "dest": f"{group_name}.{f.name}", "help": f"(default: {default})"}
            if f.name in _SPECIAL_FLAGS:
                kwargs["type"], kwargs["nargs"] = _SPECIAL_FLAGS[f.name]
            elif hint is bool:
                kwargs["action"] = argparse.BooleanOptionalAction
            elif typing.get_origin(hint) is list:
                kwargs.update(nargs="+", type=typing.get_args(hint)[0])
            else:
                kwargs["type"] = hint
            if hint is not bool:
                kwargs["metavar"] = f.name.upper()
            group.add_argument(_flag(f.name), **kwargs)
    return parser


