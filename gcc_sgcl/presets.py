"""Method presets (``gcc``, ``sgcl``, single stages, controls, pairs, baselines) and the configs built from them.

Sits above :mod:`gcc_sgcl.augment` (the baselines' names come from its registry) so that :mod:`gcc_sgcl.config`
stays a leaf.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
from typing import Any

from gcc_sgcl.augment.crop import CROP_BASES, CROPS
from gcc_sgcl.augment.filter import FILTER_MODES
from gcc_sgcl.augment.global_embedding import GLOBAL_EMBEDDINGS
from gcc_sgcl.augment.pipeline import BASELINES, PERMUTE_KINDS, SPARSIFIERS
from gcc_sgcl.config import GROUPS, STAGES, AugmentConfig, Config, build_parser, flag_name, given_flags
from gcc_sgcl.method import VARIANT_SETTINGS, MethodSpec

# Method presets: name → overrides applied to the defaults before command-line flags. ``gcc`` switches
# every SGCL stage off, ``sgcl`` keeps them all (the appendix's sequence); ``sgcl-<stage>`` keeps one stage;
# ``sgcl-random-crop`` / ``sgcl-random-permute`` keep one control alone (the appendix's ablation, SGCL with a stage
# swapped for its random analogue, is ``sgcl[crop=random]`` / ``sgcl[permute=random]``); ``sgcl-<a>+<b>`` keeps two
# stages (the pairwise ablation), e.g. ``sgcl-crop+reorder``; ``sgcl-no-<stage>`` is SGCL without one stage (the
# leave-one-out ablation, stages of :data:`~gcc_sgcl.config.STAGES`). ``graphcl``, ``grace``, ``mvgrl`` and ``gca`` keep
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
    **{f"sgcl-no-{stage}": {"augment": {f"use_{stage}": False}} for stage in STAGES},
    **{name: {"augment": {**_ALL_OFF, "baseline": name}} for name in BASELINES},
}


def method_names() -> str:
    """Human-readable list of valid ``<method>`` values."""
    return (", ".join(PRESETS) + ", sgcl-<a>+<b> (any two of: " + ", ".join(SINGLE_STAGES) + "), any of them "
            "with settings in brackets: <method>[" + ",".join(f"{k}=..." for k in VARIANT_SETTINGS) + "]")


def preset_overrides(method: str) -> dict[str, dict[str, Any]]:
    """The config overrides of ``method``; ``sgcl-a+b`` merges two single-stage presets; settings in brackets
    (:meth:`~gcc_sgcl.method.MethodSpec.overrides`) apply last."""
    spec = MethodSpec.parse(method)
    merged = _preset(spec.preset)
    for group, values in spec.overrides().items():
        merged.setdefault(group, {}).update(values)
    return merged


def _preset(method: str) -> dict[str, dict[str, Any]]:
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


def make_config(method: str = "gcc", overrides: dict[str, dict[str, Any]] | None = None) -> Config:
    """Defaults ← the method's preset ← ``overrides`` (``{"train": {"steps": 10}, …}``); validated. The method
    is stored under its canonical name (:class:`~gcc_sgcl.method.MethodSpec`); an override may not contradict a
    bracketed setting."""
    merged = preset_overrides(method)
    bracketed = MethodSpec.parse(method).overrides()
    cfg = Config(method=str(MethodSpec.parse(method)))
    for group, values in (overrides or {}).items():
        if group not in GROUPS:
            raise ValueError(f"unknown config group {group!r}; groups: {', '.join(GROUPS)}")
        clash = {f for f, v in values.items() if f in bracketed.get(group, {}) and v != bracketed[group][f]}
        if clash:
            raise ValueError(f"method {method!r} sets {', '.join(sorted(clash))} in brackets; a flag gives another "
                             f"value ({', '.join(f'{f}={values[f]}' for f in sorted(clash))})")
        merged.setdefault(group, {}).update(values)
    for group, values in merged.items():
        if "crop_table" in values:
            values["crop_table"] = tuple(values["crop_table"])
        setattr(cfg, group, dataclasses.replace(getattr(cfg, group), **values))
    cfg.validate()
    _check_variant(method, bracketed, cfg)
    return cfg


def _read_settings(augment: AugmentConfig) -> dict[str, bool]:
    """Per bracketable augment setting, whether a stage of ``augment`` reads it (a baseline reads none of SGCL's)."""
    sgcl = not augment.baseline
    return {"c": sgcl and augment.use_filter, "crop_kind": sgcl and augment.use_crop,
            "permute_kind": sgcl and augment.use_reorder, "crop_basis": sgcl and augment.use_crop}


@functools.lru_cache(maxsize=None)
def reads_c(method: str) -> bool:
    """Whether ``method``'s views pass SGCL's similar/diverse filter, the one stage that reads ``c``.

    >>> reads_c("sgcl"), reads_c("sgcl-crop+similar"), reads_c("sgcl-crop"), reads_c("graphcl")
    (True, True, False, False)
    """
    return _read_settings(make_config(method).augment)["c"]


def augment_choices() -> dict[str, tuple[str, ...]]:
    """The valid names of each augmentation setting whose values are a registry's (the flags' choices)."""
    return {"filter_mode": FILTER_MODES, "crop_kind": tuple(CROPS), "permute_kind": tuple(PERMUTE_KINDS),
            "crop_basis": tuple(CROP_BASES), "global_method": tuple(GLOBAL_EMBEDDINGS),
            "mvgrl_sparsify": tuple(SPARSIFIERS), "baseline": ("", *BASELINES)}


def _check_variant(method: str, bracketed: dict[str, dict[str, Any]], cfg: Config) -> None:
    """A ValueError naming a bracketed setting the method cannot use (no stage reads it) or an unknown name of a
    registry-valued setting (:func:`augment_choices`), named by its flag."""
    a = cfg.augment
    for field, used in _read_settings(a).items():
        if field in bracketed.get("augment", {}) and not used:
            raise ValueError(f"method {method!r}: its {field} has no effect (the method has no stage reading it)")
    for field, names in augment_choices().items():
        if getattr(a, field) not in names:
            raise ValueError(f"{flag_name(field)} must be one of {', '.join(n or repr(n) for n in names)}, got "
                             f"{getattr(a, field)!r} (method {method!r})")


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
    reads = _read_settings(make_config(spec.preset).augment)
    inherited = {name: value for name, value in MethodSpec.parse(like).settings
                 if reads.get(VARIANT_SETTINGS[name][1], True)}
    extra = MethodSpec.parse(f"{spec.preset}[{','.join(settings)}]").values if settings else {}
    return str(MethodSpec.of(spec.preset, {**inherited, **spec.values, **extra}))


def config_from_args(args: argparse.Namespace) -> Config:
    """Defaults ← method preset ← explicitly given flags; an unknown method exits listing the valid ones."""
    overrides = {group: given_flags(klass, args, f"{group}.") for group, klass in GROUPS.items()}
    try:
        return make_config(args.method, overrides)
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None


def pretrain_parser(description: str = "gcc_sgcl pre-training") -> argparse.ArgumentParser:
    """:func:`~gcc_sgcl.config.build_parser` listing the valid methods."""
    return build_parser(description, method_names(), {"augment": augment_choices()})
