"""The results report, built only from stored result rows (:mod:`gcc_sgcl.experiments.rows`).

``python -m gcc_sgcl.experiments report --rows docs/results/rows.jsonl.gz --out docs/results.md`` writes the
Markdown report, one CSV per table next to the rows, and the PNG figures. Every number in it is computed from
the rows by :mod:`gcc_sgcl.experiments.analysis` and :mod:`gcc_sgcl.experiments.budget` and formatted by
:mod:`gcc_sgcl.experiments.render`; the prose around the tables comes from ``--intro`` (a Markdown file) and
from statements derived from the numbers (e.g. whether a pre-trained encoder beats the training-free floor).

The tables show one budget: the learning curve's last point when the rows hold a curve (the report says whether
:func:`gcc_sgcl.experiments.budget.choose_budget`'s rule holds there and where it first does), else the budget of
most rows; encoders pre-trained for 0 steps appear as the ``random init`` row.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from gcc_sgcl.config import STAGES, AugmentConfig
from gcc_sgcl.engine.generate import GCC_COPIES, INFERENCE_COPIES
from gcc_sgcl.method import MethodSpec
from gcc_sgcl.experiments import analysis as an
from gcc_sgcl.experiments import render as rd
from gcc_sgcl.experiments.budget import (
    BudgetChoice, Curve, changes_at, choose_budget, curve_family, fidelity, learning_curves, published_finetuned,
)
from gcc_sgcl.experiments.rows import ResultRow, RowStore
from gcc_sgcl.experiments.stability import read as read_stability
from gcc_sgcl.experiments.stats import min_wilcoxon_p
from gcc_sgcl.experiments.tables import TABLES_FILE, Budget, TableSpec, table_budget, table_spec
from gcc_sgcl.fileio import replace_marked_blocks


def _relative(path: Path, out: Path) -> Path:
    return path.relative_to(out.parent) if path.is_relative_to(out.parent) else path


def budget_sections(study: tuple, table: list[ResultRow], out: Path, folder: Path, default_c: float) -> list[str]:
    """The sections of :func:`budget_study`'s ``study`` (learning curve, the rule's verdict, fidelity of
    ``table``, the rows at the tables' budget); empty without a curve. Its ``sgcl`` is the plain preset (``default_c``)."""
    family, curves, choice, _ = study
    if choice is None or family is None:
        return []
    png = folder / "learning_curve.png"
    parts = [
        "## Budget study: score against pre-training steps (E2E, frozen encoders)",
        f"Batch {family[0]}, corpus `{family[1]}`; SGCL's curve is at c = {default_c:g}, the default when it ran (the "
        "c grid ran afterwards, at the table budget, and chose the tables' c). Each point is the mean over the seeds run at every step count "
        "of its curve (0 steps: the untrained encoder); the figure's bars are the std over those seeds, or with one "
        "seed the std over its CV repetitions (the table's cells' ± elsewhere in this report).",
        f"![learning curve]({_relative(png, out)})",
        rd.curves_section(curves, png, folder / "learning_curve.csv"),
        rd.budget_text(choice, {s: changes_at(curves, s) for s in dict.fromkeys((choice.steps, choice.last))}),
    ]
    rows = an.Rows(table)
    checked = fidelity(rows)
    if any(f.measured is not None for f in checked):
        parts += ["### Fidelity: GCC E2E at the table budget against GCC's published E2E numbers",
                  rd.fidelity_section(checked, folder / "fidelity.csv", family[1],
                                      an.cv_settings(rows, an.CLASSIFICATION))]
    return parts


def classification_intro(rows: an.Rows, n_seeds: int) -> str:
    """The paragraph before the classification table; CV settings read from the rows."""
    cv = " / ".join(f"{r} repetitions of bootstrapped {f}-fold CV" for r, f in an.cv_settings(rows, an.CLASSIFICATION))
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


def c_sections(stored: Sequence[ResultRow], spec: TableSpec, choice: an.CChoice | None, folder: Path,
               missing: Sequence[float] = ()) -> list[str]:
    """The grid over SGCL's filter threshold ``c`` (the ``stored`` rows of the table the choice used: its seed, its columns,
    every point named by its c) and which ``c`` the tables use (the default while the grid points ``missing`` lack
    rows)."""
    if choice is None:
        return []
    used = an.Rows([r for r in spec.at_sgcl_c(None).select(stored)
                    if r.seed == choice.seed and f"{r.dataset} {r.metric}" in choice.columns])
    methods = [an.c_variant(c) for c in choice.scores]
    return ["## SGCL's filter threshold c (grid, E2E)",
            rd.grid_section(*an.score_grid(used, ["e2e"], an.CLASSIFICATION, methods), folder / "c_grid.csv"),
            rd.c_choice_text(choice, missing)]


