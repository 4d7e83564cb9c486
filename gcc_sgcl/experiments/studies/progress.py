"""The sweep's progress at the table budget: per method and mode, the seeds with rows and the columns every
one of them has.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from gcc_sgcl.experiments.rows import CLASSICAL_MODE
from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, SIMILARITY, Rows
from gcc_sgcl.experiments.studies.markdown import markdown_table, write_csv
from gcc_sgcl.experiments.tables import BASELINE, FINETUNED, RANDOM_INIT, SGCL
from gcc_sgcl.method import MethodSpec

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


@dataclass(frozen=True)
class Coverage:
    """The seeds of one method with rows of one kind of evaluation, and how many of that kind's columns have a row
    of every one of them."""

    seeds: list[int]
    done: int
    columns: int


@dataclass(frozen=True)
class Progress:
    """How far one pre-trained method has got at the table budget, frozen and fine-tuned."""

    method: str
    mode: str
    frozen: Coverage
    finetuned: Coverage


def progress(rows: Rows) -> list[Progress]:
    """:class:`Progress` of every pre-trained method and mode in ``rows`` (joined ``… ⊕ structural`` rows left out:
    they follow their encoder): ``gcc`` and ``sgcl`` first, ``random init`` last, the others in first-seen order."""
    order = {BASELINE: 0, SGCL: 1, RANDOM_INIT: 3}
    found = dict.fromkeys((r.method, r.mode) for r in rows.rows if r.mode != CLASSICAL_MODE and not MethodSpec.parse(r.method).joined)

    def coverage(method: str, mode: str, tasks: Sequence[str]) -> Coverage:
        columns = rows.columns(tasks)
        seeds = {int(r.seed) for r in rows.rows if (r.method, r.mode) == (method, mode) and r.task in tasks}
        done = sum(set(rows.by_key.get((method, mode, *col), {})) == seeds for col in columns) if seeds else 0
        return Coverage(sorted(seeds), done, len(columns))

    return [Progress(method, mode, coverage(method, mode, CLASSIFICATION + SIMILARITY),
                     coverage(method, mode, FINETUNED))
            for method, mode in sorted(found, key=lambda m: order.get(m[0], 2))]


def progress_section(items: list[Progress], csv_path: Path) -> str:
    """The sweep's progress at the table budget: per method, the seeds with frozen and with fine-tuned rows and the
    columns every one of those seeds covers (``–``: no rows of that kind)."""
    def cells(c: Coverage) -> list[str]:
        if not c.seeds:
            return ["–", "–"]
        return [f"{len(c.seeds)} ({' '.join(map(str, c.seeds))})", f"{c.done} of {c.columns}"]

    write_csv(csv_path, ["method", "mode", "frozen_seeds", "frozen_columns_done", "frozen_columns",
                         "finetuned_seeds", "finetuned_columns_done", "finetuned_columns"],
              [[p.method, p.mode, *(v for c in (p.frozen, p.finetuned)
                                    for v in (" ".join(map(str, c.seeds)), c.done, c.columns))] for p in items])
    if not items:
        return "_no pre-trained encoders at the table budget_"
    return markdown_table(["method", "mode", "frozen: seeds", "frozen: columns with every seed", "fine-tuned: seeds",
                           "fine-tuned: columns with every seed"],
                          [[p.method, p.mode, *cells(p.frozen), *cells(p.finetuned)] for p in items])


def sections(t: Tables) -> list[str]:
    """The sweep's progress at the table budget: seeds with rows, and the columns every one of them has."""
    return ["## Sweep progress at the table budget",
            "Pre-trained encoders in the tables below: the seeds with rows, and the columns that have a row of every "
            "one of those seeds.",
            progress_section(progress(t.rows), t.folder / "progress.csv")]
