"""Method presets (``gcc``, ``sgcl``, single stages, controls, pairs, baselines), the configs built from them and
pre-training's command line (:class:`PretrainParser`), whose flags and shown defaults depend on the method.

A preset chooses the augmentation family (:data:`~gcc_sgcl.config.AUGMENT_FAMILIES`: SGCL's stages, or a baseline's
view generation) and sets some of its settings. Sits above :mod:`gcc_sgcl.augment` (the baselines' names and the
settings' valid names come from its registries) so that :mod:`gcc_sgcl.config` stays a leaf.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gcc_sgcl.augment.crop import CROP_BASES, CROPS
from gcc_sgcl.augment.filter import FILTER_MODES
from gcc_sgcl.augment.global_embedding import GLOBAL_EMBEDDINGS
from gcc_sgcl.augment.mvgrl import DIFFUSIONS
from gcc_sgcl.augment.pipeline import BASELINES, PERMUTE_KINDS, SPARSIFIERS
from gcc_sgcl.config import AUGMENT_FAMILIES, GROUPS, STAGES, AugmentConfig, Config
from gcc_sgcl.method import VARIANT_SETTINGS, MethodSpec
from gcc_sgcl.settings import OneLineParser, add_arguments, flag_name, flag_names, given_flags


@dataclass(frozen=True)
class Preset:
    """A method preset: its augmentation ``family`` and the settings of that family it sets."""

    family: str = AugmentConfig.FAMILY
    augment: dict[str, Any] = dataclasses.field(default_factory=dict)


# Method presets: name → family and settings, applied to the family's defaults before command-line flags. ``gcc``
# switches every SGCL stage off, ``sgcl`` keeps them all (the appendix's sequence); ``sgcl-<stage>`` keeps one stage;
# ``sgcl-random-crop`` / ``sgcl-random-permute`` keep one control alone (the appendix's ablation, SGCL with a stage
# swapped for its random analogue, is ``sgcl[crop=random]`` / ``sgcl[permute=random]``); ``sgcl-<a>+<b>`` keeps two
# stages (the pairwise ablation), e.g. ``sgcl-crop+reorder``; ``sgcl-no-<stage>`` is SGCL without one stage (the
# leave-one-out ablation, stages of :data:`~gcc_sgcl.config.STAGES`). ``graphcl``, ``grace``, ``mvgrl`` and ``gca`` keep
# GCC's encoder and loop and replace only the view generation (Table 2's re-implemented baselines): their family.
_ALL_OFF = {f"use_{stage}": False for stage in STAGES}
FILTER_C = 0.4
"""SGCL's filter threshold c in every preset whose views pass the filter (``sgcl``, ``sgcl-no-crop``,
``sgcl-similar``, …) when no bracket or flag gives one: the value the c grid chose on the tables' own columns
(docs/results.md, "c grid"), behind the tables' ``sgcl`` row and the shipped encoders. The paper grid-searches
0.2, 0.25, 0.3, 0.35, 0.4, 0.45 and states no choice; before the grid this code used its middle, 0.3
(:class:`~gcc_sgcl.config.AugmentConfig`'s default, the value stored in old rows and checkpoints named plain
``sgcl``, which read as ``sgcl[c=0.3]``: :func:`current_name`)."""
LEAVE_ONE_OUT = "sgcl-no-"  # sgcl-no-<stage>: SGCL without one stage of STAGES (the leave-one-out ablation)
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
PRESETS: dict[str, Preset] = {
    "gcc": Preset(augment=_ALL_OFF),
    "sgcl": Preset(),
    **{f"sgcl-{name}": Preset(augment={**_ALL_OFF, **stage}) for name, stage in SINGLE_STAGES.items()},
    **{f"{LEAVE_ONE_OUT}{stage}": Preset(augment={f"use_{stage}": False}) for stage in STAGES},
    **{name: Preset(family=name) for name in BASELINES},
    "mvgrl-heat": Preset(family="mvgrl", augment={"diffusion": "heat"}),  # the SGCL paper's runtime column
}


def method_names() -> str:
    """Human-readable list of valid ``<method>`` values."""
    return (", ".join(PRESETS) + ", sgcl-<a>+<b> (any two of: " + ", ".join(SINGLE_STAGES) + "), any of them "
            "with settings in brackets: <method>[" + ",".join(f"{k}=..." for k in VARIANT_SETTINGS) + "]")


def preset_of(method: str) -> Preset:
    """The preset of ``method`` (its bracketed settings aside); ``sgcl-a+b`` merges two single-stage presets. A
    joined name (``sgcl ⊕ structural``) labels rows, it is not a method to train: a ``ValueError``."""
    spec = MethodSpec.parse(method)
    if spec.joined:
        raise ValueError(f"{method!r} names rows joined to a training-free vector, not a method to pre-train; "
                         f"train {str(spec.encoder)!r} (the sweep's --with-structural adds the joined rows)")
    name = spec.preset
    if name in PRESETS:
        return PRESETS[name]
    parts = name[len("sgcl-"):].split("+") if name.startswith("sgcl-") else []
    if len(parts) != 2 or not all(p in SINGLE_STAGES for p in parts) or parts[0] == parts[1]:
        raise ValueError(f"unknown method {name!r}; valid methods: {method_names()}")
    first, second = (SINGLE_STAGES[p] for p in parts)
    clash = {k for k in set(first) & set(second) if first[k] != second[k]}
    if clash:
        raise ValueError(f"method {name!r} combines contradictory settings of {sorted(clash)}")
    return Preset(augment={**_ALL_OFF, **first, **second})


def family_of(method: str) -> str:
    """The augmentation family of ``method`` (a ``ValueError`` names an unknown method).

    >>> family_of("gcc"), family_of("sgcl-crop+reorder[c=0.4]"), family_of("mvgrl")
    ('sgcl', 'sgcl', 'mvgrl')
    """
    return preset_of(method).family


def make_config(method: str = "gcc", overrides: dict[str, dict[str, Any]] | None = None) -> Config:
    """Defaults ← the method's preset ← ``overrides`` (``{"train": {"steps": 10}, "augment": {…}, …}``, ``augment``
    holding settings of the method's family); checked. The method is stored under its canonical name
    (:class:`~gcc_sgcl.method.MethodSpec`); an override may not contradict a bracketed setting."""
    preset, bracketed = preset_of(method), MethodSpec.parse(method).overrides()
    klass = AUGMENT_FAMILIES[preset.family]
    _check_variant(method, bracketed, klass(**{**preset.augment, **bracketed.get("augment", {})})
                   if preset.family == AugmentConfig.FAMILY else None)
    merged: dict[str, dict[str, Any]] = {"augment": dict(preset.augment)}
    for group, values in bracketed.items():
        merged.setdefault(group, {}).update(values)
    for group, values in (overrides or {}).items():
        if group not in (*GROUPS, "augment"):
            raise ValueError(f"unknown config group {group!r}; groups: {', '.join((*GROUPS, 'augment'))}")
        clash = {f for f, v in values.items() if f in bracketed.get(group, {}) and v != bracketed[group][f]}
        if clash:
            raise ValueError(f"method {method!r} sets {', '.join(sorted(clash))} in brackets; a flag gives another "
                             f"value ({', '.join(f'{f}={values[f]}' for f in sorted(clash))})")
        merged.setdefault(group, {}).update(values)
    foreign = sorted(set(merged["augment"]) - {f.name for f in dataclasses.fields(klass)})
    if foreign:
        raise ValueError(f"method {method!r} ({preset.family} family) has no augment setting {foreign[0]!r}; its "
                         f"settings: {', '.join(f.name for f in dataclasses.fields(klass))}")
    if "crop_table" in merged["augment"]:
        merged["augment"]["crop_table"] = tuple(merged["augment"]["crop_table"])
    augment = klass(**merged["augment"])
    if _read_settings(_sgcl_augment(augment))["c"] and "c" not in merged["augment"]:
        augment = dataclasses.replace(augment, c=FILTER_C)
    _check_choices(method, augment)
    return Config(method=_named(method, augment), augment=augment,
                  **{group: klass(**merged.get(group, {})) for group, klass in GROUPS.items()})


def _sgcl_augment(augment: Any) -> AugmentConfig | None:
    return augment if isinstance(augment, AugmentConfig) else None


def _named(method: str, augment: Any) -> str:
    """The canonical name of ``method`` trained with ``augment``: a method whose views pass the filter names its c
    (``sgcl`` → ``sgcl[c=0.4]``), so a name says the c it trained with whichever way c was given."""
    spec = MethodSpec.parse(method)
    if _read_settings(_sgcl_augment(augment))["c"]:
        spec = spec.with_settings(c=augment.c)
    return str(spec)


@functools.lru_cache(maxsize=None)
def canonical_name(method: str) -> str:
    """The name a run, a row and a shipped encoder of ``method`` carry (:func:`make_config`'s): SGCL's filter
    threshold written out, a joined vector kept.

    >>> canonical_name("sgcl"), canonical_name("sgcl-no-crop"), canonical_name("sgcl-crop"), canonical_name("gcc")
    ('sgcl[c=0.4]', 'sgcl-no-crop[c=0.4]', 'sgcl-crop', 'gcc')
    >>> canonical_name("sgcl[c=0.35] ⊕ structural")
    'sgcl[c=0.35] ⊕ structural'
    """
    spec = MethodSpec.parse(method)
    return str(MethodSpec.parse(make_config(str(spec.encoder)).method).join(spec.joined))


def current_name(method: str, augment: dict[str, Any] | None) -> str:
    """The canonical name of a stored row or checkpoint of ``method`` trained with the stored ``augment`` settings:
    one named before names carried c (plain ``sgcl`` at the then default 0.3) gains the c it trained with.

    >>> current_name("sgcl", {"use_filter": True, "c": 0.3}), current_name("sgcl[c=0.4]", {"c": 0.4})
    ('sgcl[c=0.3]', 'sgcl[c=0.4]')
    >>> current_name("gcc ⊕ structural", {"use_filter": False, "c": 0.3}), current_name("prone", None)
    ('gcc ⊕ structural', 'prone')
    """
    try:
        spec = MethodSpec.parse(method)
        reads = settings_read(spec.preset)["c"]
    except ValueError:  # a training-free method, or a name of other code
        return method
    if not reads or spec.get("c") is not None or not augment or "c" not in augment or not augment.get("use_filter", True):
        return method
    return str(spec.with_settings(c=float(augment["c"])))


def _read_settings(augment: AugmentConfig | None) -> dict[str, bool]:
    """Per bracketable augment setting, whether a stage of ``augment`` reads it (a baseline, None, reads none)."""
    sgcl = augment is not None
    return {"c": sgcl and augment.use_filter, "crop_kind": sgcl and augment.use_crop,
            "permute_kind": sgcl and augment.use_reorder, "crop_basis": sgcl and augment.use_crop}


@functools.lru_cache(maxsize=None)
def settings_read(method: str) -> Mapping[str, bool]:
    """Per setting a method's name may bracket (:data:`~gcc_sgcl.method.VARIANT_SETTINGS`' augment fields), whether
    a stage of ``method``'s views reads it (``c``: SGCL's similar/diverse filter; a baseline reads none).

    >>> dict(settings_read("sgcl-crop"))
    {'c': False, 'crop_kind': True, 'permute_kind': False, 'crop_basis': True}
    """
    return types.MappingProxyType(_read_settings(_sgcl_augment(make_config(method).augment)))


def augment_choices() -> dict[str, dict[str, tuple[str, ...]]]:
    """Per augmentation family, the valid names of each setting whose values are a registry's (the flags' choices)."""
    return {"sgcl": {"filter_mode": FILTER_MODES, "crop_kind": tuple(CROPS), "permute_kind": tuple(PERMUTE_KINDS),
                     "crop_basis": tuple(CROP_BASES), "global_method": tuple(GLOBAL_EMBEDDINGS)},
            "mvgrl": {"sparsify": tuple(SPARSIFIERS), "diffusion": tuple(DIFFUSIONS)}}


def _check_variant(method: str, bracketed: dict[str, dict[str, Any]], sgcl: AugmentConfig | None) -> None:
    """A ValueError naming a bracketed setting the method cannot use (no stage of its SGCL settings ``sgcl``, None
    for a baseline, reads it)."""
    for field, used in _read_settings(sgcl).items():
        if field in bracketed.get("augment", {}) and not used:
            raise ValueError(f"method {method!r}: its {field} has no effect (the method has no stage reading it)")


def _check_choices(method: str, augment: Any) -> None:
    """A ValueError naming, by its flag, a registry-valued setting of ``augment`` with an unknown name
    (:func:`augment_choices`)."""
    for field, names in augment_choices().get(augment.FAMILY, {}).items():
        if getattr(augment, field) not in names:
            raise ValueError(f"{flag_name(field, type(augment))} must be one of {', '.join(names)}, got "
                             f"{getattr(augment, field)!r} (method {method!r})")


def config_from_args(args: argparse.Namespace) -> Config:
    """Defaults ← method preset ← explicitly given flags; an unknown method exits listing the valid ones."""
    try:
        family = family_of(args.method)
        overrides = {group: given_flags(klass, args, f"{group}.") for group, klass in
                     {**GROUPS, "augment": AUGMENT_FAMILIES[family]}.items()}
        return make_config(args.method, overrides)
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None


def trained_settings(method: str) -> dict[str, dict[str, Any]]:
    """Every setting ``method`` trains with when no flag is given, by group (``--help`` shows them as defaults).

    >>> trained_settings("gcc")["augment"]["use_filter"], trained_settings("sgcl[c=0.4]")["augment"]["c"]
    (False, 0.4)
    """
    cfg = make_config(method)
    return {group: {f.name: getattr(getattr(cfg, group), f.name) for f in dataclasses.fields(getattr(cfg, group))}
            for group in (*GROUPS, "augment")}


def settings_beyond_preset(cfg: Config, skip: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """``{"group.field": value}`` of every setting of ``cfg`` that differs from its method's bare preset (the
    bracketed ones of ``sgcl[c=0.35]``, or any flag given at pre-training), in config order, leaving out the
    ``(group, field)`` pairs of ``skip``.

    >>> settings_beyond_preset(make_config("sgcl[c=0.35]", {"train": {"seed": 3, "lr": 0.001}}), (("train", "seed"),))
    {'train.lr': 0.001, 'augment.c': 0.35}
    """
    preset = make_config(MethodSpec.parse(cfg.method).preset).to_dict()
    return {f"{group}.{name}": value for group, values in cfg.to_dict().items() if isinstance(values, dict)
            for name, value in values.items()
            if (group, name) not in skip and value != preset.get(group, {}).get(name)}


DEFAULT_METHOD = "gcc"


PROG_ENV = "GCC_SGCL_PROG"
"""How the user called pre-training, for its usage line (``scripts/pretrain.sh`` sets it)."""


class PretrainParser(OneLineParser):
    """Pre-training's command line: ``--method``, ``--resume``, one flag per field of every group of
    :data:`~gcc_sgcl.config.GROUPS` (dest ``<group>.<field>``) and of the method's augmentation family (dest
    ``augment.<field>``, the registries' names as the choices of :func:`augment_choices`).

    The family is the one of the ``--method`` on the command line, read before the rest is parsed, so
    ``--method graphcl --help`` lists GraphCL's flags with the values it trains with (:func:`trained_settings`)
    as defaults; a flag of another family, or an unknown method, is refused in one line naming it. Flags default
    to ``None`` = not given, since the method's preset comes between the defaults and the flags
    (:func:`config_from_args`).
    """

    def __init__(self, method: str = DEFAULT_METHOD, description: str = "gcc_sgcl pre-training",
                 extras: Sequence[tuple[type, str]] = (), epilog: str | None = None):
        self.method, self.family = method, family_of(method)
        self.extras, self.extra_epilog = tuple(extras), epilog
        others = ", ".join(f for f in AUGMENT_FAMILIES if f != self.family)
        prog = os.environ.get(PROG_ENV) or "python -m gcc_sgcl.engine.pretrain"
        super().__init__(prog=prog, description=description, allow_abbrev=False, epilog=epilog or (
            f"The augment flags listed are those of method {method!r} ({self.family} family), with the values "
            f"{method!r} trains with shown as defaults. Another method's: --method <method> --help (other "
            f"families: {others}; e.g. --method {others.split(',')[0]} --help)."))
        self.add_argument("--method", default=DEFAULT_METHOD,
                          help=f"one of: {method_names()} (default: {DEFAULT_METHOD})")
        self.add_argument("--resume", action="store_true", help="continue from the run folder's checkpoint")
        try:
            preset = trained_settings(method)
        except ValueError:  # an unknown method: reported with the valid methods once parsed
            preset = {}
        for group_name, klass in GROUPS.items():
            add_arguments(self, klass, prefix=f"{group_name}.", title=group_name, shown=preset.get(group_name))
        klass = AUGMENT_FAMILIES[self.family]
        add_arguments(self, klass, prefix="augment.", title=f"augment ({self.family} family: {klass.__name__})",
                      choices=augment_choices().get(self.family), shown=preset.get("augment"))
        for extra, title in self.extras:
            add_arguments(self, extra, title=title)

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        argv = list(sys.argv[1:] if args is None else args)
        method = _given(argv, "--method") or DEFAULT_METHOD
        asks_help = "-h" in argv or "--help" in argv  # the help shows the method's own values
        try:
            family = family_of(method)
        except ValueError as err:  # an unknown or malformed method: one line with the valid methods
            self.error(f"argument --method: {err}")
        for token in argv[:argv.index("--") if "--" in argv else len(argv)]:
            owner = _family_flags().get(token.split("=", 1)[0])
            if owner not in (None, family):
                self.error(f"argument {token.split('=', 1)[0]}: a setting of the {owner} family, not of method "
                           f"{method!r} ({family} family; its flags: --method {method} --help)")
        if method != self.method and (family != self.family or asks_help):
            return PretrainParser(method, self.description, self.extras, self.extra_epilog).parse_known_args(
                argv, namespace)
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
    """Every augmentation family's flags (aliases and ``--no-`` forms included) → the family."""
    owners = {}
    for family, klass in AUGMENT_FAMILIES.items():
        hints = typing.get_type_hints(klass)
        for f in dataclasses.fields(klass):
            for flag in flag_names(f.name, klass):
                owners.update({flag: family, **({"--no-" + flag[2:]: family} if hints[f.name] is bool else {})})
    return owners