def seed_difference_parts(rows: an.Rows, modes: Sequence[str], out: Path, folder: Path,
                          tasks: Sequence[str] = an.CLASSIFICATION, stem: str = "sgcl_minus_gcc") -> list[str]:
    """SGCL − GCC seed by seed on the columns of ``tasks`` (frozen classification, or fine-tuned): the dot plot
    ``<stem>.png`` and its table (``<stem>.csv``)."""
    items = an.seed_differences(rows, an.SGCL, modes, tasks)
    png = folder / f"{stem}.png"
    text = rd.seed_differences_section(items, an.SGCL, png, folder / f"{stem}.csv")
    if not items:
        return [text]
    if set(tasks) <= set(an.SIMILARITY):
        score = "one HITS@k per seed"
    else:
        over = "folds" if set(tasks) <= set(an.FINETUNED) else "CV repetitions"
        score = f"each seed's score is its mean over the {over}"
    return [f"Seed by seed (`sgcl` and `gcc` encoders of the same seed; {score}), the mean difference with its 90 % "
            "Student-t interval over seeds:",
            f"![SGCL − GCC per seed]({_relative(png, out)})", text]


def comparison_sections(rows: an.Rows, modes: Sequence[str], methods: list[str], out: Path,
                        folder: Path) -> list[str]:
    """Classification table, floor verdicts, SGCL against GCC, similarity search and fine-tuning; ``methods``
    are the pre-trained rows of the tables, joined rows (``… ⊕ structural``) included."""
    n_seeds = max((len(rows.seeds("sgcl", m, d, t, metric)) for m in modes
                   for d, t, metric in rows.columns(an.CLASSIFICATION)), default=0)
    untrained = [an.RANDOM_INIT] if an.RANDOM_INIT in rows.methods(classical=False) else []
    listed = methods + untrained
    encoders = [m for m in methods if not MethodSpec.parse(m).joined]
    presets = [m for m in encoders if not MethodSpec.parse(m).settings]  # variants (default c, k = 64) are single-seed side rows
    headlines = [rd.headline_text(an.headline(rows, m, an.CLASSIFICATION + an.SIMILARITY, rd.DATASET_LABELS))
                 for m in modes]
    return [
        "## Node and graph classification (frozen encoders)",
        classification_intro(rows, n_seeds) if n_seeds else "",
        rd.grid_section(*an.score_grid(rows, modes, an.CLASSIFICATION, listed), folder / "classification.csv"),
        "### Does pre-training beat structure alone?",
        f"Best seed-mean of the presets in the table above with at least {an.FLOOR_MIN_SEEDS} seeds on the column "
        "(where none has that many, those with the most; ablation, pair presets, bracketed variants, joined rows "
        "and random init left out) against the best training-free row, per column. Both sides are the best of "
        "several rows picked on the very scores tested, so the p-values, computed as if each side were fixed in "
        "advance, favour whichever side picks from more rows (the pre-trained presets). The tests also take every "
        "CV repetition of every seed as an independent sample, though the repetitions of one encoder, and of the "
        "training-free row, share the same splits: the p-values overstate the evidence further, and the seed counts "
        "are the independent encoders behind each side:",
        rd.floor_lines(an.floor_verdicts(rows, modes, an.CLASSIFICATION, presets)) or "_no training-free rows_",
        "### Does pre-training add anything on top of structure?",
        "`<method> ⊕ structural`: the encoder's embedding joined to the training-free structural vector (each block "
        "divided by its mean row norm), evaluated exactly as the encoder alone (same classifier and splits; for "
        "similarity search, the same HITS@k on the joined vectors); means over the encoder's seeds:",
        rd.join_lines(an.join_verdicts(rows, modes, an.CLASSIFICATION + an.SIMILARITY, encoders))
        or "_no joined rows_",
        "### SGCL against GCC",
        "\n\n".join(h for h in headlines if h),
        *seed_difference_parts(rows, modes, out, folder),
        rd.statistics_section(an.statistics(rows, "sgcl", modes, an.CLASSIFICATION), "sgcl",
                              folder / "statistics.csv"),
        "Per-augmentation evidence (E2E, seed-paired mean differences to GCC, pp; the similar and diverse presets "
        "run at the `sgcl` row's c), on the datasets where a single-stage preset shares a seed with `gcc` "
        "(`scripts/reproduce.sh` evaluates them on the heat-map's dataset only):",
        rd.evidence_lines(an.evidence(rows, "e2e")) or "_no single-stage preset shares an E2E seed with `gcc` yet_",
        "## Top-k similarity search (HITS@20 / HITS@40)",
        "Cells are mean ± std over seeds (markers as in the classification table, the tests on seeds alone: a "
        "similarity row has one score per seed); ᶜ: a single seed, whose ± is the bootstrap s.e. of HITS@k over the "
        "dataset's query pairs.",
        rd.grid_section(*an.score_grid(rows, modes, an.SIMILARITY, listed), folder / "similarity.csv",
                        with_metric=True),
        rd.floor_lines(an.floor_verdicts(rows, modes, an.SIMILARITY, presets)),
        *seed_difference_parts(rows, modes, out, folder, an.SIMILARITY, "sgcl_minus_gcc_similarity"),
        "## Fine-tuned encoders",
        *([finetune_intro(rows), rd.grid_section(*an.score_grid(rows, modes, an.FINETUNED, encoders + untrained),
                                                 folder / "finetuned.csv"),
           "### Does pre-training help fine-tuning?",
           f"Best seed-mean of the presets above with at least {an.FLOOR_MIN_SEEDS} seeds on the column against "
           "`random init` fine-tuned with the same recipe (tests on every fold of every seed, taken as independent "
           "samples though both sides share the folds: the p-values overstate the evidence, and the seed counts are "
           "the independent encoders):",
           rd.floor_lines(an.floor_verdicts(rows, modes, an.FINETUNED, presets, floor=an.RANDOM_INIT),
                          "the untrained encoder") or "_no fine-tuned `random init` rows_",
           *seed_difference_parts(rows, modes, out, folder, an.FINETUNED, "sgcl_minus_gcc_finetuned"),
           rd.published_section(published_finetuned(rows), folder / "finetuned_published.csv")]
          if rows.datasets(an.FINETUNED) else ["_no fine-tuning rows_"]),
    ]


