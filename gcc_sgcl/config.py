"""All configuration in one place: dataclass groups, method presets, and the argparse built from them.

Every field becomes a command-line flag (``rw_hops`` → ``--rw-hops``); the full configuration is stored in
each checkpoint, so ``generate`` needs only the run folder.
"""
from __future__ import annotations

import argparse
import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

from gcc_sgcl.augment.config import STAGES, AugmentConfig
from gcc_sgcl.augment.functional import Box
from gcc_sgcl.augment.pipeline import BASELINES

MODES = ("e2e", "moco")


@dataclass
class SamplingConfig:
    """RWR subgraph sampling and positional embedding (GCC's defaults)."""

    rw_hops: int = 256  # minimum visits collected per view; degree-dependent formula may ask for more
    restart_prob: float = 0.8
    walk_length: int = 10  # per-walk cap; P(no restart in 10 steps) = 0.2^10, so walks are effectively untruncated
    positional_embedding_size: int = 32


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
SAVED_BEFORE_FIELD: dict[str, dict[str, Any]] = {"model": {"apply_node_func": False}}


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
        preset_overrides(self.method)  # raises for an unknown method
        t, s = self.train, self.sampling
        if t.mode not in MODES:
            raise ValueError(f"--mode must be one of {MODES}, got {t.mode!r}")
        if t.steps < 1:
            raise ValueError(f"--steps must be >= 1, got {t.steps}")
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
        """``<method>_<mode>_<corpus>_s<seed>`` unless ``--run-name`` is given."""
        if self.train.run_name:
            return self.train.run_name
        corpus = "+".join(self.train.corpus)
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


# Method presets: name → overrides applied to the defaults before command-line flags. ``gcc`` switches
# every SGCL stage off, ``sgcl`` keeps them all (the appendix's sequence); ``sgcl-<stage>`` keeps one stage;
# the two controls replace the spectral crop / reorder by their random analogues; ``sgcl-<a>+<b>`` keeps two
# stages (the pairwise ablation), e.g. ``sgcl-crop+reorder``. ``graphcl``, ``grace``, ``mvgrl`` and ``gca`` keep
# GCC's encoder and loop and replace only the view generation (Table 2's re-implemented baselines).
_ALL_OFF = {f"use_{stage}": False for stage in STAGES}
SINGLE_STAGES: dict[str, dict[str, Any]] = {
    "crop": {"use_crop": True},
    "reorder": {"use_reorder": True},
    "mask": {"use_mask": True},
    "align": {"use_align": True},
    "similar": {"use_filter": True, "filter_mode": "similar"},
    "diverse": {"use_filter": True, "filter_mode": "diverse"},
    "random-crop": {"use_crop": True, "crop_kind": "random"},
    "random-permute": {"use_reorder": True, "permute_kind": "random"},
}
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "gcc": {"augment": dict(_ALL_OFF)},
    "sgcl": {},
    **{f"sgcl-{name}": {"augment": {**_ALL_OFF, **stage}} for name, stage in SINGLE_STAGES.items()},
    **{name: {"augment": {**_ALL_OFF, "baseline": name}} for name in BASELINES},
}


def method_names() -> str:
    """Human-readable list of valid ``<method>`` values."""
    return ", ".join(PRESETS) + ", sgcl-<a>+<b> (any two of: " + ", ".join(SINGLE_STAGES) + ")"


def preset_overrides(method: str) -> dict[str, dict[str, Any]]:
    """The config overrides of ``method``; ``sgcl-a+b`` merges two single-stage presets."""
    if method in PRESETS:
        return {group: dict(values) for group, values in PRESETS[method].items()}
    parts = method[len("sgcl-"):].split("+") if method.startswith("sgcl-") else []
    if len(parts) != 2 or not all(p in SINGLE_STAGES for p in parts) or parts[0] == parts[1]:
        raise ValueError(f"unknown method {method!r}; valid methods: {method_names()}")
    first, second = (SINGLE_STAGES[p] for p in parts)
    clash = {k for k in set(first) & set(second) if first[k] != second[k]}
    if clash:
        raise ValueError(f"method {method!r} combines contradictory settings of {sorted(clash)}")
    return {"augment": {**_ALL_OFF, **first, **second}}


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


def build_parser(description: str = "gcc_sgcl pre-training") -> argparse.ArgumentParser:
    """An argparse parser with one flag per config field (defaults left as ``None`` = not given)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--method", default="gcc", help=f"one of: {method_names()}")
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
            group.add_argument(_flag(f.name), **kwargs)
    return parser


def make_config(method: str = "gcc", overrides: dict[str, dict[str, Any]] | None = None) -> Config:
    """Defaults ← the method's preset ← ``overrides`` (``{"train": {"steps": 10}, …}``); validated."""
    cfg = Config(method=method)
    merged = preset_overrides(method)
    for group, values in (overrides or {}).items():
        if group not in GROUPS:
            raise ValueError(f"unknown config group {group!r}; groups: {', '.join(GROUPS)}")
        merged.setdefault(group, {}).update(values)
    for group, values in merged.items():
        if "crop_table" in values:
            values["crop_table"] = tuple(values["crop_table"])
        setattr(cfg, group, dataclasses.replace(getattr(cfg, group), **values))
    cfg.validate()
    return cfg


def config_from_args(args: argparse.Namespace) -> Config:
    """Defaults ← method preset ← explicitly given flags; an unknown method exits listing the valid ones."""
    overrides: dict[str, dict[str, Any]] = {}
    for key, value in vars(args).items():
        if "." in key and value is not None:
            group, name = key.split(".", 1)
            overrides.setdefault(group, {})[name] = value
    try:
        return make_config(args.method, overrides)
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None
