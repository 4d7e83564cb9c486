"""A method's identity: :class:`MethodSpec`, the one place a method name is parsed and written.

A name is a preset (``gcc``, ``sgcl``, ``sgcl-crop+reorder``, ``graphcl``, a training-free method such as
``structural``), optional bracketed settings (``sgcl[c=0.4,crop=random]``, short names of
:data:`VARIANT_SETTINGS`) and optionally the training-free vector its embedding is joined to
(``sgcl[c=0.4] ⊕ structural``). Rows, run folders, shipped encoders, the sweep, the report and
``scripts/reproduce.sh`` (through ``python -m gcc_sgcl.experiments method``) all go through this class; the name
it writes is canonical (settings in :data:`VARIANT_SETTINGS` order, numbers in ``%g`` form, no spaces), so one
configuration has one name.

>>> spec = MethodSpec.parse("sgcl[k=64, c=0.40] ⊕ structural")
>>> str(spec), spec.preset, spec.get("c"), spec.joined, str(spec.encoder)
('sgcl[c=0.4,k=64] ⊕ structural', 'sgcl', 0.4, 'structural', 'sgcl[c=0.4,k=64]')
>>> spec.encoder.slug
'sgcl-c=0.4-k=64'

Sits in the first layer: it imports nothing of the package.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

# Settings a method name may carry in brackets, in their canonical order: short name → (config group, field,
# type). ``c``: SGCL's filter threshold; ``k``: the positional-embedding size; ``crop`` / ``permute`` /
# ``basis``: the crop, the reorder's permutation and the crop's eigenbasis (the ablation swaps them for their
# random analogues).
VARIANT_SETTINGS: dict[str, tuple[str, str, type]] = {
    "c": ("augment", "c", float),
    "k": ("sampling", "positional_embedding_size", int),
    "crop": ("augment", "crop_kind", str),
    "permute": ("augment", "permute_kind", str),
    "basis": ("augment", "crop_basis", str),
}
JOINED = " ⊕ "  # "<method> ⊕ structural": an encoder's embedding joined to a training-free vector
_BRACKETS = re.compile(r"^(?P<base>[^\[\]]+)\[(?P<settings>[^\[\]]*)\]$")
_RESERVED = re.compile(r"[,\[\]=⊕]|^\s|\s$|\s{2}")  # characters a preset, vector or string setting may not hold


@dataclass(frozen=True)
class MethodSpec:
    """A method: its preset, its bracketed settings and the training-free vector joined to its rows.

    Args:
        preset: the preset's name (:mod:`gcc_sgcl.presets`) or a training-free method's.
        settings: ``(short name, value)`` pairs of :data:`VARIANT_SETTINGS`, in its order (:meth:`of` sorts them).
        joined: the training-free vector joined to the encoder's rows (``"structural"``), ``""`` for none.
    """

    preset: str
    settings: tuple[tuple[str, Any], ...] = ()
    joined: str = ""

    @classmethod
    def of(cls, preset: str, settings: dict[str, Any] | None = None, joined: str = "") -> MethodSpec:
        """The spec of ``preset`` with ``settings`` (short names, any order; each value checked for its type).

        >>> str(MethodSpec.of("sgcl", {"crop": "random", "c": 0.4}))
        'sgcl[c=0.4,crop=random]'
        """
        values = dict(settings or {})
        unknown = [name for name in values if name not in VARIANT_SETTINGS]
        if unknown:
            raise ValueError(f"method {preset!r}: unknown setting {unknown[0]!r}; settings: {', '.join(VARIANT_SETTINGS)}")
        for name, value in values.items():
            kind = VARIANT_SETTINGS[name][2]
            if not isinstance(value, kind) or isinstance(value, bool) or (kind is str and _RESERVED.search(value)):
                if kind is float and isinstance(value, int) and not isinstance(value, bool):
                    values[name] = float(value)
                    continue
                raise ValueError(f"method {preset!r}: {name} must be a {kind.__name__}"
                                 f"{' without spaces or any of , [ ] = ⊕' if kind is str else ''}, got {value!r}")
        for part, what in ((preset, "preset"), (joined, "joined vector")):
            if (what == "preset" and not part.strip()) or _RESERVED.search(part.strip()):
                raise ValueError(f"method {preset!r}: the {what} must be a name without , [ ] = ⊕, got {part!r}")
        return cls(preset.strip(), tuple((name, values[name]) for name in VARIANT_SETTINGS if name in values),
                   joined.strip())

    @classmethod
    def parse(cls, text: str) -> MethodSpec:
        """The spec a method name writes; a malformed name raises ``ValueError`` naming it.

        >>> MethodSpec.parse("sgcl[c=0.4,crop=random]").settings
        (('c', 0.4), ('crop', 'random'))
        >>> MethodSpec.parse("sgcl[c=high]")
        Traceback (most recent call last):
        ...
        ValueError: method 'sgcl[c=high]': c must be float, got 'high'
        """
        head, sep, joined = text.partition(JOINED.strip())
        head = head.strip()
        if sep and not joined.strip():
            raise ValueError(f"method {text!r}: name the vector joined after {JOINED.strip()!r}")
        if not head:
            raise ValueError(f"method {text!r}: no preset named")
        match = _BRACKETS.match(head)
        if match is None:
            if "[" in head or "]" in head:
                raise ValueError(f"method {text!r}: write settings as <method>[name=value,...]")
            return cls.of(head, {}, joined)
        values: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in match["settings"].split(","))):
            name, _, value = (x.strip() for x in item.partition("="))
            if name not in VARIANT_SETTINGS or not value or name in values:
                raise ValueError(f"method {text!r}: {item!r} is not <name>=<value> with a name among "
                                 f"{', '.join(VARIANT_SETTINGS)}, each at most once")
            kind = VARIANT_SETTINGS[name][2]
            try:
                values[name] = kind(value)
            except ValueError:
                raise ValueError(f"method {text!r}: {name} must be {kind.__name__}, got {value!r}") from None
        if not values:
            raise ValueError(f"method {text!r}: empty brackets")
        return cls.of(match["base"], values, joined)

    def __str__(self) -> str:
        name = self.preset
        if self.settings:
            name += "[" + ",".join(f"{k}={_format(v)}" for k, v in self.settings) + "]"
        return name + (JOINED + self.joined if self.joined else "")

    @property
    def values(self) -> dict[str, Any]:
        """The bracketed settings as ``{short name: value}``."""
        return dict(self.settings)

    def get(self, name: str, default: Any = None) -> Any:
        """The bracketed setting ``name`` (a short name of :data:`VARIANT_SETTINGS`), else ``default``."""
        return self.values.get(name, default)

    def with_settings(self, **values: Any) -> MethodSpec:
        """This spec with ``values`` set (over its own); a value of ``None`` removes the setting.

        >>> str(MethodSpec.parse("sgcl[c=0.4]").with_settings(crop="random", c=None))
        'sgcl[crop=random]'
        """
        merged = {**self.values, **values}
        return MethodSpec.of(self.preset, {k: v for k, v in merged.items() if v is not None}, self.joined)

    @property
    def encoder(self) -> MethodSpec:
        """The encoder's own spec: this one without the joined vector."""
        return replace(self, joined="")

    def join(self, vector: str) -> MethodSpec:
        """The spec of this encoder's rows joined to the training-free ``vector``."""
        return replace(self, joined=vector)

    @property
    def slug(self) -> str:
        """The name as a folder-name part: settings become ``-name=value`` parts, a join ``+vector``.

        >>> MethodSpec.parse("sgcl[c=0.35,k=64]").slug
        'sgcl-c=0.35-k=64'
        """
        return "-".join([self.preset, *(f"{k}={_format(v)}" for k, v in self.settings)]) + (
            f"+{self.joined}" if self.joined else "")

    def overrides(self) -> dict[str, dict[str, Any]]:
        """The config overrides of the bracketed settings: ``{group: {field: value}}``.

        >>> MethodSpec.parse("sgcl[c=0.35,k=64]").overrides()
        {'augment': {'c': 0.35}, 'sampling': {'positional_embedding_size': 64}}
        """
        out: dict[str, dict[str, Any]] = {}
        for name, value in self.settings:
            group, field, _ = VARIANT_SETTINGS[name]
            out.setdefault(group, {})[field] = value
        return out


def canonical(method: str) -> str:
    """The canonical form of the method name ``method``: ``str(MethodSpec.parse(method))``.

    >>> canonical("sgcl[k=64, c=0.20]")
    'sgcl[c=0.2,k=64]'
    """
    return str(MethodSpec.parse(method))


def _format(value: Any) -> str:
    """A setting's value as written in a name: exact, so that the name parses back to the same value (``0.4``,
    ``64``, ``1000000``, ``0.1234567``; a float with an integral value without its ``.0``)."""
    if isinstance(value, str):
        return value
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text
