"""The report's hand-written parts (``--intro``, ``--protocol``, ``--status``: Markdown files), placed between the
generated studies."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


def part(name: str, default: str = "") -> Callable[[Tables], list[str]]:
    """A study that gives the hand-written part ``name`` (``default`` when none was given).

    >>> from types import SimpleNamespace
    >>> part("intro", "# Results")(SimpleNamespace(written={})), part("status")(SimpleNamespace(written={}))
    (['# Results'], [''])
    """
    def sections(t: Tables) -> list[str]:
        return [t.written.get(name) or default]
    sections.__name__ = f"written_{name}"
    return sections
