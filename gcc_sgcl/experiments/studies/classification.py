"""Node and graph classification with frozen encoders: the main table, whether pre-training beats the
training-free floor (:func:`floor_verdicts`) and adds to it (:func:`join_verdicts`, the ``… ⊕ structural`` rows), and
SGCL against GCC (the headline per mode, seed by seed, the paper's three tests and the per-augmentation evidence).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from gcc_sgcl.experiments.rows import CLASSICAL_MODE
from gcc_sgcl.experiments.stats import PAPER_ALPHA, Summary, compare, marker, min_wilcoxon_p
from gcc_sgcl.experiments.studies.cells import (
    CLASSIFICATION, DATASET_LABELS, FLOOR_MIN_SEEDS, SIMILARITY, Column, Rows, cv_settings, floor_verdicts,
    loose_mark, paired, pooled, score_grid, seed_differences, seed_differences_of, statistics,
)
from gcc_sgcl.experiments.studies.markdown import (
    count, floor_lines, grid_section, interval_side, label, seed_difference_parts, statistics_section,
)
from gcc_sgcl.experiments.tables import BASELINE, CONTROLS, HEATMAP_STAGES, SGCL
from gcc_sgcl.method import MethodSpec

if TYPE_CHECKING:
    from gcc_sgcl.experiments.studies.selection import Tables


@dataclass(frozen=True)
class JoinVerdict:
    """On one column: an encoder alone, the structural vector alone and the two joined (``<method> ⊕
    structural``), means over the encoder's seeds that have both rows."""

    column: Column
    method: str
    seeds: int
    encoder: float
    structural: float
    joined: float


def join_verdicts(rows: Rows, modes: Sequence[str], tasks: Sequence[str], methods: Sequence[str],
                  floor: str = "structural") -> list[JoinVerdict]:
    """:class:`JoinVerdict` of every ``method`` with ``method ⊕ floor`` rows, per column and mode."""
    out = []
    for d, task, metric in rows.columns(tasks):
        alone = rows.seeds(floor, CLASSICAL_MODE, d, task, metric)
        for mode in modes:
            for method in methods:
                a, b = paired(rows.seeds(method, mode, d, task, metric),
                              rows.seeds(str(MethodSpec.parse(method).join(floor)), mode, d, task, metric))
                if a and alone:
                    out.append(JoinVerdict(Column(d, task, metric, mode), method, len(a), float(np.mean(a)),
                                           float(np.mean(list(alone.values()))), float(np.mean(b))))
    return out


@dataclass(frozen=True)
class Headline:
    """SGCL against GCC in one mode: the columns (``"<dataset> <metric>"``) where it is ahead or behind (pooled
    means), and those passing the paper's threshold (``strict``) or only p < 0.05 (``loose``), with markers."""

    mode: str
    ahead: list[str]
    behind: list[str]
    strict: list[str]
    loose: list[str]

    @property
    def compared(self) -> int:
        """The number of columns compared (the m of "ahead in n of m")."""
        return len(self.ahead) + len(self.behind)


def headline(rows: Rows, mode: str, tasks: Sequence[str], label: dict[str, str] | None = None,
             method: str = "sgcl") -> Headline:
    """``method`` against ``gcc`` per column with at least two pooled samples; ties count as behind."""
    ahead, behind, strict, loose = [], [], [], []
    for d, task, metric in rows.columns(tasks):
        x, y = pooled(rows, method, mode, d, task, metric)
        if len(x) < 2:
            continue
        c = compare(x, y)
        name = f"{(label or {}).get(d, d)} {metric}"
        (ahead if c.mean_diff > 0 else behind).append(name)
        if marker(c, PAPER_ALPHA):
            strict.append(f"{name} {marker(c, PAPER_ALPHA)}")
        elif mark := loose_mark(c):
            loose.append(f"{name} {mark}")
    return Headline(mode, ahead, behind, strict, loose)


