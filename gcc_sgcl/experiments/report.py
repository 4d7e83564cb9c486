"""The results report, built only from stored result rows (:mod:`gcc_sgcl.experiments.runner`).

``python -m gcc_sgcl.experiments report --rows docs/results/rows.jsonl --out docs/results.md`` writes the
Markdown report, one CSV per table next to the rows, and the heat-map PNG. Every number in it is computed here
from the rows; the prose around the tables comes from ``--intro`` (a Markdown file) and from statements the
code derives from the numbers (e.g. whether a pre-trained encoder beats the training-free floor).

Per encoder, a classification score is the mean over the repeated, bootstrapped CV of the runner; across
seeds a cell shows mean ± std and the bootstrap 5–95 % interval of the mean; comparisons with the ``gcc`` row
of the same mode are paired by seed (:mod:`gcc_sgcl.experiments.stats`).
"""
from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from gcc_sgcl.experiments.stats import compare, marker, min_wilcoxon_p, summarize

BASELINE = "gcc"
PAPER_ALPHA = 1e-6
LOOSE_ALPHA = 0.05
CLASSIFICATION = ("node_classification", "graph_classification")
FINETUNED = ("node_classification_finetuned", "graph_classification_finetuned")
ABLATION_METHODS = ("sgcl", "sgcl-random-crop", "sgcl-random-permute")
STAGES = ("crop", "reorder", "mask", "align", "similar", "diverse")
DATASET_LABELS = {
    "usa_airport": "US-Airport", "h-index": "H-index", "imdb-binary": "IMDB-B", "imdb-multi": "IMDB-M",
    "collab": "COLLAB", "rdt-b": "RDT-B", "rdt-5k": "RDT-M", "kdd_icdm": "KDD-ICDM", "sigir_cikm": "SIGIR-CIKM",
    "sigmod_icde": "SIGMOD-ICDE",
}


class Rows:
    """Index over result rows: per (method, mode, dataset, task, metric) the score of each seed."""

    def __init__(self, rows: Iterable[dict[str, Any]]) -> None:
        self.rows = [r for r in rows if r.get("task") != "runtime"]
        self.runtime = [r for r in rows if r.get("task") == "runtime"]
        self.by_key: dict[tuple, dict[int, dict[str, Any]]] = defaultdict(dict)
        for r in self.rows:
            self.by_key[(r["method"], r["mode"], r["dataset"], r["task"], r["metric"])][int(r["seed"])] = r

    def seeds(self, method: str, mode: str, dataset: str, task: str, metric: str) -> dict[int, float]:
        """Score of each seed (the row's mean over its CV repetitions)."""
        return {s: float(r["mean"]) for s, r in self.by_key.get((method, mode, dataset, task, metric), {}).items()}

    def datasets(self, tasks: Sequence[str]) -> list[str]:
        """Datasets that have rows of any of ``tasks``, in first-seen order."""
        return list(dict.fromkeys(r["dataset"] for r in self.rows if r["task"] in tasks))

    def metric_of(self, dataset: str, task: str) -> str | None:
        """The metric recorded for (dataset, task)."""
        return next((r["metric"] for r in self.rows if r["dataset"] == dataset and r["task"] == task), None)

    def task_of(self, dataset: str, tasks: Sequence[str]) -> str | None:
        """Which of ``tasks`` ``dataset`` was evaluated with."""
        return next((r["task"] for r in self.rows if r["dataset"] == dataset and r["task"] in tasks), None)

    def methods(self, classical: bool | None = None) -> list[str]:
        """Methods present, optionally only the training-free (mode ``none``) or only the pre-trained ones."""
        out: dict[str, None] = {}
        for r in self.rows:
            if classical is None or (r["mode"] == "none") == classical:
                out.setdefault(r["method"], None)
        return list(out)


def label(dataset: str) -> str:
    """Display name of a dataset."""
    return DATASET_LABELS.get(dataset, dataset)


