"""The pre-registered alignment check (``docs/preregistration-alignment.md``, committed before its runs): is SGCL's
classification deficit this project's alignment stage?

Everything this module decides is fixed by that file: the encoders (``sgcl-no-align`` at the tables' c, ``sgcl``
and ``gcc``, E2E, the table budget, seeds 0–7), the two families (P: the frozen classification columns; S: the
similarity columns), the two contrasts per column (A: ``sgcl-no-align`` − ``sgcl``; B: ``sgcl-no-align`` −
``gcc``), the test (two-sided paired t over seeds, Holm within each family at α = 0.05), the deficit columns
(US-Airport, RDT-B) and the decision rule (:func:`decide`). The sensitivity reading repeats the tests on the new
seeds 3–7 alone. Until every seed of 0–7 has its rows the section is an interim report and states no decision.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from gcc_sgcl.experiments.stats import holm_adjusted, summarize
from gcc_sgcl.experiments.studies.cells import (
    BASELINE, CLASSIFICATION, SIMILARITY, Column, Rows, SeedDifferences, seed_differences,
)
from gcc_sgcl.experiments.studies.markdown import column_name, interval_cell, markdown_table, write_csv
from gcc_sgcl.experiments.tables import SGCL
from gcc_sgcl.presets import LEAVE_ONE_OUT

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables

REGISTRATION = "docs/preregistration-alignment.md"
NO_ALIGN = LEAVE_ONE_OUT + "align"
MODE = "e2e"
ALPHA = 0.05
SEEDS = tuple(range(8))  # the registered seeds
NEW_SEEDS = (3, 4, 5, 6, 7)  # trained after the registration (0–2 suggested the hypothesis)
DEFICIT = ("usa_airport", "rdt-b")  # the columns the headline read "GCC ahead" on when the check was registered
EXPLAINS, DOES_NOT, PARTLY = ("alignment explains the deficit", "alignment does not explain the deficit",
                              "partly / not resolved")


@dataclass(frozen=True)
class Contrast:
    """One registered test: ``name`` (``A``: no-align − sgcl; ``B``: no-align − gcc) on one column, the seed
    differences and the Holm-adjusted p within its family."""

    name: str
    family: str
    differences: SeedDifferences
    p_holm: float | None

    @property
    def rejects(self) -> bool:
        """Whether the Holm-adjusted test rejects a zero mean difference at :data:`ALPHA`."""
        return self.p_holm is not None and self.p_holm < ALPHA

    @property
    def sign(self) -> int:
        """+1 / −1: the mean difference's sign (0 when exactly 0)."""
        mean = self.differences.summary.mean
        return (mean > 0) - (mean < 0)


def contrasts(rows: Rows, seeds: Sequence[int] = SEEDS) -> list[Contrast]:
    """The registered contrasts A and B on every column of families P and S, on ``seeds`` only, Holm-corrected
    within each family (its columns × A, B)."""
    def on(items: list[SeedDifferences]) -> list[SeedDifferences]:
        return [kept for d in items if (kept := restrict(d, seeds)) is not None]

    out = []
    for family, tasks in (("P", CLASSIFICATION), ("S", SIMILARITY)):
        a = on(seed_differences(rows, NO_ALIGN, [MODE], tasks, against=SGCL))
        b = on(seed_differences(rows, NO_ALIGN, [MODE], tasks, against=BASELINE))
        tests = [("A", d) for d in a] + [("B", d) for d in b]
        adjusted = holm_adjusted([d.p for _, d in tests])
        out += [Contrast(name, family, d, p) for (name, d), p in zip(tests, adjusted)]
    return out


def restrict(d: SeedDifferences, seeds: Sequence[int]) -> SeedDifferences | None:
    """``d`` on those of its seeds in ``seeds`` (``None`` if none is)."""
    kept = [(s, x) for s, x in zip(d.seeds, d.differences) if s in seeds]
    if not kept:
        return None
    return SeedDifferences(d.column, tuple(s for s, _ in kept), tuple(x for _, x in kept),
                           summarize([x for _, x in kept], interval="t"))


def decide(items: Sequence[Contrast]) -> tuple[str, dict[str, str]]:
    """The registered decision on the deficit columns from the family-P contrasts ``items``: per deficit column
    which outcome holds, and the overall verdict (:data:`EXPLAINS` when both columns have A rejecting with
    no-align above sgcl and B not rejecting with gcc ahead; :data:`DOES_NOT` when both have B rejecting with gcc
    ahead; else :data:`PARTLY`).

    >>> from gcc_sgcl.experiments.stats import summarize
    >>> def c(name, dataset, *v, p):
    ...     column = Column(dataset, "node_classification", "micro_f1", "e2e")
    ...     return Contrast(name, "P", SeedDifferences(column, tuple(range(len(v))), v, summarize(list(v))), p)
    >>> decide([c("A", "usa_airport", 0.01, 0.02, p=0.01), c("B", "usa_airport", 0.001, -0.001, p=1.0),
    ...         c("A", "rdt-b", 0.02, 0.03, p=0.02), c("B", "rdt-b", 0.01, 0.0, p=0.5)])[0]
    'alignment explains the deficit'
    >>> decide([c("A", "usa_airport", 0.01, 0.02, p=0.01), c("B", "usa_airport", -0.01, -0.02, p=0.01),
    ...         c("A", "rdt-b", 0.0, 0.01, p=0.4), c("B", "rdt-b", -0.01, -0.03, p=0.001)])
    ('alignment does not explain the deficit', {'usa_airport': 'deficit stays', 'rdt-b': 'deficit stays'})
    """
    per: dict[str, str] = {}
    for dataset in DEFICIT:
        a = next((x for x in items if x.family == "P" and x.name == "A" and x.differences.column.dataset == dataset),
                 None)
        b = next((x for x in items if x.family == "P" and x.name == "B" and x.differences.column.dataset == dataset),
                 None)
        if a is None or b is None:
            per[dataset] = "no rows"
        elif b.rejects and b.sign < 0:
            per[dataset] = "deficit stays"
        elif a.rejects and a.sign > 0:
            per[dataset] = "alignment explains it"
        else:
            per[dataset] = "neither shown"
    outcomes = set(per.values())
    verdict = EXPLAINS if outcomes == {"alignment explains it"} else DOES_NOT if outcomes == {"deficit stays"} \
        else PARTLY
    return verdict, per


