"""Which stored rows the report's tables are read from, and :class:`Tables`, everything a study reads.

:func:`tables_of` finds the tables' budget (the budget study), their :class:`~gcc_sgcl.experiments.tables.TableSpec`
(the ``sgcl`` row at the c grid's choice once the grid is complete) and the rows at that budget;
:func:`read_tables` wraps them with the report's place and options for the studies' ``sections`` functions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Sequence

from gcc_sgcl.config import AugmentConfig
from gcc_sgcl.experiments.rows import ResultRow, RowStore
from gcc_sgcl.experiments.studies.budget import budget_study
from gcc_sgcl.experiments.studies.c_grid import CChoice, choose_c, missing_c, missing_grid_points
from gcc_sgcl.experiments.studies.cells import Rows, c_of, c_variant, is_swapped
from gcc_sgcl.experiments.tables import BASELINE, RANDOM_INIT, SGCL, Budget, TableSpec, table_spec
from gcc_sgcl.method import MethodSpec


def tables_of(stored: Sequence[ResultRow], c_grid: Sequence[float] | None = None) -> tuple:
    """What the tables are read from: the budget study, the :class:`~gcc_sgcl.experiments.tables.TableSpec` (its
    ``sgcl`` at the c grid's choice once the grid is complete), the rows at its budget (``sgcl`` the plain preset), the c
    grid's choice, the grid points still missing and the table's view of the rows."""
    study = budget_study(stored)
    spec = table_spec(stored, study[3], default_filter_c(stored, study[3]))
    table = spec.select(stored) if spec else list(stored)
    choice = choose_c(Rows(table), spec.default_c) if spec else None
    missing = missing_c(Rows(table), c_grid, spec.default_c) if c_grid and choice else []
    if spec:
        spec = spec.at_sgcl_c(choice.best_c if choice and not missing else spec.default_c)
    rows = Rows(spec.select(stored) if spec else stored)
    return study, spec, table, choice, missing, rows


def chosen_sgcl(rows_path: str | Path, grid: Sequence[float] | None = None) -> str:
    """The method name whose rows are the tables' ``sgcl`` row: ``sgcl`` or the chosen grid point
    ``sgcl[c=…]`` (:func:`gcc_sgcl.experiments.studies.c_grid.choose_c`); what the sweep pre-trains for every seed.
    With ``grid`` (the c values besides the default), raises ``ValueError`` naming what is missing unless every
    grid point has its seed-0 row on every classification column ``gcc`` has at the table budget."""
    _, spec, table, choice, _, _ = tables_of(RowStore(rows_path).load())
    if spec is None:
        return SGCL
    if grid is not None:
        missing = missing_grid_points(Rows(table), grid, spec.default_c)
        if missing:
            raise ValueError(f"{rows_path}: the c grid is incomplete at the table budget (run stage cgrid): "
                             f"{len(missing)} rows missing, e.g. {'; '.join(missing[:4])}")
    return str(spec.sgcl)


def default_filter_c(rows: Sequence[ResultRow], budget: Budget | None = None) -> float:
    """The filter threshold of the plain ``sgcl`` rows (at ``budget``'s steps and corpus when given; from their
    stored configuration; the current default without one); rows that disagree are an error."""
    found = {float(c) for r in rows if r.method == SGCL and (budget is None or (r.steps, r.corpus) == (
        budget[0], budget[2])) and (c := r.config.get("augment", {}).get("c")) is not None}
    if len(found) > 1:
        raise ValueError(f"the plain sgcl rows were trained with different c: {sorted(found)}")
    return found.pop() if found else AugmentConfig().c


def table_methods(rows: Rows, default_c: float) -> list[str]:
    """The pre-trained rows of the main tables, in order: ``gcc``, ``sgcl``, the default-c row, the other
    presets and variants (single stages, pairs, controls and the other c grid points left out), then the joined
    ``… ⊕ structural`` rows."""
    pretrained = [m for m in rows.methods(classical=False) if m != RANDOM_INIT]
    encoder = {m: str(MethodSpec.parse(m).encoder) for m in pretrained}
    kept = [m for m in pretrained if not m.startswith("sgcl-") and not is_swapped(m)
            and (c_of(encoder[m]) is None or encoder[m] == c_variant(default_c))]
    first = [m for m in (BASELINE, SGCL, c_variant(default_c)) if m in kept]
    rest = [m for m in kept if m not in first]
    return (first + [m for m in rest if m == encoder[m]] + [m for m in rest if m != encoder[m]]) or pretrained


@dataclass
class Tables:
    """What every study of the report reads: the ``stored`` rows of ``rows_path``, :func:`tables_of`'s budget
    ``study``, ``spec``, ``table`` (the rows at the budget, ``sgcl`` the plain preset), c-grid ``choice`` and
    ``missing`` grid points and ``rows`` (the tables' view), the report's Markdown file ``out``, the training
    ``modes`` present in the rows, the pairs heat-map's dataset and the ``written`` hand-written parts by name."""

    rows_path: Path
    out: Path
    stored: list[ResultRow]
    study: tuple
    spec: TableSpec | None
    table: list[ResultRow]
    choice: CChoice | None
    missing: list[float]
    rows: Rows
    modes: list[str]
    heatmap_dataset: str = "rdt-b"
    written: dict[str, str] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        """Where the CSV tables and figures go: beside the rows."""
        return self.rows_path.parent

    @property
    def default_c(self) -> float:
        """The filter threshold of the plain ``sgcl`` preset when the table's rows were trained."""
        return self.spec.default_c if self.spec else AugmentConfig().c

    @cached_property
    def methods(self) -> list[str]:
        """The pre-trained rows of the main tables (:func:`table_methods`)."""
        return table_methods(self.rows, self.default_c)

    @property
    def encoders(self) -> list[str]:
        """:attr:`methods` without the joined ``… ⊕ structural`` rows."""
        return [m for m in self.methods if not MethodSpec.parse(m).joined]

    @property
    def presets(self) -> list[str]:
        """:attr:`encoders` without bracketed variants (default c, k = 64: single-seed side rows)."""
        return [m for m in self.encoders if not MethodSpec.parse(m).settings]

    @property
    def untrained(self) -> list[str]:
        """``[random init]`` when the rows hold the untrained encoder, else ``[]``."""
        return [RANDOM_INIT] if RANDOM_INIT in self.rows.methods(classical=False) else []

    def link(self, path: Path) -> Path:
        """``path`` as the report links it: relative to the report's folder when below it."""
        return path.relative_to(self.out.parent) if path.is_relative_to(self.out.parent) else path


def read_tables(rows_path: str | Path, out: str | Path, modes: Sequence[str] = ("moco", "e2e"),
                c_grid: Sequence[float] | None = None, heatmap_dataset: str = "rdt-b",
                written: dict[str, str] | None = None) -> Tables:
    """The :class:`Tables` of the rows stored at ``rows_path`` for the report ``out`` (``c_grid``: as
    :func:`tables_of`; ``modes``: the training modes to show, those without rows left out)."""
    stored = RowStore(rows_path).load()
    study, spec, table, choice, missing, rows = tables_of(stored, c_grid)
    present = [m for m in modes if any(r.mode == m for r in rows.rows)]
    return Tables(Path(rows_path), Path(out), stored, study, spec, table, choice, missing, rows, present,
                  heatmap_dataset, dict(written or {}))
