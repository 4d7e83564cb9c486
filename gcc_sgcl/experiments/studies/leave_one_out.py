"""Leave one out: SGCL at the tables' c without each stage in turn, seed-paired against ``sgcl`` (what the stage
adds) and against ``gcc``, as a heat-map and a table, with a reading in words.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from gcc_sgcl.config import STAGES
from gcc_sgcl.experiments.studies.cells import (
    CLASSIFICATION, SIMILARITY, Column, Rows, SeedDifferences, seed_differences,
)
from gcc_sgcl.experiments.studies.markdown import (
    column_name, interval_cell, count, interval_side, markdown_table, write_csv,
)
from gcc_sgcl.experiments.studies.pairs import plot_heatmap
from gcc_sgcl.experiments.tables import SGCL
from gcc_sgcl.presets import LEAVE_ONE_OUT

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


@dataclass(frozen=True)
class LeftOut:
    """SGCL without one stage (``sgcl-no-<stage>``) on one column: what the stage adds (``sgcl`` − the variant)
    and where the variant stands against GCC (the variant − ``gcc``), each over the seeds the pair shares."""

    stage: str
    adds: SeedDifferences | None
    against_gcc: SeedDifferences | None


def leave_one_out(rows: Rows, stages: Sequence[str], modes: Sequence[str] = ("e2e",),
                  tasks: Sequence[str] = CLASSIFICATION + SIMILARITY) -> list[LeftOut]:
    """:class:`LeftOut` of every stage in ``stages`` whose ``sgcl-no-<stage>`` row the table has, per column of
    ``tasks`` where it shares a seed with ``sgcl`` or ``gcc`` (the table's ``sgcl``: the c grid's choice; the
    variants run at that c)."""
    out = []
    trained = set(rows.methods(classical=False))
    for stage in stages:
        name = LEAVE_ONE_OUT + stage
        if name not in trained:
            continue
        adds = {d.column: d for d in seed_differences(rows, SGCL, modes, tasks, against=name)}
        behind = {d.column: d for d in seed_differences(rows, name, modes, tasks)}
        out += [LeftOut(stage, adds.get(c), behind.get(c)) for c in dict.fromkeys([*adds, *behind])]
    return out


def leave_one_out_section(items: list[LeftOut], csv_path: Path) -> str:
    """The leave-one-out ablation: per left-out stage and column, what the stage adds (``sgcl`` − ``sgcl-no-<stage>``)
    and the variant against GCC, mean over paired seeds with its 90 % t-interval, in pp; CSV one line per item.

    >>> from gcc_sgcl.experiments.studies.cells import Column, SeedDifferences
    >>> from gcc_sgcl.experiments.studies.leave_one_out import LeftOut
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> d = SeedDifferences(Column("rdt-b", "t", "accuracy", "e2e"), (0, 1), (0.01, 0.03), summarize((0.01, 0.03),
    ...                     interval="t"))
    >>> import tempfile
    >>> print(leave_one_out_section([LeftOut("align", d, None)], Path(tempfile.mkdtemp()) / "loo.csv"))
    | left out | column | what the stage adds: sgcl − sgcl-no-<stage> (pp, seeds) | sgcl-no-<stage> − gcc (pp, seeds) |
    |---|---|---|---|
    | align | RDT-B | +2.00 [-4.31, +8.31] (2) | – |
    """
    def mean(d: SeedDifferences | None) -> str:
        return "" if d is None else f"{d.summary.mean:.5f}"

    def bounds(d: SeedDifferences | None) -> list[str]:
        return ["", ""] if d is None or len(d.seeds) < 2 else [f"{d.summary.ci_low:.5f}", f"{d.summary.ci_high:.5f}"]

    write_csv(csv_path, ["stage", "dataset", "metric", "mode", "adds_seeds", "adds", "adds_low", "adds_high",
                         "vs_gcc_seeds", "vs_gcc", "vs_gcc_low", "vs_gcc_high"],
              [[i.stage, *_item_column(i), len(i.adds.seeds) if i.adds else 0, mean(i.adds), *bounds(i.adds),
                len(i.against_gcc.seeds) if i.against_gcc else 0, mean(i.against_gcc), *bounds(i.against_gcc)]
               for i in items])
    if not items:
        return "_no leave-one-out rows yet (`bash scripts/reproduce.sh loo`)_"
    modes = {_item_column_of(i).mode for i in items}
    body = [[i.stage, column_name(_item_column_of(i), modes), interval_cell(i.adds), interval_cell(i.against_gcc)]
            for i in items]
    return markdown_table(["left out", "column", "what the stage adds: sgcl − sgcl-no-<stage> (pp, seeds)",
                           "sgcl-no-<stage> − gcc (pp, seeds)"], body)


def leave_one_out_reading(items: list[LeftOut], sgcl_vs_gcc: list[SeedDifferences], level: float = 0.90) -> str:
    """What the leave-one-out table says, in words: where a stage's interval (over 2 or more paired seeds) lies
    above 0 (the stage helps ``sgcl``) or below it (it costs), and, on each column where ``sgcl`` is behind GCC
    (``sgcl_vs_gcc``), the variants that are not; with the number of intervals read, and how many of them would
    exclude 0 by chance alone at ``level``.

    >>> from gcc_sgcl.experiments.studies.cells import Column, SeedDifferences
    >>> from gcc_sgcl.experiments.studies.leave_one_out import LeftOut
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> def d(values): return SeedDifferences(Column("rdt-b", "t", "accuracy", "e2e"), (0, 1), values,
    ...                                       summarize(values, interval="t"))
    >>> align = LeftOut("align", d((-0.025, -0.026)), d((0.01, 0.012)))
    >>> print(leave_one_out_reading([align], [d((-0.02, -0.015))]))  # doctest: +NORMALIZE_WHITESPACE
    Read from the table (intervals over 2 or more paired seeds): a stage helps `sgcl` where its interval lies above
    0 — none; it costs `sgcl` where the interval lies below 0 — align: RDT-B (-2.55). Where `sgcl` is behind GCC
    (RDT-B), these variants are not shown behind it: sgcl-no-align on RDT-B (+1.10, ahead of GCC). These are 2
    intervals, about 0.2 of which would exclude 0 by chance alone at 90 %: leads to test with more seeds, not
    findings.
    """
    modes = {_item_column_of(i).mode for i in items}

    def read(d: SeedDifferences | None) -> str:
        return interval_side(d.summary) if d is not None and len(d.seeds) > 1 else ""

    def stages_where(side: str) -> str:
        found: dict[str, list[str]] = {}
        for i in items:
            if read(i.adds) == side:
                found.setdefault(i.stage, []).append(f"{column_name(i.adds.column, modes)} "
                                                     f"({100 * i.adds.summary.mean:+.2f})")
        return "; ".join(f"{stage}: {', '.join(columns)}" for stage, columns in found.items()) or "none"

    vs_gcc = {"interval above 0": "ahead of GCC", "interval contains 0": "no difference shown"}
    behind = [d.column for d in sgcl_vs_gcc if read(d) == "interval below 0"]
    lifted = [f"sgcl-no-{i.stage} on {column_name(i.against_gcc.column, modes)} "
              f"({100 * i.against_gcc.summary.mean:+.2f}, {vs_gcc[read(i.against_gcc)]})"
              for column in behind for i in items
              if i.against_gcc is not None and i.against_gcc.column == column and read(i.against_gcc) in vs_gcc]
    read_count = sum(bool(read(d)) for i in items for d in (i.adds, i.against_gcc))
    where_behind = (f" Where `sgcl` is behind GCC ({', '.join(column_name(c, modes) for c in behind)}), these "
                    f"variants are not shown behind it: {'; '.join(lifted) or 'none'}." if behind else "")
    return (f"Read from the table (intervals over 2 or more paired seeds): a stage helps `sgcl` where its interval lies "
            f"above 0 — {stages_where('interval above 0')}; it costs `sgcl` where the interval lies below 0 — "
            f"{stages_where('interval below 0')}.{where_behind} These are {read_count} intervals, about "
            f"{(1 - level) * read_count:.1f} of which would exclude 0 by chance alone at {100 * level:.0f} %: leads to "
            f"test with more seeds, not findings.")


def _item_column_of(item: LeftOut) -> Column:
    return (item.adds or item.against_gcc).column


def _item_column(item: LeftOut) -> list[str]:
    c = _item_column_of(item)
    return [c.dataset, c.metric, c.mode]


def plot_leave_one_out(items: list[LeftOut], png: Path) -> None:
    """What each stage adds (``sgcl`` − ``sgcl-no-<stage>``, pp) as a stage × column heat-map; ``*`` marks a cell
    whose 90 % t-interval over its paired seeds excludes 0."""
    modes = {_item_column_of(i).mode for i in items}
    stages = list(dict.fromkeys(i.stage for i in items))
    columns = list(dict.fromkeys(column_name(_item_column_of(i), modes) for i in items))
    gain = np.full((len(stages), len(columns)), np.nan)
    marks = np.full(gain.shape, "", dtype=object)
    for i in items:
        if i.adds is None:
            continue
        r, c = stages.index(i.stage), columns.index(column_name(_item_column_of(i), modes))
        gain[r, c] = 100 * i.adds.summary.mean
        marks[r, c] = "*" if interval_side(i.adds.summary) in ("interval above 0", "interval below 0") else ""
    plot_heatmap(gain, marks, "what each stage adds: sgcl − sgcl-no-<stage> (* : 90 % interval excludes 0)", png,
                 rows=stages, columns=columns, unit="pp (positive: SGCL is better with the stage)",
                 size=(max(6.4, 0.75 * len(columns) + 2.5), 0.45 * len(stages) + 2.6))


def sections(t: Tables) -> list[str]:
    """The leave-one-out ablation (stage ``loo``): SGCL at the tables' c without each stage in turn, seed-paired
    against ``sgcl`` and ``gcc`` on every frozen E2E column; the heat-map of what each stage adds
    (``leave_one_out.png``) above the table once there are rows."""
    rows, folder = t.rows, t.folder
    items = leave_one_out(rows, STAGES)
    png = folder / "leave_one_out.png"
    picture = []
    if items:
        plot_leave_one_out(items, png)
        picture = [f"![what each stage adds]({t.link(png)})"]
    counts = [len(d.seeds) for i in items for d in (i.adds, i.against_gcc) if d]
    fewest, most = min(counts, default=0), max(counts, default=0)
    so_far = ("none yet" if not most else f"{count(most, 'seed')} each" if fewest == most
              else f"{fewest} to {most} seeds so far")
    return ["## Leave one out: what each stage of SGCL costs or adds (E2E, frozen)",
            "`sgcl-no-<stage>` is the tables' `sgcl` (same c) with one stage switched off (filter: the similar "
            "filter; mask and reorder each alone), pre-trained at the table budget by `bash scripts/reproduce.sh loo` "
            f"({so_far}). Per column: what the stage adds, `sgcl` − `sgcl-no-<stage>` over the seeds "
            "both have (positive: SGCL is better with the stage), and where the variant stands against `gcc`; mean in "
            "pp, its 90 % Student-t interval over paired seeds and the seed count. Read on the tables' own columns "
            "(the same columns the c grid and the stages were judged on), so it explains the tables rather than "
            "predicting an unseen dataset; with 3 seeds only a large, consistent change excludes 0.",
            *picture, leave_one_out_section(items, folder / "leave_one_out.csv"),
            *([leave_one_out_reading(items, seed_differences(rows, SGCL, ("e2e",), CLASSIFICATION + SIMILARITY))]
              if items else [])]