def seeds_present(rows: Rows) -> tuple[int, ...]:
    """The registered seeds ``sgcl-no-align`` has rows for on every family-P column ``gcc`` has."""
    have = [set(rows.seeds(NO_ALIGN, MODE, *c)) for c in rows.columns(CLASSIFICATION)]
    return tuple(s for s in SEEDS if have and all(s in h for h in have))


def contrasts_table(items: Sequence[Contrast], csv_path: Path | None = None) -> str:
    """The registered tests as a Markdown table (and CSV when ``csv_path`` is given)."""
    if csv_path is not None:
        write_csv(csv_path, ["family", "contrast", "dataset", "metric", "seeds", "mean", "ci_low", "ci_high",
                             "p", "p_holm"],
                  [[x.family, x.name, x.differences.column.dataset, x.differences.column.metric,
                    " ".join(map(str, x.differences.seeds)), x.differences.summary.mean,
                    x.differences.summary.ci_low, x.differences.summary.ci_high, x.differences.p, x.p_holm]
                   for x in items])
    body = [[x.family, {"A": "no-align − sgcl", "B": "no-align − gcc"}[x.name],
             column_name(x.differences.column, {MODE}), interval_cell(x.differences),
             "–" if x.differences.p is None else f"{x.differences.p:.2g}",
             "–" if x.p_holm is None else f"{x.p_holm:.2g}", "rejects" if x.rejects else "–"] for x in items]
    return markdown_table(["family", "contrast", "column", "mean (pp) [90 % t] (seeds)", "t-test p", "Holm p",
                           f"α = {ALPHA:g}"], body)


def outcome_sentence(rows: Rows, link: str = REGISTRATION) -> str:
    """The check's state in one sentence, for the report and the README (``link``: the registration's path from
    there): the registered verdict once every seed 0–7 has its rows, else how many have (interim, no decision)."""
    present = seeds_present(rows)
    if len(present) < len(SEEDS):
        return (f"Pre-registered alignment check ([{REGISTRATION.split('/')[-1]}]({link})): "
                f"`sgcl-no-align` has {len(present)} of its {len(SEEDS)} registered seeds so far; no decision until "
                "all are in.")
    verdict, per = decide(contrasts(rows))
    detail = "; ".join(f"{column_name(Column(d, '', '', MODE), {MODE})}: {what}" for d, what in per.items())
    return (f"Pre-registered alignment check ({len(SEEDS)} seeds, Holm-corrected paired t-tests, "
            f"[{REGISTRATION.split('/')[-1]}]({link})): **{verdict}** ({detail}).")


def sections(t: Tables) -> list[str]:
    """The registered check: its state, the tests on every registered seed present and on the new seeds alone."""
    if NO_ALIGN not in t.rows.methods(classical=False):
        return []
    present = seeds_present(t.rows)
    main = contrasts(t.rows)
    fresh = contrasts(t.rows, NEW_SEEDS)
    parts = ["## Pre-registered: does the alignment stage explain SGCL's classification deficit?",
             f"The hypothesis, encoders, columns, tests and decision rule were committed in "
             f"[{REGISTRATION.split('/')[-1]}]({REGISTRATION.split('/', 1)[1]}) before the new runs (seeds 3–7 of "
             "`sgcl-no-align`, `bash scripts/reproduce.sh align`) started; this section applies that file's rule "
             "to the stored rows, whichever way it falls. Family P: the frozen classification columns; family S: "
             "similarity search (reported, not part of the decision). Each test is a two-sided paired t-test over "
             f"seeds, Holm-corrected within its family at α = {ALPHA:g}; the deficit columns are US-Airport and "
             "RDT-B.",
             outcome_sentence(t.rows, REGISTRATION.split("/", 1)[1]),
             f"The registered tests on the seeds stored so far (`sgcl-no-align`: "
             f"{' '.join(map(str, present)) or 'none'} of 0–7):",
             contrasts_table(main, t.folder / "alignment_check.csv")]
    fresh_present = [s for s in NEW_SEEDS if s in present]
    if len(fresh_present) >= 2:
        verdict, per = decide(fresh)
        parts += [f"Sensitivity: the new seeds alone ({' '.join(map(str, fresh_present))}), the seeds that did "
                  f"not suggest the hypothesis — the same rule reads **{verdict}** ("
                  + "; ".join(f"{column_name(Column(d, '', '', MODE), {MODE})}: {w}" for d, w in per.items()) + ").",
                  contrasts_table(fresh)]
    return parts