def paired(a: dict[int, float], b: dict[int, float]) -> tuple[list[float], list[float]]:
    """Scores of the seeds present in both, in seed order."""
    common = sorted(set(a) & set(b))
    return [a[s] for s in common], [b[s] for s in common]


def pooled(rows: Rows, method: str, mode: str, dataset: str, task: str, metric: str) -> tuple[list, list]:
    """The paper's samples: every CV repetition of every seed, paired with ``gcc``'s by (seed, repetition)
    (all encoders are scored on the same splits and bootstrap draws); seed means where no repetitions are
    stored (similarity search)."""
    mine = rows.by_key.get((method, mode, dataset, task, metric), {})
    base = rows.by_key.get((BASELINE, mode, dataset, task, metric), {})
    x, y = [], []
    for s in sorted(set(mine) & set(base)):
        a, b = mine[s].get("scores") or [mine[s]["mean"]], base[s].get("scores") or [base[s]["mean"]]
        if len(a) == len(b):
            x += a
            y += b
    return x, y


def cell(rows: Rows, method: str, mode: str, dataset: str, task: str, metric: str, versus_gcc: bool) -> str:
    """``mean ± std`` over seeds in %, with a significance marker against ``gcc`` (pooled samples)."""
    scores = rows.seeds(method, mode, dataset, task, metric)
    if not scores:
        return "–"
    s = summarize(list(scores.values()))
    if len(scores) == 1:  # one seed: the spread is that of its CV repetitions, marked ᶜ
        row = next(iter(rows.by_key[(method, mode, dataset, task, metric)].values()))
        return f"{100 * s.mean:.2f} ± {100 * float(row['std']):.2f}ᶜ"
    text = f"{100 * s.mean:.2f} ± {100 * s.std:.2f}"
    if versus_gcc and method != BASELINE:
        x, y = pooled(rows, method, mode, dataset, task, metric)
        if len(x) >= 2:
            c = compare(x, y)
            text += marker(c, PAPER_ALPHA) or ("†" if marker(c, LOOSE_ALPHA) else "")
    return text