def rank_sections(rows: an.Rows, modes: Sequence[str], methods: list[str], out: Path, folder: Path) -> list[str]:
    """The paper's rank test (its Fig. 3) on every frozen column: ``rank_test.png`` and its table; ``methods`` are
    the tables' pre-trained rows (only the presets, unjoined, enter)."""
    entrants = [m for m in methods if not MethodSpec.parse(m).joined and not MethodSpec.parse(m).settings]
    test = an.rank_test(rows, modes, an.CLASSIFICATION + an.SIMILARITY, entrants)
    png = folder / "rank_test.png"
    text = rd.rank_section(test, png, folder / "rank_test.csv")
    return ["## Rank test (frozen encoders, every column)",
            "As the paper's Fig. 3: on each frozen column (classification and similarity search, each HITS@k its own "
            "column) the entrants are ranked by their mean over seeds, 1 = best, tied means sharing the mean of "
            "their ranks; an entrant's mean rank averages its ranks over the datasets it is ranked on, each dataset "
            "once (a similarity dataset's two HITS@k ranks averaged first). Entrants: the presets of the tables "
            f"(`gcc`, `sgcl` and the contrastive baselines) in each training mode, on the columns where they have "
            f"at least {an.RANK_MIN_SEEDS} seeds, and every training-free row (one seed: deterministic, or seed 0); "
            "bracketed variants (other c, k = 64), joined `… ⊕ structural` rows, the ablation and pair presets and "
            "`random init` (a control, not a method) do not enter. Each cell gives the rank and, in brackets, the "
            "seeds behind the mean it ranks. Mean ranks compare only between entrants ranked on every dataset; the "
            "task-specific training-free rows (node-level `prone` and `graphwave`, graph-level rows, similarity "
            "rows) are ranked on their own columns only, their mean rank in brackets. A rank says nothing about "
            "the size of a difference or its noise: the tables and their tests above do.",
            *([f"![rank test]({_relative(png, out)})"] if test.entrants else []), text]


