"""The results report, built only from stored result rows (:mod:`gcc_sgcl.experiments.rows`).

``python -m gcc_sgcl.experiments report --rows docs/results/rows.jsonl.gz --out docs/results.md`` writes the
Markdown report, one CSV per table next to the rows, and the PNG figures. The report is :data:`STUDIES`, in order:
each study is one module of :mod:`gcc_sgcl.experiments.studies` holding its row selection, its numbers and its
Markdown, whose ``sections`` function reads the :class:`~gcc_sgcl.experiments.studies.selection.Tables` and returns
its Markdown parts (writing its CSV and figures). Adding a table is one new module and one line here.

The tables show one budget: the learning curve's last point when the rows hold a curve (the report says whether
:func:`gcc_sgcl.experiments.studies.budget.choose_budget`'s rule holds there and where it first does), else the budget
of most rows; encoders pre-trained for 0 steps appear as the ``random init`` row.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from gcc_sgcl.experiments.studies import (
    ablation, alignment_check, budget, c_grid, classification, finetuned, inference_views, leave_one_out, long_budget,
    mean_ranks, over_datasets, pairs, progress, quintiles, row_sources, runtime, similarity, stability, summary, written,
)
from gcc_sgcl.experiments.studies.readme import headline_block, stability_block, update_readme
from gcc_sgcl.experiments.studies.selection import Tables, read_tables
from gcc_sgcl.experiments.tables import TABLES_FILE
from gcc_sgcl.fileio import atomic_target

STUDIES: tuple[Callable[[Tables], list[str]], ...] = (
    written.part("intro", "# Results"),
    summary.sections,
    classification.sections,
    similarity.sections,
    finetuned.sections,
    mean_ranks.sections,
    over_datasets.sections,
    written.part("protocol"),
    budget.sections,
    long_budget.sections,
    c_grid.sections,
    ablation.sections,
    pairs.sections,
    quintiles.sections,
    leave_one_out.sections,
    alignment_check.sections,
    runtime.sections,
    inference_views.sections,
    stability.sections,
    written.part("status"),
    progress.sections,
    row_sources.sections,
)


def build_report(rows_path: str | Path, out: str | Path, intro: str | Path | None = None,
                 heatmap_dataset: str = "rdt-b", modes: Sequence[str] = ("moco", "e2e"),
                 c_grid: Sequence[float] | None = None, protocol: str | Path | None = None,
                 status: str | Path | None = None, readme: str | Path | None = None) -> str:
    """Write the report to ``out`` (CSV tables and figures beside ``rows_path``); returns its text: the parts of
    :data:`STUDIES`, with the hand-written ``intro``, ``protocol`` and ``status`` (Markdown files) in their places;
    with ``readme``, its headline block is rewritten from the same table rows and its stability sentence from the
    stability measurements (:func:`~gcc_sgcl.experiments.studies.readme.update_readme`).

    With ``c_grid`` (the c values besides the default) the tables' ``sgcl`` row stays at the default c until every
    grid point has its seed-0 rows (as the sweep's ``sgcl-method``)."""
    texts = {name: Path(path).read_text().rstrip() for name, path in
             (("intro", intro), ("protocol", protocol), ("status", status)) if path}
    t = read_tables(rows_path, out, modes, c_grid, heatmap_dataset, texts)
    text = "\n\n".join(p for study in STUDIES for p in study(t) if p) + "\n"
    if t.spec is not None:
        t.spec.write(t.folder / TABLES_FILE)
    t.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(t.out) as tmp:  # never through a link planted in the report's place
        tmp.write_text(text)
    if readme:
        update_readme(readme, headline_block(t), stability_block(t.folder))
    return text
