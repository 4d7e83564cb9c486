"""The pairwise heat-map: every pair of SGCL's stages trained together (``sgcl-a+b``), as % gain over GCC on one
dataset, the single stages on the diagonal.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from gcc_sgcl.experiments.stats import min_wilcoxon_p
from gcc_sgcl.experiments.studies.markdown import label

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, Rows, paired, significance
from gcc_sgcl.experiments.studies.markdown import pyplot, markdown_table, save_figure, write_csv
from gcc_sgcl.experiments.tables import BASELINE, HEATMAP_STAGES


@dataclass(frozen=True)
class HeatMap:
    """The pairwise heat-map on one dataset: per cell (stage ``a``, stage ``b``; the diagonal is ``sgcl-<a>``
    alone) the % gain of its mean over ``gcc``'s on the seeds both have (NaN where not run or no seed is shared),
    the number of those seeds, and its marker against ``gcc`` as in the tables (:func:`significance`: the paper's
    tests on the repetitions of the seeds both have; none for a single shared seed)."""

    gain: np.ndarray
    seeds: np.ndarray
    marks: np.ndarray


def heatmap_gains(rows: Rows, dataset: str, mode: str) -> HeatMap | None:
    """The :class:`HeatMap` of ``sgcl-<a>+<b>`` and ``sgcl-<a>`` on ``dataset``; ``None`` without a ``gcc`` row."""
    columns = [c for c in rows.columns(CLASSIFICATION) if c[0] == dataset]
    if not columns:
        return None
    _, task, metric = columns[0]
    base = rows.seeds(BASELINE, mode, dataset, task, metric)
    if not base:
        return None
    gain = np.full((len(HEATMAP_STAGES), len(HEATMAP_STAGES)), np.nan)
    seeds = np.zeros_like(gain, dtype=int)
    marks = np.full(gain.shape, "", dtype=object)
    for i, a in enumerate(HEATMAP_STAGES):
        for j, b in enumerate(HEATMAP_STAGES):
            names = [f"sgcl-{a}"] if i == j else [f"sgcl-{a}+{b}", f"sgcl-{b}+{a}"]
            name = next((n for n in names if rows.seeds(n, mode, dataset, task, metric)), None)
            if name is not None:
                mine, theirs = paired(rows.seeds(name, mode, dataset, task, metric), base)
                if mine:
                    gain[i, j] = 100 * (np.mean(mine) - np.mean(theirs)) / np.mean(theirs)
                seeds[i, j] = len(mine)
                marks[i, j] = significance(rows, name, mode, dataset, task, metric) if len(mine) > 1 else ""
    return HeatMap(gain, seeds, marks)


def heatmap_section(heat: HeatMap, title: str, png: Path, csv_path: Path) -> str:
    """The pairwise heat-map as PNG, CSV (gains) and a Markdown table with seed counts and markers."""
    gain, seeds, marks = heat.gain, heat.seeds, heat.marks
    write_csv(csv_path, ["augmentation"] + list(HEATMAP_STAGES),
              [[a] + ["" if np.isnan(v) else f"{v:.3f}" for v in gain[i]] for i, a in enumerate(HEATMAP_STAGES)])
    plot_heatmap(gain, marks, title, png)
    body = [[a] + ["–" if np.isnan(v) else f"{v:+.2f}{marks[i, j]} ({seeds[i, j]})" for j, v in enumerate(gain[i])]
            for i, a in enumerate(HEATMAP_STAGES)]
    return markdown_table(["% gain (seeds)"] + list(HEATMAP_STAGES), body)


def plot_heatmap(gain: np.ndarray, marks: np.ndarray, title: str, png: Path, rows: Sequence[str] = HEATMAP_STAGES,
                 columns: Sequence[str] = HEATMAP_STAGES, unit: str = "% gain over GCC",
                 size: tuple[float, float] = (6.4, 5.2)) -> None:
    """A diverging heat-map of ``gain`` (``rows`` × ``columns``, NaN cells blank) with the values and ``marks``
    written in; the colour bar reads ``unit``."""
    plt = pyplot()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=size)
    bound = max(float(np.nanmax(np.abs(gain))) if np.isfinite(gain).any() else 1.0, 1e-9)
    image = ax.imshow(np.ma.masked_invalid(gain), cmap="RdYlGn", vmin=-bound, vmax=bound)
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    for i in range(len(rows)):
        for j in range(len(columns)):
            if np.isfinite(gain[i, j]):
                ax.text(j, i, f"{gain[i, j]:+.1f}{marks[i, j]}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label=unit)
    ax.set_title(title)
    fig.tight_layout()
    save_figure(fig, png, dpi=120)


def sections(t: Tables) -> list[str]:
    """The pairwise heat-map on the report's heat-map dataset: % gain of each pair preset over GCC (E2E)."""
    rows, folder, heatmap_dataset = t.rows, t.folder, t.heatmap_dataset
    png = folder / f"heatmap_{heatmap_dataset}.png"
    heat = heatmap_gains(rows, heatmap_dataset, "e2e")
    title = f"% gain over GCC, {label(heatmap_dataset)} (E2E)"
    return [
        f"## Pairwise augmentations on {label(heatmap_dataset)} (E2E, % gain over GCC)",
        "Cells (a, b) and (b, a): `sgcl-a+b`, the two stages applied in the pipeline's (the paper's) order; diagonal: "
        "`sgcl-a` alone (similar and diverse are alternative filters, never paired; they filter at the `sgcl` row's "
        "c). Gain = (the cell's mean − `gcc`'s mean) / `gcc`'s mean, in %, both over the seeds the cell shares "
        "with `gcc` (as the per-stage evidence pairs them; – where it shares none), with the classification "
        "table's markers against `gcc` (tests on the CV repetitions of those seeds, none for one shared seed; with 2 "
        f"seeds, 20 paired repetitions, the Wilcoxon test cannot fall below {min_wilcoxon_p(20):.1e}, so only † "
        "can appear, not the paper's ▲/▼). The paper pre-trains these encoders on DBLP (SNAP) alone; that graph "
        "is not in this data root, so they use the tables' corpus and budget. How much of the align step's "
        "rotation a view fixes, and how close it brings the view to its global-embedding rows, is measured in "
        "`docs/augmentations.md`.",
        f"![heat-map]({t.link(png)})",
        heatmap_section(heat, title, png, folder / f"heatmap_{heatmap_dataset}.csv") if heat
        else f"_no {BASELINE} rows for {heatmap_dataset}_",
    ]
