"""The embedded end-to-end demo: pre-train on the synthetic corpus, embed the synthetic downstream sets,
evaluate all three tasks and print the methods side by side. No downloads.

``python -m gcc_sgcl.experiments.demo [--methods gcc sgcl] [--steps 300] …`` (every flag below), wrapped by
``scripts/demo.sh``.
Finished runs are reused (a re-run only re-evaluates; an interrupted run resumes from its checkpoint).
"""
from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gcc_sgcl.cli import PlainHelpParser, user_errors
from gcc_sgcl.config import MODES, TrainConfig
from gcc_sgcl.presets import make_config
from gcc_sgcl.engine.checkpoint import CHECKPOINT_NAME
from gcc_sgcl.engine.generate import GenerateConfig, generate
from gcc_sgcl.engine.views import GCC_COPIES, INFERENCE_COPIES
from gcc_sgcl.engine.pretrain import pretrain
from gcc_sgcl.settings import NON_NEGATIVE, SEED32, Settings, add_arguments, at_least, default_of, from_args, setting
from gcc_sgcl.tasks.embeddings import checked_embeddings
from gcc_sgcl.tasks.records import TaskResult, append_results_csv, with_embeddings


@dataclass
class DemoConfig(Settings):
    """The embedded demo (``scripts/demo.sh``), a CPU profile: short pre-training on the synthetic corpus, 3
    instead of 10 CV repetitions. With ``--mode moco`` its queue is :data:`DEMO_MOCO_QUEUE`."""

    methods: list[str] = setting(["gcc", "sgcl"], "method presets (see pretrain --help)")
    steps: int = setting(200, "pre-training steps", valid=NON_NEGATIVE)
    batch_size: int = setting(128, "pre-training batch size", valid=at_least(1))
    mode: str = setting(default_of(TrainConfig, "mode"), "pre-training mode", choices=MODES)
    seed: int = setting(0, "seed of pre-training, views and CV splits", valid=SEED32)
    output_dir: str = setting("saved/demo", "where the run folders go")
    num_workers: int = setting(2, "DataLoader workers", valid=NON_NEGATIVE)
    repeats: int = setting(3, "repetitions of the bootstrapped 10-fold CV (paper: 10)", valid=at_least(1))


# The demo's MoCo queue: a value of its CPU profile, not a second default of ``TrainConfig.nce_k`` (the paper's
# 16384). 200 steps of 128 keys would fill a 16384-key queue only after 128 steps, leaving the demo's MoCo
# encoder mostly trained against an empty queue; 1024 keys (8 batches) are full after 8 steps.
DEMO_MOCO_QUEUE = 1024


NODE_SET, GRAPH_SET, SIMILARITY_SET = "synthetic-roles", "synthetic-graphs", "synthetic-similarity"


def evaluate_run(run_dir: Path, seed: int = 0, repeats: int = default_of(DemoConfig, "repeats")) -> list[TaskResult]:
    """Evaluate a run folder's synthetic embeddings on the three tasks (classification: ``repeats`` ×
    bootstrapped 10-fold CV); appends to its ``results.csv``."""
    from gcc_sgcl.data import load_graph_dataset, load_node_dataset, load_similarity_dataset
    from gcc_sgcl.tasks.graph_classification import evaluate_graph_classification
    from gcc_sgcl.tasks.node_classification import evaluate_node_classification
    from gcc_sgcl.tasks.similarity_search import evaluate_similarity_search

    node = load_node_dataset(NODE_SET)
    graphs = load_graph_dataset(GRAPH_SET)
    pair = load_similarity_dataset(SIMILARITY_SET)
    sim = np.load(run_dir / f"{SIMILARITY_SET}.npy")
    n1 = pair.graph_1.num_nodes()
    scored = [  # the rows' records checked and logged beside the scores, as the task commands do
        (NODE_SET, [node.graph], [evaluate_node_classification(np.load(run_dir / f"{NODE_SET}.npy"), node.labels,
                                                               seed=seed, dataset=NODE_SET, repeats=repeats)]),
        (GRAPH_SET, graphs.graphs, [evaluate_graph_classification(np.load(run_dir / f"{GRAPH_SET}.npy"),
                                                                  graphs.labels, seed=seed, dataset=GRAPH_SET,
                                                                  repeats=repeats)]),
        (SIMILARITY_SET, [pair.graph_1, pair.graph_2],
         evaluate_similarity_search(sim[:n1], sim[n1:], pair.pairs, seed=seed, dataset=SIMILARITY_SET)),
    ]
    results = [r for name, data, found in scored
               for r in with_embeddings(found, checked_embeddings(run_dir, [(name, data)]))]
    results.append(similarity_at_many_views(run_dir, pair, seed, results[-1].encoder_step))
    append_results_csv(run_dir / "results.csv", results, run_dir)
    return results


