"""Top-k similarity search with frozen encoders: HITS@20 / HITS@40 per method, the training-free floor and SGCL −
GCC seed by seed."""
from __future__ import annotations

from typing import TYPE_CHECKING

from gcc_sgcl.experiments.studies.cells import SIMILARITY, score_grid
from gcc_sgcl.experiments.studies.cells import floor_verdicts
from gcc_sgcl.experiments.studies.markdown import floor_lines
from gcc_sgcl.experiments.studies.markdown import grid_section, seed_difference_parts

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


def sections(t: Tables) -> list[str]:
    """The similarity table (markers as the classification table's, tested on seeds alone), its floor verdicts and
    the seed-by-seed SGCL − GCC differences."""
    return [
        "## Top-k similarity search (HITS@20 / HITS@40)",
        "Cells are mean ± std over seeds (markers as in the classification table, the tests on seeds alone: a "
        "similarity row has one score per seed); ᶜ: a single seed, whose ± is the bootstrap s.e. of HITS@k over the "
        "dataset's query pairs.",
        grid_section(*score_grid(t.rows, t.modes, SIMILARITY, t.methods + t.untrained), t.folder / "similarity.csv",
                     with_metric=True),
        floor_lines(floor_verdicts(t.rows, t.modes, SIMILARITY, t.presets)),
        *seed_difference_parts(t, SIMILARITY, "sgcl_minus_gcc_similarity"),
    ]
