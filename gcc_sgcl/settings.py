"""The settings machinery: dataclass fields with their help text and valid range, and the command line built from them.

Every settings class (the method's in :mod:`gcc_sgcl.config`, each tool's beside the tool) is a :class:`Settings`
dataclass whose fields are made by :func:`setting`: each field states its one default, its help and its valid
values (:class:`Range`, ``choices``). :func:`add_arguments` turns every field into a command-line flag
(``rw_hops`` → ``--rw-hops``) and :func:`from_args` the parsed flags into the dataclass again, so every command line
of the package is built this way; every settings dataclass checks itself when made (:class:`Settings`), from the
command line and from Python alike. Imports nothing of the package.

One name, one idea at 3 layers: :mod:`gcc_sgcl.settings` (the machinery), :mod:`gcc_sgcl.tasks.settings` (the tasks'
settings), :mod:`gcc_sgcl.experiments.settings` (the runner's settings).
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

import numpy as np

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
        low, high = _number(self.low), _number(self.high)
        if self.high is None:
            return f"{'>' if self.low_open else '>='} {low}"
        if self.low is None:
            return f"{'<' if self.high_open else '<='} {high}"
        return f"in {'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"

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


def _number(value: float | None) -> str:
    """A bound as messages write it: an integer exactly (``18446744073709551615``), else ``:g``."""
    return str(value) if isinstance(value, int) or value is None else f"{value:g}"


def at_least(low: float) -> Range:
    """Values ≥ ``low``."""
    return Range(low)


POSITIVE = Range(0, low_open=True)
NON_NEGATIVE = Range(0)
PROBABILITY = Range(0, 1)
SEED = Range(0, 2**64 - 1)
"""Seeds: views and walks are keyed by them as uint64 (a larger one would overflow in torch or numpy)."""
SEED32 = Range(0, 2**32 - 1)
"""32-bit seeds: the evaluation's (scikit-learn's ``random_state`` takes 32 bits) and pre-training's, whose per-step
torch seeds (``contrastive.builder.dropout_seed``) grow from it and must stay below 2**64."""


def setting(default: Any = dataclasses.MISSING, help: str = "", *, choices: Sequence[str] = (),
            positional: bool = False, parse: Callable[[str], Any] | None = None, valid: Range | None = None,
            flags: Sequence[str] = ()) -> Any:
    """A dataclass field with its command-line ``help``: fixed ``choices``, a ``positional`` argument instead of a
    flag, a ``parse`` function of each value of a list, the ``valid`` range of a number (of each number of a
    list), checked as the command line is parsed and by :func:`check_fields`; ``flags``, the names its flags
    spell instead of the field's, the first the one messages name (:func:`flag_names`); no ``default`` makes the
    argument required. A list default is copied for each instance."""
    metadata = {"help": help, "choices": tuple(choices), "positional": positional, "parse": parse, "valid": valid,
                "flags": tuple(flags)}
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


def flag_names(field_name: str, klass: type | None = None) -> tuple[str, ...]:
    """The command-line flags of a field of dataclass ``klass``: ``rw_hops`` → ``--rw-hops``, or those of the names
    the field spells (:func:`setting`'s ``flags``: ``AugmentConfig.c`` → ``--filter-threshold``, ``--c``); a
    baseline's settings prefix their family (:attr:`Settings.FLAG_PREFIX`: ``GraphCLConfig.ratio`` →
    ``--graphcl-ratio``)."""
    declared = getattr(klass, "__dataclass_fields__", {}).get(field_name)
    names = (declared.metadata.get("flags") if declared else ()) or (field_name,)
    return tuple("--" + (getattr(klass, "FLAG_PREFIX", "") + name).replace("_", "-") for name in names)


def flag_name(field_name: str, klass: type | None = None) -> str:
    """The flag that messages name a field of dataclass ``klass`` by: the first of :func:`flag_names`."""
    return flag_names(field_name, klass)[0]


_SCALARS = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


@functools.lru_cache(maxsize=None)
def _scalar_kinds(klass: type) -> dict[str, tuple[type, bool]]:
    """``field → (scalar type, optional)`` of the fields of ``klass`` typed ``int``, ``float``, ``str`` or ``bool``
    (``| None`` allowed), or a list of one of them; other fields are not listed."""
    kinds = {}
    for name, hint in typing.get_type_hints(klass).items():
        optional = type(None) in typing.get_args(hint)
        hint = _value_type(hint)
        if typing.get_origin(hint) is list:
            hint = typing.get_args(hint)[0]
        if hint in _SCALARS:
            kinds[name] = (hint, optional)
    return kinds


def _is_kind(value: Any, kind: type) -> bool:
    """Whether ``value`` is a value of the scalar ``kind``: a bool is no number, an integer is a float."""
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is int:
        return isinstance(value, (int, np.integer))
    if kind is float:
        return isinstance(value, (int, float, np.integer, np.floating))
    return isinstance(value, kind)


def check_types(obj: Any) -> None:
    """Raise ``TypeError`` naming the flag of the first field of dataclass ``obj`` whose value is not of its declared
    scalar type: a config file's ``"hidden_size": "64"`` or ``64.0``, a ``True`` for a count.

    >>> @dataclass
    ... class Widths(Settings):
    ...     hidden_size: int = setting(64, "width")
    >>> Widths(hidden_size=64.0)
    Traceback (most recent call last):
    ...
    TypeError: --hidden-size must be an integer, got float 64.0
    """
    for name, (kind, optional) in _scalar_kinds(type(obj)).items():
        value = getattr(obj, name)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if not (v is None and optional) and not _is_kind(v, kind):
                raise TypeError(f"{flag_name(name, type(obj))} must be {_SCALARS[kind]}, got "
                                f"{type(v).__name__} {repr(v)[:80]}")


def check_fields(obj: Any) -> None:
    """Raise ``ValueError`` naming the flag of the first field of dataclass ``obj`` outside its declared range or
    choices (:func:`setting`'s ``valid`` and ``choices``), ``TypeError`` for one of another type
    (:func:`check_types`); the one check every configuration goes through, from the command line and from Python."""
    check_types(obj)
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
        if default is not dataclasses.MISSING and default is not None and default != "":
            kwargs["help"] = f"{kwargs['help']} (default: {default})".lstrip()
        if meta.get("positional"):
            kwargs["metavar"] = f.name.upper()
            target.add_argument(prefix + f.name, **kwargs)
            continue
        kwargs.update(dest=prefix + f.name, default=None)
        if default is dataclasses.MISSING:
            kwargs["required"] = True
        target.add_argument(*flag_names(f.name, klass), **kwargs)


def given_flags(klass: type, args: argparse.Namespace, prefix: str = "") -> dict[str, Any]:
    """The fields of ``klass`` given on the command line (:func:`add_arguments` with ``prefix``), by name."""
    return {f.name: value for f in dataclasses.fields(klass)
            if (value := getattr(args, prefix + f.name, None)) is not None}


def from_args(klass: type[T], args: argparse.Namespace, prefix: str = "") -> T:
    """The dataclass ``klass`` of parsed flags: the given ones over the defaults (the inverse of
    :func:`add_arguments`).

    >>> @dataclass
    ... class Encoder(Settings):
    ...     num_layers: int = setting(5, "GIN layers", valid=at_least(2))
    ...     hidden_size: int = setting(64, "width of the layers", valid=at_least(1))
    ...     batch_norm: bool = setting(True, "batch norm after each layer")
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser, Encoder)
    >>> from_args(Encoder, parser.parse_args(["--num-layers", "3", "--no-batch-norm"]))  # the defaults for the rest
    Encoder(num_layers=3, hidden_size=64, batch_norm=False)
    """
    return klass(**given_flags(klass, args, prefix))


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (the flag and why) and a pointer to ``--help``, exit status 2,
    instead of the whole usage text."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