def markdown_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def write_csv(path: Path, header: Sequence[str], body: Sequence[Sequence[Any]]) -> None:
    """Write one table as CSV."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(body)


def classification_table(rows: Rows, modes: Sequence[str], tasks: Sequence[str], csv_path: Path,
                         methods: Sequence[str] | None = None) -> str:
    """Rows = methods (pre-trained, then training-free), columns = dataset × mode; mean ± std over seeds."""
    datasets = rows.datasets(tasks)
    if not datasets:
        return "_no rows_"
    pretrained = list(methods or rows.methods(classical=False))
    classical = rows.methods(classical=True)
    header = ["method", "max seeds"] + [f"{label(d)} {mode.upper() if mode != 'none' else ''}".strip()
                                    for d in datasets for mode in modes]
    body, flat = [], []
    for method, method_modes in [(m, modes) for m in pretrained] + [(m, ["none"]) for m in classical]:
        cells, n_seeds = [], set()
        for d in datasets:
            task = rows.task_of(d, tasks)
            metric = rows.metric_of(d, task)
            for mode in modes:
                use_mode = "none" if method_modes == ["none"] else mode
                scores = rows.seeds(method, use_mode, d, task, metric)
                n_seeds |= set(scores)
                cells.append(cell(rows, method, use_mode, d, task, metric, versus_gcc=use_mode != "none"))
                s = summarize(list(scores.values())) if scores else None
                flat.append([method, use_mode, d, metric, len(scores), s and s.mean, s and s.std, s and s.ci_low,
                             s and s.ci_high])
        if any(c != "–" for c in cells):
            name = f"{method} (training-free)" if method_modes == ["none"] else method
            body.append([name, len(n_seeds)] + cells)
    write_csv(csv_path, ["method", "mode", "dataset", "metric", "seeds", "mean", "std", "ci5", "ci95"], flat)
    return markdown_table(header, body)


def statistics_table(rows: Rows, method: str, modes: Sequence[str], tasks: Sequence[str], csv_path: Path) -> str:
    """``method`` against ``gcc`` per dataset and mode: difference, 5–95 % interval over seeds, the three
    p-values on the paper's pooled samples (seed × CV repetition) and the seed-level Wilcoxon p."""
    header = ["dataset", "mode", "seeds", "samples", method, "gcc", "difference (pp)", f"{method} 5–95 %",
              "Wilcoxon p", "Mann–Whitney p", "t-test p", f"all p < {PAPER_ALPHA:g}", f"all p < {LOOSE_ALPHA:g}",
              "Wilcoxon p (seed means)"]
    body, flat = [], []
    for d in rows.datasets(tasks):
        task = rows.task_of(d, tasks)
        metric = rows.metric_of(d, task)
        for mode in modes:
            x, y = paired(rows.seeds(method, mode, d, task, metric), rows.seeds(BASELINE, mode, d, task, metric))
            px, py = pooled(rows, method, mode, d, task, metric)
            if len(x) < 2 or len(px) < 2:
                continue
            c, s, b = compare(px, py), summarize(x), summarize(y)
            p_seed = compare(x, y).p_wilcoxon
            p = [c.p_wilcoxon, c.p_mannwhitney, c.p_ttest]
            fmt = ["–" if v is None or not np.isfinite(v) else f"{v:.3g}" for v in p + [p_seed]]
            body.append([label(d), mode, len(x), len(px), f"{100 * s.mean:.2f}", f"{100 * b.mean:.2f}",
                         f"{100 * (s.mean - b.mean):+.2f}", f"[{100 * s.ci_low:.2f}, {100 * s.ci_high:.2f}]",
                         *fmt[:3], marker(c, PAPER_ALPHA) or "no", marker(c, LOOSE_ALPHA) or "no", fmt[3]])
            flat.append([d, mode, metric, len(x), len(px), s.mean, b.mean, s.mean - b.mean, s.ci_low, s.ci_high,
                         *p, p_seed])
    write_csv(csv_path, ["dataset", "mode", "metric", "seeds", "samples", method, "gcc", "difference", "ci5",
                         "ci95", "p_wilcoxon", "p_mannwhitney", "p_ttest", "p_wilcoxon_seed_means"], flat)
    return markdown_table(header, body) if body else "_fewer than two paired seeds_"


def floor_verdicts(rows: Rows, modes: Sequence[str], tasks: Sequence[str], methods: Sequence[str]) -> list[str]:
    """Per column: the best seed-mean of ``methods`` (pre-trained) against the best training-free mean."""
    out = []
    for d in rows.datasets(tasks):
        task = rows.task_of(d, tasks)
        for metric in dict.fromkeys(r["metric"] for r in rows.rows if r["dataset"] == d and r["task"] == task):
            floors = {m: np.mean(list(v.values())) for m in rows.methods(classical=True)
                      if (v := rows.seeds(m, "none", d, task, metric))}
            for mode in modes:
                trained = {m: np.mean(list(v.values())) for m in methods
                           if (v := rows.seeds(m, mode, d, task, metric))}
                if not floors or not trained:
                    continue
                bt, bf = max(trained, key=trained.get), max(floors, key=floors.get)
                verdict = "beats" if trained[bt] > floors[bf] else "does NOT beat"
                out.append(f"- {label(d)} {metric} ({mode.upper()}): best pre-trained `{bt}` "
                           f"{100 * trained[bt]:.2f} {verdict} the best training-free row `{bf}` "
                           f"{100 * floors[bf]:.2f}.")
    return out


