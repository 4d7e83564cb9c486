"""Fine-tuned encoders: the table (pre-trained encoders and ``random init`` fine-tuned with one recipe), whether
pre-training helps fine-tuning, SGCL − GCC seed by seed, and the SGCL paper's published fine-tuned numbers beside the
measured ones.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from gcc_sgcl.experiments.studies.cells import score_grid
from gcc_sgcl.experiments.studies.cells import FLOOR_MIN_SEEDS, floor_verdicts
from gcc_sgcl.experiments.studies.markdown import floor_lines
from gcc_sgcl.experiments.studies.markdown import grid_section, seed_difference_parts

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gcc_sgcl.experiments.studies.cells import Rows
from gcc_sgcl.experiments.studies.markdown import count, label, markdown_table, write_csv
from gcc_sgcl.experiments.tables import FINETUNED, RANDOM_INIT


def published_section(items: list[Published], csv_path: Path) -> str:
    """Measured fine-tuned scores beside the published ones (header ``| dataset | method | published | measured |
    difference |``), with where they come from."""
    if not items:
        return ""
    write_csv(csv_path, ["dataset", "method", "published", "measured", "difference", "seeds"],
              [[p.dataset, p.method, p.published, p.measured, p.difference, p.seeds] for p in items])
    body = [[label(p.dataset), p.method, f"{p.published:.1f}",
             "–" if p.measured is None else f"{p.measured:.2f} ({count(p.seeds, 'seed')})",
             "–" if p.difference is None else f"{p.difference:+.2f}"] for p in items]
    return ("Beside the SGCL paper's published fine-tuned E2E scores (its appendix tables, GCC's and SGCL's rows; "
            "its fine-tuning epochs and batch are not stated, this report uses GCC's `finetune.sh` recipe; corpus "
            "and pre-training budget differ as in the fidelity section):\n\n"
            + markdown_table(["dataset", "method", "published", "measured", "difference"], body))


def finetune_intro(rows: Rows) -> str:
    """How the table's fine-tuned rows were fine-tuned (their stored protocols)."""
    tuned = [r for r in rows.rows if r.task in FINETUNED]
    protocols = sorted({r.protocol for r in tuned})
    scratch = any(r.method == RANDOM_INIT for r in tuned)
    scratch_text = ("`random init` fine-tunes the untrained encoder with the same recipe: supervised training from "
                    "scratch, the control that shows what pre-training adds. " if scratch else "")
    return ("Each fold fine-tunes a copy of the pre-trained encoder with a fresh linear head on the labels of the "
            "training folds (the encoder is not frozen); cells are mean ± std over seeds of each encoder's mean over "
            "the folds (ᶜ: one seed, ± over its folds). " + scratch_text + "Protocol: "
            + "; ".join(f"`{p}`" for p in protocols) + ".")


# The SGCL paper's appendix, E2E, fine-tuned encoders (its Tables "nl_fine_tune" and "gl_fine_tune"), in %
PUBLISHED_FINETUNED_E2E = {
    "gcc": {"usa_airport": 68.3, "h-index": 80.5, "imdb-binary": 70.8, "imdb-multi": 48.5, "collab": 79.0,
            "rdt-b": 86.4},
    "sgcl": {"usa_airport": 68.6, "h-index": 80.7, "imdb-binary": 72.8, "imdb-multi": 50.1, "collab": 79.8,
             "rdt-b": 87.4},
}


@dataclass(frozen=True)
class Published:
    """A published score of ``method`` on ``dataset`` beside this project's (mean over ``seeds``), both in %;
    ``measured`` is ``None`` without rows."""

    method: str
    dataset: str
    published: float
    measured: float | None
    seeds: int

    @property
    def difference(self) -> float | None:
        """Measured − published, in percentage points."""
        return None if self.measured is None else self.measured - self.published


def published_finetuned(table: Rows, mode: str = "e2e") -> list[Published]:
    """Each fine-tuned column of ``table`` against :data:`PUBLISHED_FINETUNED_E2E`, per published method (the
    table's ``sgcl`` row is the one the report shows under that name), mean over the method's seeds."""
    out = []
    for dataset, task, metric in table.columns(FINETUNED):
        for method, published in PUBLISHED_FINETUNED_E2E.items():
            if dataset in published:
                means = table.seeds(method, mode, dataset, task, metric)
                out.append(Published(method, dataset, published[dataset],
                                     100 * float(np.mean(list(means.values()))) if means else None, len(means)))
    return out


def sections(t: Tables) -> list[str]:
    """The fine-tuned table (the tables' encoders and ``random init``), whether pre-training beats fine-tuning from
    scratch, SGCL − GCC seed by seed and the SGCL paper's published fine-tuned numbers beside the rows."""
    rows, modes = t.rows, t.modes
    if not rows.datasets(FINETUNED):
        return ["## Fine-tuned encoders", "_no fine-tuning rows_"]
    return [
        "## Fine-tuned encoders",
        finetune_intro(rows),
        grid_section(*score_grid(rows, modes, FINETUNED, t.encoders + t.untrained), t.folder / "finetuned.csv"),
        "### Does pre-training help fine-tuning?",
        f"Best seed-mean of the presets above with at least {FLOOR_MIN_SEEDS} seeds on the column against "
        "`random init` fine-tuned with the same recipe (tests on every fold of every seed, taken as independent "
        "samples though both sides share the folds: the p-values overstate the evidence, and the seed counts are "
        "the independent encoders):",
        floor_lines(floor_verdicts(rows, modes, FINETUNED, t.presets, floor=RANDOM_INIT), "the untrained encoder")
        or "_no fine-tuned `random init` rows_",
        *seed_difference_parts(t, FINETUNED, "sgcl_minus_gcc_finetuned"),
        published_section(published_finetuned(rows), t.folder / "finetuned_published.csv"),
    ]