def finetune_intro(rows: an.Rows) -> str:
    """How the table's fine-tuned rows were fine-tuned (their stored protocols)."""
    tuned = [r for r in rows.rows if r.task in an.FINETUNED]
    protocols = sorted({r.protocol for r in tuned})
    scratch = any(r.method == an.RANDOM_INIT for r in tuned)
    scratch_text = ("`random init` fine-tunes the untrained encoder with the same recipe: supervised training from "
                    "scratch, the control that shows what pre-training adds. " if scratch else "")
    return ("Each fold fine-tunes a copy of the pre-trained encoder with a fresh linear head on the labels of the "
            "training folds (the encoder is not frozen); cells are mean ± std over seeds of each encoder's mean over "
            "the folds (ᶜ: one seed, ± over its folds). " + scratch_text + "Protocol: "
            + "; ".join(f"`{p}`" for p in protocols) + ".")


def ablation_sections(rows: an.Rows, heatmap_dataset: str, out: Path, folder: Path) -> list[str]:
    """The ablation table (markers against ``gcc``), ``sgcl`` against each random analogue
    (:func:`swap_statistics`), the pairwise heat-map and the λ2 quintiles (E2E)."""
    trained = rows.methods(classical=False)
    ablation = [an.BASELINE] + [m for m in an.ABLATION_METHODS + tuple(f"sgcl-{s}" for s in an.HEATMAP_STAGES + an.CONTROLS)
                                if m in trained]
    png = folder / f"heatmap_{heatmap_dataset}.png"
    heat = an.heatmap_gains(rows, heatmap_dataset, "e2e")
    title = f"% gain over GCC, {rd.label(heatmap_dataset)} (E2E)"
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
        rd.grid_section(*an.score_grid(rows, ["e2e"], an.CLASSIFICATION, ablation), folder / "ablation.csv"),
        *swap_statistics(rows, trained, folder),
        f"## Pairwise augmentations on {rd.label(heatmap_dataset)} (E2E, % gain over GCC)",
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
        f"![heat-map]({_relative(png, out)})",
        rd.heatmap_section(heat, title, png, folder / f"heatmap_{heatmap_dataset}.csv") if heat
        else f"_no {an.BASELINE} rows for {heatmap_dataset}_",
        "## SGCL − GCC by λ2 quintile of the test graphs (E2E)",
        "Test examples (graphs; for node datasets the node's RWR view) split into rank quintiles of the "
        "second-smallest normalised-Laplacian eigenvalue; cell = SGCL − GCC out-of-fold accuracy in pp, GCC's "
        "accuracy in brackets, the quintile's λ2 range in square brackets, averaged over paired seeds.",
        rd.quintiles_section(an.lambda2_quintiles(rows, "sgcl", "e2e"), "sgcl", folder / "lambda2_quintiles.csv"),
    ]


def leave_one_out_sections(rows: an.Rows, out: Path, folder: Path) -> list[str]:
    """The leave-one-out ablation (stage ``loo``): SGCL at the tables' c without each stage in turn, seed-paired
    against ``sgcl`` and ``gcc`` on every frozen E2E column; the heat-map of what each stage adds
    (``leave_one_out.png``) above the table once there are rows."""
    items = an.leave_one_out(rows, STAGES)
    png = folder / "leave_one_out.png"
    picture = []
    if items:
        rd.plot_leave_one_out(items, png)
        picture = [f"![what each stage adds]({_relative(png, out)})"]
    counts = [len(d.seeds) for i in items for d in (i.adds, i.against_gcc) if d]
    fewest, most = min(counts, default=0), max(counts, default=0)
    so_far = ("none yet" if not most else f"{rd.count(most, 'seed')} each" if fewest == most
              else f"{fewest} to {most} seeds so far")
    return ["## Leave one out: what each stage of SGCL costs or adds (E2E, frozen)",
            "`sgcl-no-<stage>` is the tables' `sgcl` (same c) with one stage switched off (filter: the similar "
            "filter; mask and reorder each alone), pre-trained at the table budget by `bash scripts/reproduce.sh loo` "
            f"({so_far}). Per column: what the stage adds, `sgcl` − `sgcl-no-<stage>` over the seeds "
            "both have (positive: SGCL is better with the stage), and where the variant stands against `gcc`; mean in "
            "pp, its 90 % Student-t interval over paired seeds and the seed count. Read on the tables' own columns "
            "(the same columns the c grid and the stages were judged on), so it explains the tables rather than "
            "predicting an unseen dataset; with 3 seeds only a large, consistent change excludes 0.",
            *picture, rd.leave_one_out_section(items, folder / "leave_one_out.csv"),
            *([rd.leave_one_out_reading(items, an.seed_differences(rows, an.SGCL, ("e2e",),
                                                                 an.CLASSIFICATION + an.SIMILARITY))] if items
              else [])]