def heatmap(rows: Rows, dataset: str, mode: str, png: Path, csv_path: Path) -> str:
    """Pairwise augmentation heat-map on ``dataset``: % gain of ``sgcl-<a>+<b>`` (diagonal ``sgcl-<a>``) over
    ``gcc`` (seed-mean accuracies), as PNG and Markdown."""
    task = rows.task_of(dataset, CLASSIFICATION)
    if task is None:
        return f"_no rows for {dataset}_"
    metric = rows.metric_of(dataset, task)
    base = rows.seeds(BASELINE, mode, dataset, task, metric)
    if not base:
        return f"_no {BASELINE} rows for {dataset}_"
    base_mean = float(np.mean(list(base.values())))
    gain = np.full((len(STAGES), len(STAGES)), np.nan)
    seeds = np.zeros_like(gain, dtype=int)
    for i, a in enumerate(STAGES):
        for j, b in enumerate(STAGES):
            names = [f"sgcl-{a}"] if i == j else [f"sgcl-{a}+{b}", f"sgcl-{b}+{a}"]
            scores = next((s for n in names if (s := rows.seeds(n, mode, dataset, task, metric))), {})
            if scores:
                gain[i, j] = 100 * (np.mean(list(scores.values())) - base_mean) / base_mean
                seeds[i, j] = len(scores)
    write_csv(csv_path, ["augmentation"] + list(STAGES),
              [[a] + ["" if np.isnan(v) else f"{v:.3f}" for v in gain[i]] for i, a in enumerate(STAGES)])
    _plot_heatmap(gain, f"% gain over GCC, {label(dataset)} ({mode.upper()})", png)
    body = [[a] + ["–" if np.isnan(v) else f"{v:+.2f} ({seeds[i, j]})" for j, v in enumerate(gain[i])]
            for i, a in enumerate(STAGES)]
    return markdown_table(["% gain (seeds)"] + list(STAGES), body)


