"""Where the rows come from: the commits behind them, their budgets and recorded times, the tables' spec, and the
evaluation protocols recorded in the rows.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from gcc_sgcl.experiments.studies.cells import CLASSIFICATION
from gcc_sgcl.experiments.tables import FINETUNED

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

from dataclasses import dataclass
from typing import Sequence

from gcc_sgcl.experiments.rows import CLASSICAL_MODE, ResultRow
from gcc_sgcl.experiments.tables import TABLES_FILE, TableSpec, budget_of
from gcc_sgcl.method import MethodSpec


@dataclass(frozen=True)
class Provenance:
    """Where the rows came from: counts, commits, budgets (steps, batch, corpus, repeats, folds, SVC protocol)
    and the wall time the runner recorded (pre-training it ran itself; each evaluation once)."""

    rows: int
    encoders: int
    runtime_rows: int
    commits: list[str]
    budgets: list[tuple]
    pretrain_seconds: float
    eval_seconds: float


def provenance(stored: Sequence[ResultRow]) -> Provenance:
    """:class:`Provenance` of every stored row, whatever its budget. An evaluation's time is stored on each of its
    metric rows (similarity search has two), so it is counted once per evaluation (:attr:`ResultRow.key`).
    Encoders: trained ones only (joined ``… ⊕ structural`` rows reuse an encoder; 0-step rows are untrained)."""
    results = [r for r in stored if r.task != "runtime"]
    evaluations = {r.key: r.eval_seconds or 0.0 for r in results}
    budgets = sorted({(r.steps, r.batch_size, r.corpus, r.repeats, r.folds, r.svc) for r in results
                      if r.mode != CLASSICAL_MODE}, key=str)
    return Provenance(
        rows=len(results),
        encoders=len({(r.method, r.mode, r.seed, budget_of(r)) for r in results
                      if r.mode != CLASSICAL_MODE and not MethodSpec.parse(r.method).joined and r.steps != 0}),
        runtime_rows=len(stored) - len(results),
        commits=sorted({r.commit for r in stored}),
        budgets=budgets,
        pretrain_seconds=float(sum(r.pretrain_seconds or 0.0 for r in results)),
        eval_seconds=float(sum(evaluations.values())),
    )


def protocols(stored: Sequence[ResultRow], tasks: Sequence[str]) -> dict[str, list[str]]:
    """Per task of ``tasks``, the distinct evaluation protocols recorded in ``stored`` (e.g. which SVC)."""
    out: dict[str, list[str]] = {}
    for r in stored:
        if r.task in tasks and r.protocol not in out.setdefault(r.task, []):
            out[r.task].append(r.protocol)
    return out


def provenance_lines(p: Provenance) -> str:
    """The provenance as a Markdown list."""
    return "\n".join([
        f"- rows: {p.rows} result rows, {p.encoders} pre-trained encoders, {p.runtime_rows} runtime rows",
        f"- code commits that produced the rows: {', '.join(f'`{c}`' for c in p.commits)} (`-dirty`: tracked files "
        "differed from the commit; rows stored before the runner left `docs/` out of that check say so also when only "
        "the sweep's own rows and tables there had changed)",
        "- budgets (steps × batch, corpus, CV repeats × folds, SVC protocol): "
        + "; ".join(f"{s} × {b}, {c}, {r} × {f}-fold, svc {svc}" for s, b, c, r, f, svc in p.budgets),
        f"- pre-training wall time recorded by the runner: {p.pretrain_seconds / 60:.1f} min (encoders it found "
        f"already trained are not counted); embedding + evaluation: {p.eval_seconds / 60:.1f} min",
    ])


def protocol_lines(found: dict[str, list[str]]) -> str:
    """The evaluation protocols recorded in the rows, per task."""
    return "\n".join(f"- {task.replace('_', ' ')}: " + "; ".join(f"`{p}`" for p in ps) for task, ps in found.items())


def table_spec_line(spec: TableSpec | None) -> str:
    """What the tables' spec declares and where the report writes it (``tables.json`` beside the rows)."""
    if spec is None:
        return ""
    batches = ", ".join(f"{mode} batch {b}" for mode, b in spec.batches.items())
    return (f"The tables' rows (`{TABLES_FILE}` beside the rows, written by this report): encoders pre-trained for "
            f"{spec.steps} steps on `{spec.corpus}` ({batches}), one evaluation protocol per kind (a row of the "
            f"tables under another is an error); the `sgcl` row is `{spec.sgcl}`, `random init` is "
            f"`{spec.random_init}` at 0 steps.")


def sections(t: Tables) -> list[str]:
    """Where the rows come from: commits, budgets and times, the tables' spec and the evaluation protocols."""
    return ["## Provenance", provenance_lines(provenance(t.stored)),
            table_spec_line(t.spec),
            "Evaluation protocols recorded in the rows:",
            protocol_lines(protocols(t.stored, CLASSIFICATION + FINETUNED))]
