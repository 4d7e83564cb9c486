"""The appendix's ablation: SGCL with its spectral crop or frequency reorder swapped for the random analogue
(``sgcl[crop=random]``, ``sgcl[permute=random]``) and the single stages, against ``gcc``, and ``sgcl`` against each
random analogue.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from gcc_sgcl.experiments.stats import min_wilcoxon_p
from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, SWAPPED, Rows, score_grid, statistics
from gcc_sgcl.experiments.studies.markdown import grid_section, statistics_section
from gcc_sgcl.experiments.tables import BASELINE, CONTROLS, HEATMAP_STAGES, SGCL
from gcc_sgcl.method import MethodSpec

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

ABLATION_METHODS = ("sgcl", *SWAPPED)


def sections(t: Tables) -> list[str]:
    """The ablation table (markers against ``gcc``) and ``sgcl`` against each random analogue
    (:func:`swap_statistics`), E2E."""
    rows, folder = t.rows, t.folder
    trained = rows.methods(classical=False)
    ablation = [BASELINE] + [m for m in ABLATION_METHODS + tuple(f"sgcl-{s}" for s in HEATMAP_STAGES + CONTROLS)
                             if m in trained]
    return [
        "## Ablation: spectral crop / reorder against random analogues (E2E)",
        "As the appendix's ablation table: `sgcl[crop=random]` is `sgcl` (the tables' c) with its spectral crop "
        "replaced by a random crop dropping as many nodes, `sgcl[permute=random]` with its frequency reorder replaced "
        "by a uniform permutation of the eigenvector columns; `sgcl-<stage>` rows (when present) train one stage "
        "alone, `sgcl-random-crop` / `sgcl-random-permute` one control alone. The table's markers test each row "
        "against `gcc`; the statistics after it test `sgcl` against each random analogue. How often each stage "
        "and control changes a view is measured in `docs/augmentations.md` (`python -m gcc_sgcl.bench --only "
        "augment`); so is what a crop leaves of a view: on the normalised Laplacian's eigenvectors (the crop basis "
        "of every encoder here) the spectral crop cuts about as many views into pieces as the random crop does.",
        grid_section(*score_grid(rows, ["e2e"], CLASSIFICATION, ablation), folder / "ablation.csv"),
        *swap_statistics(rows, trained, folder),
    ]


def swap_statistics(rows: Rows, trained: Sequence[str], folder: Path) -> list[str]:
    """``sgcl`` against each swapped-in random analogue among the ``trained`` methods (the ablation's own
    question), paired by seed; the table's markers test each row against ``gcc`` instead."""
    out = []
    for swapped in SWAPPED:
        if swapped not in trained:
            continue
        part = "_".join(f"{k}_{v}" for k, v in MethodSpec.parse(swapped).settings)
        stats = statistics(rows, SGCL, ["e2e"], CLASSIFICATION, against=swapped)
        n = max((s.seeds for s in stats), default=0)
        floor = (f"; with n paired seeds the Wilcoxon test of the seed means cannot fall below 2/2^n "
                 f"(n = {n}: {min_wilcoxon_p(n):.3g})" if n else "")
        out += [f"### `sgcl` against `{swapped}`: is the spectral version better than its random analogue?",
                f"Difference = `sgcl` − `{swapped}` (positive: the spectral version is ahead) over the seeds both "
                f"have; tests as in the SGCL-against-GCC statistics (seeds × CV repetitions{floor}).",
                statistics_section(stats, SGCL, folder / f"ablation_statistics_{part}.csv", against=swapped)]
    return out