@dataclass(frozen=True)
class Evidence:
    """On one classification dataset: SGCL − GCC over ``seeds`` paired seeds (``summary``: their mean and its
    90 % t-interval); each single-stage preset − GCC over the seeds it shares with ``gcc`` (``stages``: the mean
    difference and those seeds); and SGCL − GCC again on each of those seed sets (``sgcl_on``), the like-for-like
    comparison for the stages."""

    dataset: str
    summary: Summary
    stages: dict[str, tuple[float, tuple[int, ...]]]
    sgcl_on: dict[tuple[int, ...], float]

    @property
    def difference(self) -> float:
        """The mean SGCL − GCC over the paired seeds."""
        return self.summary.mean

    @property
    def seeds(self) -> int:
        """The number of paired seeds."""
        return self.summary.n


def evidence(rows: Rows, mode: str) -> list[Evidence]:
    """:class:`Evidence` for every classification dataset where ``sgcl`` and ``gcc`` share a seed."""
    out = []
    for sgcl in seed_differences(rows, SGCL, [mode], CLASSIFICATION):
        d, task, metric = sgcl.column.dataset, sgcl.column.task, sgcl.column.metric
        base = rows.seeds(BASELINE, mode, d, task, metric)
        by_seed = dict(zip(sgcl.seeds, sgcl.differences))
        stages, sgcl_on = {}, {}
        for stage in HEATMAP_STAGES + CONTROLS:
            diffs = seed_differences_of(rows.seeds(f"sgcl-{stage}", mode, d, task, metric), base)
            if diffs:
                common = tuple(diffs)
                stages[stage] = (float(np.mean(list(diffs.values()))), common)
                if all(s in by_seed for s in common):
                    sgcl_on[common] = float(np.mean([by_seed[s] for s in common]))
        out.append(Evidence(d, sgcl.summary, stages, sgcl_on))
    return out


def join_lines(verdicts: list[JoinVerdict]) -> str:
    """One sentence per joined row: what joining adds over structure alone and over the encoder alone."""
    return "\n".join(
        f"- {label(v.column.dataset)} {v.column.metric} ({v.column.mode.upper()}, {count(v.seeds, 'seed')}): "
        f"`{v.method} ⊕ structural` {100 * v.joined:.2f}; `structural` alone {100 * v.structural:.2f} "
        f"({100 * (v.joined - v.structural):+.2f} pt from adding the encoder), `{v.method}` alone "
        f"{100 * v.encoder:.2f} ({100 * (v.joined - v.encoder):+.2f} pt from adding structure)." for v in verdicts)


def headline_text(h: Headline, method: str = "SGCL") -> str:
    """The headline as one bold sentence plus the significant columns; empty when nothing was compared."""
    if not h.compared:
        return ""
    return (f"**{h.mode.upper()}: {method}'s mean is above GCC's in {len(h.ahead)} of {h.compared} columns "
            f"({', '.join(h.ahead) or 'none'}) and below in {len(h.behind)}** (the sign of the mean alone; which "
            "differences the seeds can tell from 0 is in the opening summary). At the paper's threshold (all "
            f"p < 1e-6) significant: {', '.join(h.strict) or 'none'}; at p < 0.05: {', '.join(h.loose) or 'none'} "
            "(tests on seeds × CV repetitions as the paper's; repetitions of one encoder are not independent, so "
            "these overstate the evidence: the opening summary's intervals over seeds are the stricter guide).")


def evidence_lines(items: list[Evidence]) -> str:
    """One sentence per dataset where a single-stage preset has rows: SGCL − GCC with where its seed interval
    lies, then each stage alone − GCC grouped by the seeds it shares with GCC, beside SGCL − GCC on those same
    seeds (the other datasets' SGCL − GCC is in the seed-by-seed table)."""
    def group(e: Evidence, seeds: tuple[int, ...]) -> str:
        stages = ", ".join(f"{stage} {100 * d:+.2f}" for stage, (d, s) in e.stages.items() if s == seeds)
        same = f"; SGCL − GCC {100 * e.sgcl_on[seeds]:+.2f}" if seeds in e.sgcl_on else ""
        return f"on {'seed' if len(seeds) == 1 else 'seeds'} {' '.join(map(str, seeds))}{same}: {stages}"

    return "\n".join(
        f"- {label(e.dataset)}: SGCL − GCC = {100 * e.difference:+.2f} pp, 90 % "
        f"{interval_side(e.summary)} ({count(e.seeds, 'paired seed')}); each stage alone − GCC "
        + "; ".join(f"({group(e, seeds)})" for seeds in dict.fromkeys(s for _, s in e.stages.values()))
        for e in items if e.stages)