def swap_statistics(rows: an.Rows, trained: Sequence[str], folder: Path) -> list[str]:
    """``sgcl`` against each swapped-in random analogue among the ``trained`` methods (the ablation's own
    question), paired by seed; the table's markers test each row against ``gcc`` instead."""
    out = []
    for swapped in an.SWAPPED:
        if swapped not in trained:
            continue
        part = "_".join(f"{k}_{v}" for k, v in MethodSpec.parse(swapped).settings)
        stats = an.statistics(rows, an.SGCL, ["e2e"], an.CLASSIFICATION, against=swapped)
        n = max((s.seeds for s in stats), default=0)
        floor = (f"; with n paired seeds the Wilcoxon test of the seed means cannot fall below 2/2^n "
                 f"(n = {n}: {min_wilcoxon_p(n):.3g})" if n else "")
        out += [f"### `sgcl` against `{swapped}`: is the spectral version better than its random analogue?",
                f"Difference = `sgcl` − `{swapped}` (positive: the spectral version is ahead) over the seeds both "
                f"have; tests as in the SGCL-against-GCC statistics (seeds × CV repetitions{floor}).",
                rd.statistics_section(stats, an.SGCL, folder / f"ablation_statistics_{part}.csv", against=swapped)]
    return out


def build_report(rows_path: str | Path, out: str | Path, intro: str | Path | None = None,
                 heatmap_dataset: str = "rdt-b", modes: Sequence[str] = ("moco", "e2e"),
                 c_grid: Sequence[float] | None = None, protocol: str | Path | None = None,
                 status: str | Path | None = None, readme: str | Path | None = None) -> str:
    """Write the report to ``out`` (CSV tables and figures beside ``rows_path``); returns its text: the hand-written
    ``intro`` (Markdown file), the summary and the main tables, the hand-written ``protocol``, the budget study, the c
    grid, the ablations and the runtime, then the hand-written ``status``, the sweep's progress and the provenance;
    with ``readme``, its headline block is rewritten from the same table rows and its stability sentence from the
    stability measurements (:func:`update_readme`).

    With ``c_grid`` (the c values besides the default) the tables' ``sgcl`` row stays at the default c until every
    grid point has its seed-0 rows (as the sweep's ``sgcl-method``)."""
    stored = RowStore(rows_path).load()
    out, folder = Path(out), Path(rows_path).parent
    study, spec, table, choice, missing, rows = tables_of(stored, c_grid)
    default_c = spec.default_c if spec else AugmentConfig().c
    present_modes = [m for m in modes if any(r.mode == m for r in rows.rows)]
    def written(path: str | Path | None) -> str:
        return Path(path).read_text().rstrip() if path else ""

    parts = [written(intro) or "# Results",
             "## Summary: SGCL against GCC at the table budget",
             "SGCL − GCC seed by seed on every column (frozen: classification and similarity search; fine-tuned "
             "apart), as in the seed-by-seed tables of the classification, similarity and fine-tuning sections "
             "below. Each interval is the 90 % Student-t interval of the mean difference "
             "over paired seeds (the encoders are the independent samples; CV repetitions of one encoder are not), "
             "so with few seeds only a large, consistent difference excludes 0; the paper's tests, on seeds × CV "
             "repetitions, are in \"SGCL against GCC\".",
             rd.summary_lines(an.seed_differences(rows, an.SGCL, present_modes, an.CLASSIFICATION + an.SIMILARITY),
                              an.seed_differences(rows, an.SGCL, present_modes, an.FINETUNED)),
             *comparison_sections(rows, present_modes, table_methods(rows, default_c), out, folder),
             *rank_sections(rows, present_modes, table_methods(rows, default_c), out, folder),
             written(protocol),
             *budget_sections(study, table, out, folder, default_c),
             *c_sections(stored, spec, choice, folder, missing),
             *ablation_sections(rows, heatmap_dataset, out, folder),
             *leave_one_out_sections(rows, out, folder),
             "## Runtime (seconds per mini-batch, one run)",
             "Measured by `bash scripts/reproduce.sh runtime` at the SGCL paper's runtime batch (16), on one thread, "
             "the methods alternating batch by batch so that the machine's load falls on all of them alike (the "
             "ratio to `gcc` is what the run compares). Seconds per step at the tables' batch 256 with two data "
             "workers, for `gcc` and `sgcl`, are in `docs/performance.md`.",
             rd.runtime_section(an.runtimes(rows), folder / "runtime.csv"),
             *views_sections(Path(rows_path), out, folder, stored),
             written(status),
             "## Sweep progress at the table budget",
             "Pre-trained encoders in the tables below: the seeds with rows, and the columns that have a row of every "
             "one of those seeds.",
             rd.progress_section(an.progress(rows), folder / "progress.csv"),
             "## Provenance", rd.provenance_lines(an.provenance(stored)),
             table_spec_line(spec),
             "Evaluation protocols recorded in the rows:",
             rd.protocol_lines(an.protocols(stored, an.CLASSIFICATION + an.FINETUNED))]
    text = "\n\n".join(p for p in parts if p) + "\n"
    if spec is not None:
        spec.write(folder / TABLES_FILE)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    if readme:
        update_readme(readme, headline_of(rows, an.views_study(RowStore(views_store(Path(rows_path))).load())),
                      stability_block(folder))
    return text