def _plot_heatmap(gain: np.ndarray, title: str, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    png.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    bound = max(float(np.nanmax(np.abs(gain))) if np.isfinite(gain).any() else 1.0, 1e-9)
    image = ax.imshow(np.ma.masked_invalid(gain), cmap="RdYlGn", vmin=-bound, vmax=bound)
    ax.set_xticks(range(len(STAGES)), STAGES, rotation=30)
    ax.set_yticks(range(len(STAGES)), STAGES)
    for i in range(len(STAGES)):
        for j in range(len(STAGES)):
            if np.isfinite(gain[i, j]):
                ax.text(j, i, f"{gain[i, j]:+.1f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label="% gain over GCC")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def lambda2_table(rows: Rows, method: str, mode: str, csv_path: Path) -> str:
    """Per λ2 rank quintile of the test graphs: ``method`` − ``gcc`` accuracy (pp), GCC in brackets."""
    datasets = rows.datasets(CLASSIFICATION)
    header, columns, flat = ["λ2 quintile"], [], []
    for d in datasets:
        task = rows.task_of(d, CLASSIFICATION)
        metric = rows.metric_of(d, task)
        mine = rows.by_key.get((method, mode, d, task, metric), {})
        base = rows.by_key.get((BASELINE, mode, d, task, metric), {})
        common = sorted(s for s in set(mine) & set(base)
                        if mine[s].get("lambda2_quintiles") and base[s].get("lambda2_quintiles"))
        if not common:
            continue
        q_mine = np.array([mine[s]["lambda2_quintiles"] for s in common])
        q_base = np.array([base[s]["lambda2_quintiles"] for s in common])
        bounds = base[common[0]]["lambda2_bounds"]
        header.append(f"{label(d)} (n seeds {len(common)})")
        diff = 100 * (q_mine - q_base).mean(axis=0)
        columns.append([f"{dq:+.2f} ({100 * bq:.1f}) [{lo:.3f}–{hi:.3f}]"
                        for dq, bq, (lo, hi) in zip(diff, q_base.mean(axis=0), bounds)])
        flat += [[d, q + 1, lo, hi, q_mine[:, q].mean(), q_base[:, q].mean(), len(common)]
                 for q, (lo, hi) in enumerate(bounds)]
    write_csv(csv_path, ["dataset", "quintile", "lambda2_min", "lambda2_max", method, "gcc", "seeds"], flat)
    if not columns:
        return "_no quintile rows_"
    body = [[f"Q{q + 1}"] + [col[q] for col in columns] for q in range(len(columns[0]))]
    return markdown_table(header, body)


def runtime_table(rows: Rows, csv_path: Path) -> str:
    """Seconds per mini-batch per method (one run), with ratios to ``gcc``."""
    if not rows.runtime:
        return "_no runtime rows_"
    out, flat = [], []
    for corpus in dict.fromkeys(r["dataset"] for r in rows.runtime):
        values = {(r["method"], r["metric"]): r["mean"] for r in rows.runtime if r["dataset"] == corpus}
        methods = list(dict.fromkeys(m for m, _ in values))
        base = values.get((BASELINE, "total_s")) or values[(methods[0], "total_s")]
        body = []
        for m in methods:
            total = values[(m, "total_s")]
            body.append([m, f"{values[(m, 'data_s')]:.4f}", f"{values[(m, 'step_s')]:.4f}", f"{total:.4f}",
                         f"{total / base:.2f}"])
            flat.append([corpus, m, values[(m, "data_s")], values[(m, "step_s")], total, total / base])
        first = next(r for r in rows.runtime if r["dataset"] == corpus)
        out.append(f"Corpus `{corpus}`, {first['protocol']}, {first['std_kind']} (commit `{first['commit']}`):\n\n"
                   + markdown_table(["method", "data s/batch", "step s/batch", "total s/batch", "ratio to gcc"],
                                    body))
    write_csv(csv_path, ["corpus", "method", "data_s", "step_s", "total_s", "ratio"], flat)
    return "\n\n".join(out)


def headline(rows: Rows, mode: str, tasks: Sequence[str]) -> str:
    """One plain sentence: in how many columns SGCL is ahead of / behind GCC, and which differences pass
    the paper's threshold or p < 0.05 (pooled samples)."""
    ahead, behind, strict, loose = [], [], [], []
    for d in rows.datasets(tasks):
        task = rows.task_of(d, tasks)
        for metric in dict.fromkeys(r["metric"] for r in rows.rows if r["dataset"] == d and r["task"] == task):
            x, y = pooled(rows, "sgcl", mode, d, task, metric)
            if len(x) < 2:
                continue
            c = compare(x, y)
            name = f"{label(d)} {metric}"
            (ahead if c.mean_diff > 0 else behind).append(name)
            if marker(c, PAPER_ALPHA):
                strict.append(f"{name} {marker(c, PAPER_ALPHA)}")
            elif marker(c, LOOSE_ALPHA):
                loose.append(f"{name} {marker(c, LOOSE_ALPHA)}")
    if not ahead and not behind:
        return ""
    return (f"**{mode.upper()}: SGCL is ahead of GCC in {len(ahead)} of {len(ahead) + len(behind)} columns "
            f"({', '.join(ahead) or 'none'}) and behind in {len(behind)}.** At the paper's threshold (all p < 1e-6) "
            f"significant: {', '.join(strict) or 'none'}; at p < 0.05: {', '.join(loose) or 'none'}.")


def evidence(rows: Rows, mode: str) -> list[str]:
    """For each classification column, SGCL − GCC and the single-stage presets' differences, as sentences."""
    out = []
    for d in rows.datasets(CLASSIFICATION):
        task = rows.task_of(d, CLASSIFICATION)
        metric = rows.metric_of(d, task)
        base = rows.seeds(BASELINE, mode, d, task, metric)
        x, y = paired(rows.seeds("sgcl", mode, d, task, metric), base)
        if not x:
            continue
        parts = []
        for stage in STAGES + ("random-crop", "random-permute"):
            a, b = paired(rows.seeds(f"sgcl-{stage}", mode, d, task, metric), base)
            if a:
                parts.append(f"{stage} {100 * (np.mean(a) - np.mean(b)):+.2f}")
        verdict = "ahead" if np.mean(x) > np.mean(y) else "behind"
        out.append(f"- {label(d)}: SGCL − GCC = {100 * (np.mean(x) - np.mean(y)):+.2f} pp, SGCL {verdict} "
                   f"({len(x)} paired seeds); each stage alone − GCC: " + (", ".join(parts) or "none run"))
    return out


def provenance(rows: Rows) -> str:
    """Commits, budgets and summed wall times found in the rows."""
    commits = sorted({r["commit"] for r in rows.rows + rows.runtime})
    budgets = sorted({(r.get("steps"), r.get("batch_size"), r.get("corpus"), r.get("repeats"), r.get("folds"))
                      for r in rows.rows if r["mode"] != "none"}, key=str)
    pre = sum(r.get("pretrain_seconds") or 0 for r in rows.rows)
    evals = sum(r.get("eval_seconds") or 0 for r in {id(r): r for r in rows.rows}.values())
    encoders = {(r["method"], r["mode"], r["seed"]) for r in rows.rows if r["mode"] != "none"}
    lines = [f"- rows: {len(rows.rows)} result rows, {len(encoders)} pre-trained encoders, "
             f"{len(rows.runtime)} runtime rows",
             f"- code commits that produced the rows: {', '.join(f'`{c}`' for c in commits)}",
             "- budgets (steps, batch, corpus, CV repeats, folds): "
             + "; ".join(f"{s} × {b}, {c}, {r} × {f}-fold" for s, b, c, r, f in budgets),
             f"- pre-training wall time recorded by the runner: {pre / 60:.1f} min (encoders it found already "
             f"trained are not counted); embedding + evaluation: {evals / 60:.1f} min"]
    return "\n".join(lines)


def build_report(rows_path: str | Path, out: str | Path, intro: str | Path | None = None,
                 heatmap_dataset: str = "rdt-b", modes: Sequence[str] = ("moco", "e2e")) -> str:
    """Write the report to ``out`` (CSV tables and the heat-map beside ``rows_path``); returns its text."""
    from gcc_sgcl.experiments.runner import RowStore

    rows = Rows(RowStore(rows_path).load())
    out = Path(out)
    folder = Path(rows_path).parent
    present_modes = [m for m in modes if any(r["mode"] == m for r in rows.rows)]
    main_methods = [m for m in rows.methods(classical=False)
                    if not m.startswith("sgcl-")] or rows.methods(classical=False)
    png = folder / f"heatmap_{heatmap_dataset}.png"
    n_main = max((len(rows.seeds("sgcl", m, d, rows.task_of(d, CLASSIFICATION),
                                 rows.metric_of(d, rows.task_of(d, CLASSIFICATION))))
                  for m in present_modes for d in rows.datasets(CLASSIFICATION)), default=0)
    parts = [Path(intro).read_text().rstrip() if intro else "# Results", "## Provenance", provenance(rows)]
    parts += [
        "## Node and graph classification (frozen encoders)",
        "Rows are methods, columns dataset × training mode; cells are mean ± std over seeds of each encoder's "
        "score (mean over repeated, bootstrapped 10-fold CV), in %. Marker against the `gcc` row of the same "
        "mode: ▲/▼ = Wilcoxon, Mann–Whitney and t-test all p < 1e-6 (the paper's rule), † = all p < 0.05, "
        "the tests run, as in the paper, on every CV repetition of every seed, paired with GCC's by (seed, "
        "repetition) — repetitions share splits and bootstrap draws across methods. Repetitions of one encoder "
        "are not independent encoders, so the last column of the statistics table also gives the Wilcoxon p "
        f"of the seed means: with n seeds it cannot fall below 2/2^n (n = {n_main}: "
        f"{min_wilcoxon_p(n_main):.3g}). ᶜ: a single seed (training-free rows, one-seed presets); its ± is the "
        "std over that encoder's CV repetitions." if n_main else "",
        classification_table(rows, present_modes, CLASSIFICATION, folder / "classification.csv", main_methods),
        "### Does pre-training beat structure alone?",
        "Best seed-mean of the methods in the table above (ablation and pair presets left out) against the best "
        "training-free row, per column:",
        "\n".join(floor_verdicts(rows, present_modes, CLASSIFICATION, main_methods)) or "_no training-free rows_",
        "### SGCL against GCC",
        "\n\n".join(h for m in present_modes if (h := headline(rows, m, CLASSIFICATION + ("similarity_search",)))),
        statistics_table(rows, "sgcl", present_modes, CLASSIFICATION, folder / "statistics.csv"),
        "Per-augmentation evidence (E2E, seed-paired mean differences to GCC, pp):",
        "\n".join(evidence(rows, "e2e")) or "_none_",
        "## Top-k similarity search (HITS@20 / HITS@40)",
        similarity_table(rows, present_modes, main_methods, folder / "similarity.csv"),
        "\n".join(floor_verdicts(rows, present_modes, ("similarity_search",), main_methods)) or "",
        "## Fine-tuned encoders",
        classification_table(rows, present_modes, FINETUNED, folder / "finetuned.csv", main_methods)
        if rows.datasets(FINETUNED) else "_no fine-tuning rows_",
        "## Ablation: spectral crop / reorder against random analogues (E2E)",
        classification_table(rows, ["e2e"], CLASSIFICATION, folder / "ablation.csv",
                             [BASELINE] + [m for m in ABLATION_METHODS + tuple(f"sgcl-{s}" for s in STAGES)
                                           if m in rows.methods(classical=False)]),
        f"## Pairwise augmentations on {label(heatmap_dataset)} (E2E, % gain over GCC)",
        f"![heat-map]({png.relative_to(out.parent) if png.is_relative_to(out.parent) else png})",
        heatmap(rows, heatmap_dataset, "e2e", png, folder / f"heatmap_{heatmap_dataset}.csv"),
        "## SGCL − GCC by λ2 quintile of the test graphs (E2E)",
        "Test examples (graphs; for node datasets the node's RWR view) split into rank quintiles of the "
        "second-smallest normalised-Laplacian eigenvalue; cell = SGCL − GCC out-of-fold accuracy in pp, GCC's "
        "accuracy in brackets, the quintile's λ2 range in square brackets, averaged over paired seeds.",
        lambda2_table(rows, "sgcl", "e2e", folder / "lambda2_quintiles.csv"),
        "## Runtime (seconds per mini-batch, one run)",
        runtime_table(rows, folder / "runtime.csv"),
    ]
    text = "\n\n".join(p for p in parts if p) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return text


def similarity_table(rows: Rows, modes: Sequence[str], methods: Sequence[str], csv_path: Path) -> str:
    """HITS@20 / HITS@40 per similarity dataset and mode; one seed-mean cell per metric."""
    datasets = rows.datasets(("similarity_search",))
    if not datasets:
        return "_no rows_"
    metrics = ("hits@20", "hits@40")
    header = ["method", "max seeds"] + [f"{label(d)} {mode.upper()} {m}" for d in datasets for mode in modes
                                    for m in metrics]
    body, flat = [], []
    for method, classical in [(m, False) for m in methods] + [(m, True) for m in rows.methods(classical=True)]:
        cells, seeds = [], set()
        for d in datasets:
            for mode in modes:
                use = "none" if classical else mode
                for metric in metrics:
                    scores = rows.seeds(method, use, d, "similarity_search", metric)
                    seeds |= set(scores)
                    cells.append(cell(rows, method, use, d, "similarity_search", metric, versus_gcc=not classical))
                    if scores:
                        s = summarize(list(scores.values()))
                        flat.append([method, use, d, metric, len(scores), s.mean, s.std, s.ci_low, s.ci_high])
        if any(c != "–" for c in cells):
            body.append([f"{method} (training-free)" if classical else method, len(seeds)] + cells)
    write_csv(csv_path, ["method", "mode", "dataset", "metric", "seeds", "mean", "std", "ci5", "ci95"], flat)
    return markdown_table(header, body)
