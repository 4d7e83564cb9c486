"""Runtime: seconds per mini-batch of every method at the paper's runtime batch, one run, as stored by
``bash scripts/reproduce.sh runtime``.

One name, one idea at 2 layers: :mod:`gcc_sgcl.experiments.runtime` (the measurement),
:mod:`gcc_sgcl.experiments.studies.runtime` (its report table).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass
from pathlib import Path

from gcc_sgcl.experiments.studies.cells import Rows
from gcc_sgcl.experiments.studies.markdown import markdown_table, write_csv
from gcc_sgcl.experiments.tables import BASELINE

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


@dataclass(frozen=True)
class Runtime:
    """One corpus's runtime measurement: per method (data, step, total) seconds per mini-batch and the ratio of
    its total to ``gcc``'s (else the first method's)."""

    corpus: str
    protocol: str
    std_kind: str
    commit: str
    methods: list[tuple[str, float, float, float, float]]


def runtimes(rows: Rows) -> list[Runtime]:
    """One :class:`Runtime` per measured corpus."""
    out = []
    for corpus in dict.fromkeys(r.dataset for r in rows.runtime):
        here = [r for r in rows.runtime if r.dataset == corpus]
        values = {(r.method, r.metric): r.mean for r in here}
        methods = list(dict.fromkeys(r.method for r in here))
        base = values.get((BASELINE, "total_s")) or values[(methods[0], "total_s")]
        out.append(Runtime(corpus, here[0].protocol, here[0].std_kind, here[0].commit, [
            (m, values[(m, "data_s")], values[(m, "step_s")], values[(m, "total_s")], values[(m, "total_s")] / base)
            for m in methods]))
    return out


def runtime_section(items: list[Runtime], csv_path: Path) -> str:
    """One Markdown table per measured corpus; all of them in one CSV."""
    if not items:
        return "_no runtime rows_"
    write_csv(csv_path, ["corpus", "method", "data_s", "step_s", "total_s", "ratio"],
              [[r.corpus, *m] for r in items for m in r.methods])
    return "\n\n".join(
        f"Corpus `{r.corpus}`, {r.protocol}, {r.std_kind} (commit `{r.commit}`):\n\n"
        + markdown_table(["method", "data s/batch", "step s/batch", "total s/batch", "ratio to gcc"],
                         [[m, f"{d:.4f}", f"{s:.4f}", f"{t:.4f}", f"{ratio:.2f}"] for m, d, s, t, ratio in r.methods])
        for r in items)


def sections(t: Tables) -> list[str]:
    """Seconds per mini-batch of every method, one run (the rows of ``bash scripts/reproduce.sh runtime``)."""
    return ["## Runtime (seconds per mini-batch, one run)",
            "Measured by `bash scripts/reproduce.sh runtime` at the SGCL paper's runtime batch (16), on one thread, "
            "the methods alternating batch by batch so that the machine's load falls on all of them alike (the "
            "ratio to `gcc` is what the run compares). Seconds per step at the tables' batch 256 with two data "
            "workers, for `gcc` and `sgcl`, are in `docs/performance.md`.",
            runtime_section(runtimes(t.rows), t.folder / "runtime.csv")]