def table_spec_line(spec: TableSpec | None) -> str:
    """What the tables' spec declares and where the report writes it (``tables.json`` beside the rows)."""
    if spec is None:
        return ""
    batches = ", ".join(f"{mode} batch {b}" for mode, b in spec.batches.items())
    return (f"The tables' rows (`{TABLES_FILE}` beside the rows, written by this report): encoders pre-trained for "
            f"{spec.steps} steps on `{spec.corpus}` ({batches}), one evaluation protocol per kind (a row of the "
            f"tables under another is an error); the `sgcl` row is `{spec.sgcl}`, `random init` is "
            f"`{spec.random_init}` at 0 steps.")


def views_store(rows_path: Path) -> Path:
    """The views study's row store beside the tables' (``views.jsonl.gz`` beside ``rows.jsonl.gz``)."""
    return rows_path.with_name("views.jsonl" + "".join(rows_path.suffixes[1:]))


def views_sections(rows_path: Path, out: Path, folder: Path, stored: Sequence[ResultRow] = ()) -> list[str]:
    """The views study (stage ``views``, its own store): score and SGCL − GCC against the inference views averaged
    per row, on the node-level columns (the tables stay at GCC's 2 views), and how its 2-view rows compare with the
    ``stored`` rows of the same evaluations."""
    views = RowStore(views_store(rows_path)).load()
    points = an.views_study(views)
    rescored = an.rescored(views, stored)
    png = folder / "views.png"
    text = rd.views_section(points, png, folder / "views.csv")
    measured = rd.and_joined(sorted({p.copies for p in points})) or "several"
    return ["## Inference views: how many to average per row",
            "Each row of an embedding is the mean over `--copies` random views of its node (GCC: 2, which every "
            "table above uses). Rows of `bash scripts/reproduce.sh views` (`docs/results/views.jsonl.gz`): the "
            f"same encoders re-scored at {measured} views on the node-level columns, seed-paired. The "
            "graph columns are left as they are.",
            *([f"![score against inference views]({_relative(png, out)})"] if points else []), text,
            *([rd.views_choice_lines(an.choose_views(views), INFERENCE_COPIES)] if points else []),
            rd.rescored_lines(rescored),
            *(["Such differences come from the machine the rows were scored or trained on (its BLAS kernel and MKL "
               "code path; the thread count for training), not from the code: measured in `docs/reproducibility.md`; "
               "rows record their machine (`host`) since 2026-12-02."] if rescored else []),
            "### How much a row moves",
            "The distance between a node's rows under two view seeds, and under two numberings of the same graph "
            "(its nodes in a random order, rows mapped back), relative to the rows' norm, with the shipped seed-0 "
            "encoders: `python -m gcc_sgcl.experiments.stability --encoders saved/pretrained/gcc_e2e_snap5_6000x256_s0 "
            "saved/pretrained/sgcl-c=0.4_e2e_snap5_6000x256_s0 --out docs/results/stability.csv`. Its times are one "
            "wall-clock run of embedding every node once, beside whatever else the machine ran: compare them with each "
            "other, not across machines.",
            rd.stability_table(read_stability(folder / "stability.csv"))]