def classification_intro(rows: Rows, n_seeds: int) -> str:
    """The paragraph before the classification table; CV settings read from the rows."""
    cv = " / ".join(f"{r} repetitions of bootstrapped {f}-fold CV" for r, f in cv_settings(rows, CLASSIFICATION))
    return (
        "Rows are methods, columns dataset × training mode; cells are mean ± std over seeds of each encoder's "
        f"score (mean over {cv or 'its CV'}), in %. Marker against the `gcc` row of the same mode (`gcc ⊕ "
        "structural` too; another `… ⊕ structural` row: against `gcc ⊕ structural`): ▲/▼ = Wilcoxon, "
        "Mann–Whitney and t-test all p < 1e-6 (the paper's rule), † = all p < 0.05, the tests run, as in the "
        "paper, on every CV repetition of every seed, paired with GCC's by (seed, repetition) — repetitions share "
        "splits and bootstrap draws across methods. Repetitions of one encoder are not independent encoders, so "
        "the last column of the statistics table also gives the Wilcoxon p of the seed means: with n seeds it "
        f"cannot fall below 2/2^n (n = {n_seeds}: {min_wilcoxon_p(n_seeds):.3g}). ᶜ: a single seed (training-free "
        "rows, one-seed presets); its ± is the std over that encoder's CV repetitions.")


def sections(t: Tables) -> list[str]:
    """The classification table (frozen encoders, the tables' pre-trained rows, joined rows and ``random init``),
    the training-free floor and join verdicts, and SGCL against GCC (headline, seed by seed, the paper's tests,
    per-augmentation evidence)."""
    rows, modes = t.rows, t.modes
    n_seeds = max((len(rows.seeds("sgcl", m, d, task, metric)) for m in modes
                   for d, task, metric in rows.columns(CLASSIFICATION)), default=0)
    headlines = [headline_text(headline(rows, m, CLASSIFICATION + SIMILARITY, DATASET_LABELS)) for m in modes]
    return [
        "## Node and graph classification (frozen encoders)",
        classification_intro(rows, n_seeds) if n_seeds else "",
        grid_section(*score_grid(rows, modes, CLASSIFICATION, t.methods + t.untrained), t.folder / "classification.csv"),
        "### Does pre-training beat structure alone?",
        f"Best seed-mean of the presets in the table above with at least {FLOOR_MIN_SEEDS} seeds on the column "
        "(where none has that many, those with the most; ablation, pair presets, bracketed variants, joined rows "
        "and random init left out) against the best training-free row, per column. Both sides are the best of "
        "several rows picked on the very scores tested, so the p-values, computed as if each side were fixed in "
        "advance, favour whichever side picks from more rows (the pre-trained presets). The tests also take every "
        "CV repetition of every seed as an independent sample, though the repetitions of one encoder, and of the "
        "training-free row, share the same splits: the p-values overstate the evidence further, and the seed counts "
        "are the independent encoders behind each side:",
        floor_lines(floor_verdicts(rows, modes, CLASSIFICATION, t.presets)) or "_no training-free rows_",
        "### Does pre-training add anything on top of structure?",
        "`<method> ⊕ structural`: the encoder's embedding joined to the training-free structural vector (each block "
        "divided by its mean row norm), evaluated exactly as the encoder alone (same classifier and splits; for "
        "similarity search, the same HITS@k on the joined vectors); means over the encoder's seeds:",
        join_lines(join_verdicts(rows, modes, CLASSIFICATION + SIMILARITY, t.encoders))
        or "_no joined rows_",
        "### SGCL against GCC",
        "\n\n".join(h for h in headlines if h),
        *seed_difference_parts(t),
        statistics_section(statistics(rows, "sgcl", modes, CLASSIFICATION), "sgcl", t.folder / "statistics.csv"),
        "Per-augmentation evidence (E2E, seed-paired mean differences to GCC, pp; the similar and diverse presets "
        "run at the `sgcl` row's c), on the datasets where a single-stage preset shares a seed with `gcc` "
        "(`scripts/reproduce.sh` evaluates them on the heat-map's dataset only):",
        evidence_lines(evidence(rows, "e2e")) or "_no single-stage preset shares an E2E seed with `gcc` yet_",
    ]
