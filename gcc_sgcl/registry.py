"""Name → implementation tables (:class:`Registry`): dataset kinds, tasks, training-free methods, augmentation
stages, SVC protocols. Things are built from configuration strings by lookup, not by ``if/elif`` chains, and a
bad name is refused naming the registry and its choices.

Sits in the first layer: it imports nothing of the package.

One name, one idea at 3 layers: :mod:`gcc_sgcl.registry` (the registry type), :mod:`gcc_sgcl.data.registry` (the
datasets'), :mod:`gcc_sgcl.tasks.registry` (the tasks').
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """A read-only mapping of names (iterated in sorted order) to classes, factories or specs, filled from
    ``entries`` or by :meth:`register`; looking up an unknown name is a ``ValueError`` naming ``what`` and the
    valid names.

    >>> kinds = Registry[type]("kind", {"list": list})
    >>> _ = kinds.register("dict")(dict)
    >>> kinds["dict"](a=1), list(kinds), "set" in kinds
    ({'a': 1}, ['dict', 'list'], False)
    >>> kinds["set"]
    Traceback (most recent call last):
    ...
    ValueError: unknown kind 'set'; choose from ['dict', 'list']
    """

    def __init__(self, what: str, entries: Mapping[str, T] | None = None):
        self.what = what
        self._entries: dict[str, T] = {}
        for name, entry in (entries or {}).items():
            self.register(name)(entry)

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator that adds its argument under ``name`` (a name registered twice is a ``ValueError``)."""
        def add(entry: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.what} {name!r} is already registered")
            self._entries[name] = entry
            return entry

        return add

    def __getitem__(self, name: str) -> T:
        if name not in self._entries:
            raise ValueError(f"unknown {self.what} {name!r}; choose from {sorted(self._entries)}")
        return self._entries[name]

    def get(self, name: str, default: T | None = None) -> T | None:
        """The entry of ``name``, or ``default`` for an unknown name."""
        return self._entries.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {sorted(self._entries)})"