def tables_of(stored: Sequence[ResultRow], c_grid: Sequence[float] | None = None) -> tuple:
    """What the tables are read from: the budget study, the :class:`~gcc_sgcl.experiments.tables.TableSpec` (its
    ``sgcl`` at the c grid's choice once the grid is complete), the rows at its budget (``sgcl`` the plain preset), the c
    grid's choice, the grid points still missing and the table's view of the rows."""
    study = budget_study(stored)
    spec = table_spec(stored, study[3], default_filter_c(stored, study[3]))
    table = spec.select(stored) if spec else list(stored)
    choice = an.choose_c(an.Rows(table), spec.default_c) if spec else None
    missing = an.missing_c(an.Rows(table), c_grid, spec.default_c) if c_grid and choice else []
    if spec:
        spec = spec.at_sgcl_c(choice.best_c if choice and not missing else spec.default_c)
    rows = an.Rows(spec.select(stored) if spec else stored)
    return study, spec, table, choice, missing, rows


HEADLINE_START, HEADLINE_END = "<!-- headline: generated by scripts/reproduce.sh report -->", "<!-- headline end -->"
STABILITY_START, STABILITY_END = "<!-- stability: generated by scripts/reproduce.sh report -->", "<!-- stability end -->"


def headline(rows_path: str | Path, c_grid: Sequence[float] | None = None) -> str:
    """The README's result block of the rows stored at ``rows_path`` and the views study beside them
    (:func:`headline_of`)."""
    views = an.views_study(RowStore(views_store(Path(rows_path))).load())
    return headline_of(tables_of(RowStore(rows_path).load(), c_grid)[-1], views)


def headline_of(rows: an.Rows, views: Sequence[an.ViewsPoint] = ()) -> str:
    """The README's result block: SGCL − GCC per frozen E2E column over paired seeds of the table ``rows``
    (:func:`~gcc_sgcl.experiments.render.headline_table`), with the sentence that reads it and, given the views
    study's ``views``, what changes at the embeddings' default view count
    (:func:`~gcc_sgcl.experiments.render.views_headline`)."""
    items = an.seed_differences(rows, an.SGCL, ["e2e"], an.CLASSIFICATION + an.SIMILARITY)
    moco = an.seed_differences(rows, an.SGCL, ["moco"], an.CLASSIFICATION + an.SIMILARITY)
    reading = verdict(items, "Over {seeds} paired seeds")
    if moco:
        reading += " " + verdict(moco, "With MoCo, over {seeds} paired seeds")
    at_default = rd.views_headline(list(views), INFERENCE_COPIES, GCC_COPIES)
    return "\n\n".join([HEADLINE_START, rd.headline_table(items), reading, *([at_default] if at_default else []),
                         HEADLINE_END])


def verdict(items: Sequence[an.SeedDifferences], opening: str) -> str:
    """One sentence: the columns where the 90 % interval over paired seeds puts SGCL ahead of GCC, and behind;
    ``opening`` names the comparison (``{seeds}``: the largest number of paired seeds).

    >>> from gcc_sgcl.experiments.analysis import Column, SeedDifferences
    >>> from gcc_sgcl.experiments.stats import summarize
    >>> up = SeedDifferences(Column("imdb-multi", "t", "accuracy", "e2e"), (0, 1, 2), (0.01, 0.02, 0.01),
    ...                      summarize((0.01, 0.02, 0.01), interval="t"))
    >>> verdict([up], "Over {seeds} paired seeds")
    'Over 3 paired seeds, SGCL beats GCC on IMDB-M and loses on no column; elsewhere the seeds show no difference.'
    """
    sides = [rd.READINGS[rd.interval_side(d.summary)] for d in items]
    ahead = [rd.label(d.column.dataset) for d, s in zip(items, sides) if s == "SGCL ahead"]
    behind = [rd.label(d.column.dataset) for d, s in zip(items, sides) if s == "GCC ahead"]
    seeds = max((len(d.seeds) for d in items), default=0)
    return (f"{opening.format(seeds=seeds)}, SGCL beats GCC on {', '.join(dict.fromkeys(ahead)) or 'no column'} and "
            f"loses on {', '.join(dict.fromkeys(behind)) or 'no column'}; elsewhere the seeds show no difference.")