def similarity_at_many_views(run_dir: Path, pair, seed: int, step: int | None) -> TaskResult:
    """hits@20 of the similarity pair with rows of :data:`~gcc_sgcl.engine.views.INFERENCE_COPIES` views (the default
    for a user's own graphs) instead of GCC's 2: on this task a row's per-view noise decides, and SGCL's rows are
    noisier per view (``docs/first_runs.md`` §5), so the demo shows both."""
    from gcc_sgcl.api import load_encoder
    from gcc_sgcl.tasks.similarity_search import evaluate_similarity_search

    encoder = load_encoder(run_dir)
    rows = [encoder.embed_nodes(g, copies=INFERENCE_COPIES, seed=seed) for g in (pair.graph_1, pair.graph_2)]
    hits = evaluate_similarity_search(*rows, pair.pairs, ks=(20,), seed=seed, dataset=SIMILARITY_SET)[0]
    return dataclasses.replace(hits, encoder_step=step, views=INFERENCE_COPIES)


def reading(rows: dict[str, list[TaskResult]]) -> str:
    """The demo's sentence on its similarity columns, with SGCL − GCC hits@20 at both view counts when both ran."""
    text = ("Reading the similarity columns: this task matches each node of a graph to its copy in a permuted copy, "
            "where a row's per-view noise decides, and SGCL's rows are noisier per view (its spectral crop: "
            "docs/first_runs.md §5)")
    hits = {(m, r.views): r.mean for m, results in rows.items() for r in results
            if r.dataset == SIMILARITY_SET and r.metric == "hits@20"}
    if all((m, v) in hits for m in ("gcc", "sgcl") for v in (GCC_COPIES, INFERENCE_COPIES)):
        gap = {v: 100 * (hits["sgcl", v] - hits["gcc", v]) for v in (GCC_COPIES, INFERENCE_COPIES)}
        text += (f"; SGCL − GCC hits@20 is {gap[GCC_COPIES]:+.1f} pp at GCC's {GCC_COPIES} views per row (the tables' "
                 f"protocol) and {gap[INFERENCE_COPIES]:+.1f} pp at {INFERENCE_COPIES} (the default for your own "
                 f"graphs)")
    return text + ". The README's similarity headline is another task: real co-author graph pairs."


def format_table(rows: dict[str, list[TaskResult]], minutes: dict[str, float]) -> str:
    """Methods as rows, ``dataset metric`` as columns, cells ``mean ± std`` in percent."""
    first = next(iter(rows.values()))
    headers = ["method"] + [f"{r.dataset} {r.metric}" + (f" ({r.views} views)" if r.views not in (None, GCC_COPIES)
                                                         else "") for r in first] + ["train min"]
    cells = [
        [method] + [f"{100 * r.mean:.2f} ± {100 * r.std:.2f}" for r in results] + [f"{minutes[method]:.1f}"]
        for method, results in rows.items()
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = lambda parts: "| " + " | ".join(p.ljust(w) for p, w in zip(parts, widths)) + " |"  # noqa: E731
    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(c) for c in cells]
    notes = [f"± = {r.std_kind}" for r in first[:1]] + [f"± (similarity) = {first[-1].std_kind}"]
    return "\n".join(out + [""] + notes)


def run_demo(demo: DemoConfig) -> str:
    """Pre-train each method of ``demo`` (or reuse its finished run), generate, evaluate; return the printed
    table. MoCo runs use the demo profile's queue, :data:`DEMO_MOCO_QUEUE`."""
    rows, minutes = {}, {}
    train = {"mode": demo.mode, "steps": demo.steps, "batch_size": demo.batch_size, "seed": demo.seed,
             "corpus": ["synthetic"], "output_dir": demo.output_dir, "num_workers": demo.num_workers,
             "save_freq": max(1, demo.steps // 5)}
    if demo.mode == "moco":
        train["nce_k"] = DEMO_MOCO_QUEUE
    for method in demo.methods:
        cfg = make_config(method, {"train": train})
        run_dir = Path(demo.output_dir) / cfg.run_dir_name()
        start = time.time()
        pretrain(cfg, resume=(run_dir / CHECKPOINT_NAME).exists())
        minutes[method] = (time.time() - start) / 60
        views = GenerateConfig(seed=demo.seed, num_workers=demo.num_workers, copies=GCC_COPIES)  # the tables' views
        generate(run_dir, [NODE_SET, GRAPH_SET, SIMILARITY_SET], views)
        rows[method] = evaluate_run(run_dir, demo.seed, demo.repeats)
    table = format_table(rows, minutes)
    print(f"\nDemo: {demo.mode.upper()} pre-training on the synthetic corpus, {demo.steps} steps × batch "
          f"{demo.batch_size}, seed {demo.seed}")
    print("(train min = wall-clock minutes of this invocation's pre-training; 0 when a finished run is reused)\n")
    print(table)
    print("\n" + reading(rows))
    return table


def command_line() -> argparse.ArgumentParser:
    """The command line: :class:`DemoConfig`."""
    p = PlainHelpParser(prog="python -m gcc_sgcl.experiments.demo", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p, DemoConfig)
    return p


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    demo = from_args(DemoConfig, command_line().parse_args(argv))
    with user_errors():
        run_demo(demo)


if __name__ == "__main__":
    main()
