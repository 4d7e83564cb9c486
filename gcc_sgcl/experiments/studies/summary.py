"""The report's opening verdict: SGCL − GCC per column over paired seeds, frozen and fine-tuned apart, each kind a
family of tests read with Holm's correction.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from gcc_sgcl.experiments.studies.cells import CLASSIFICATION, SIMILARITY, seed_differences
from gcc_sgcl.experiments.tables import FINETUNED, SGCL

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

from gcc_sgcl.experiments.studies.cells import SeedDifferences
from gcc_sgcl.experiments.studies.markdown import FWER, column_name, corrected_readings, count, interval_side


def summary_lines(frozen: list[SeedDifferences], finetuned: list[SeedDifferences], method: str = "SGCL") -> str:
    """The report's opening verdict, one line per kind of evaluation: the columns where ``method`` − GCC's
    90 % t-interval over paired seeds lies above 0, below 0, or contains it, and those with one paired seed;
    then, the line's columns being one family of tests, the columns where the seed-level t-test rejects a zero
    difference after Holm's correction over the family at :data:`~gcc_sgcl.experiments.studies.markdown.FWER`
    (:func:`~gcc_sgcl.experiments.studies.markdown.corrected_readings`): the verdicts the README states.

    >>> from gcc_sgcl.experiments.studies.cells import Column, SeedDifferences
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> up = SeedDifferences(Column("imdb-multi", "t", "accuracy", "e2e"), (0, 1, 2), (0.01, 0.02, 0.01),
    ...                      summarize((0.01, 0.02, 0.01), interval="t"))
    >>> print(summary_lines([up], []))  # doctest: +NORMALIZE_WHITESPACE
    - Frozen encoders (3 paired seeds, 1 column): SGCL − GCC's 90 % interval lies above 0 on IMDB-M (+1.33 pp);
      below 0 on no column; contains 0 on 0 columns.
    - Fine-tuned encoders: no paired seeds yet.
    """
    def line(items: list[SeedDifferences], what: str) -> str:
        if not items:
            return f"- {what}: no paired seeds yet."
        modes = {d.column.mode for d in items}

        def listed(found: list[SeedDifferences]) -> str:
            return ", ".join(f"{column_name(d.column, modes)} ({100 * d.summary.mean:+.2f} pp)"
                             for d in found) or "no column"

        sides = [interval_side(d.summary) for d in items]

        def on(side: str) -> list[SeedDifferences]:
            return [d for d, s in zip(items, sides) if s == side]

        ahead, behind, within = on("interval above 0"), on("interval below 0"), on("interval contains 0")
        single = [column_name(d.column, modes) for d in on("one seed, no interval")]
        seeds = sorted({len(d.seeds) for d in items})
        span = f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 1 else str(seeds[0])
        readings = corrected_readings(items)
        tested = sum(p is not None for p, _ in readings)
        kept = [d for d, (_, r) in zip(items, readings) if r in ("SGCL ahead", "GCC ahead")]
        family = (f" With the {count(tested, 'column')}' seed-level t-tests as one family, Holm-corrected "
                  f"(family-wise error rate {100 * FWER:g} %), the difference is shown on {listed(kept)}."
                  if tested > 1 else "")
        return (f"- {what} ({span} paired seeds, {count(len(items), 'column')}): {method} − GCC's 90 % interval "
                f"lies above 0 on {listed(ahead)}; below 0 on {listed(behind)}; contains 0 on "
                f"{count(len(within), 'column')}"
                + (f"; one paired seed, no interval, on {', '.join(single)}" if single else "") + "." + family)

    return "\n".join([line(frozen, "Frozen encoders"), line(finetuned, "Fine-tuned encoders")])


def sections(t: Tables) -> list[str]:
    """The report's opening: SGCL − GCC seed by seed on every column, frozen and fine-tuned apart."""
    return ["## Summary: SGCL against GCC at the table budget",
            "SGCL − GCC seed by seed on every column (frozen: classification and similarity search; fine-tuned "
            "apart), as in the seed-by-seed tables of the classification, similarity and fine-tuning sections "
            "below. Each interval is the 90 % Student-t interval of the mean difference "
            "over paired seeds (the encoders are the independent samples; CV repetitions of one encoder are not), "
            "so with few seeds only a large, consistent difference excludes 0; the paper's tests, on seeds × CV "
            "repetitions, are in \"SGCL against GCC\".",
            summary_lines(seed_differences(t.rows, SGCL, t.modes, CLASSIFICATION + SIMILARITY),
                          seed_differences(t.rows, SGCL, t.modes, FINETUNED))]