def stability_block(folder: Path) -> str:
    """The README's sentence on how far a row moves (:func:`~gcc_sgcl.experiments.render.stability_sentence` of
    ``stability.csv`` in ``folder``), between its markers."""
    return f"{STABILITY_START}{rd.stability_sentence(read_stability(folder / 'stability.csv'))}{STABILITY_END}"


def update_readme(readme: str | Path, headline_block: str, stability: str) -> None:
    """Rewrite the README's generated blocks (:data:`HEADLINE_START` … :data:`HEADLINE_END`, :data:`STABILITY_START`
    … :data:`STABILITY_END`) by the given ones, through a temporary file; a README without a block's markers is an
    error naming it."""
    replace_marked_blocks(readme, {(HEADLINE_START, HEADLINE_END): headline_block,
                                   (STABILITY_START, STABILITY_END): stability})


def budget_study(rows: Sequence[ResultRow]) -> tuple[tuple | None, list[Curve], BudgetChoice | None, Budget | None]:
    """The learning curves' family and curves, the budget rule's verdict, and the tables' budget: the curve's
    last step count (the sweep trains the table encoders there), else the one budget of the trained rows."""
    family = curve_family(rows)
    curves = learning_curves(rows, family=family)
    choice = choose_budget(curves)
    if choice is None or family is None:
        return family, curves, choice, table_budget(rows)
    return family, curves, choice, (choice.last, *family)


def chosen_sgcl(rows_path: str | Path, grid: Sequence[float] | None = None) -> str:
    """The method name whose rows are the tables' ``sgcl`` row: ``sgcl`` or the chosen grid point
    ``sgcl[c=…]`` (:func:`gcc_sgcl.experiments.analysis.choose_c`); what the sweep pre-trains for every seed.
    With ``grid`` (the c values besides the default), raises ``ValueError`` naming what is missing unless every
    grid point has its seed-0 row on every classification column ``gcc`` has at the table budget."""
    _, spec, table, choice, _, _ = tables_of(RowStore(rows_path).load())
    if spec is None:
        return an.SGCL
    if grid is not None:
        missing = an.missing_grid_points(an.Rows(table), grid, spec.default_c)
        if missing:
            raise ValueError(f"{rows_path}: the c grid is incomplete at the table budget (run stage cgrid): "
                             f"{len(missing)} rows missing, e.g. {'; '.join(missing[:4])}")
    return str(spec.sgcl)


def default_filter_c(rows: Sequence[ResultRow], budget: Budget | None = None) -> float:
    """The filter threshold of the plain ``sgcl`` rows (at ``budget``'s steps and corpus when given; from their
    stored configuration; the current default without one); rows that disagree are an error."""
    found = {float(c) for r in rows if r.method == an.SGCL and (budget is None or (r.steps, r.corpus) == (
        budget[0], budget[2])) and (c := r.config.get("augment", {}).get("c")) is not None}
    if len(found) > 1:
        raise ValueError(f"the plain sgcl rows were trained with different c: {sorted(found)}")
    return found.pop() if found else AugmentConfig().c


def table_methods(rows: an.Rows, default_c: float) -> list[str]:
    """The pre-trained rows of the main tables, in order: ``gcc``, ``sgcl``, the default-c row, the other
    presets and variants (single stages, pairs, controls and the other c grid points left out), then the joined
    ``… ⊕ structural`` rows."""
    pretrained = [m for m in rows.methods(classical=False) if m != an.RANDOM_INIT]
    encoder = {m: str(MethodSpec.parse(m).encoder) for m in pretrained}
    kept = [m for m in pretrained if not m.startswith("sgcl-") and not an.is_swapped(m)
            and (an.c_of(encoder[m]) is None or encoder[m] == an.c_variant(default_c))]
    first = [m for m in (an.BASELINE, an.SGCL, an.c_variant(default_c)) if m in kept]
    rest = [m for m in kept if m not in first]
    return (first + [m for m in rest if m == encoder[m]] + [m for m in rest if m != encoder[m]]) or pretrained
