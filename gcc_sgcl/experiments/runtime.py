"""Seconds per mini-batch of pre-training for several methods on the same graphs, measured in one run.

``python -m gcc_sgcl.experiments.runtime --methods gcc sgcl --corpus ca-hepth --batch-size 16``
(wrapped by ``scripts/bench_runtime.sh``). Methods take turns batch by batch (the order rotates), in one
process and one thread, so a machine whose speed drifts affects all of them alike. For every mini-batch it
times the data side — RWR sampling, SGCL's filter and augmentations, eigen-features, batching — and the
optimisation step (forward, backward, update) of that method's own trainer. Batch ``b`` of every method
starts from the same nodes. Global embeddings E_t are computed (or loaded from the cache) before timing and
reported separately. ``python -m gcc_sgcl.experiments runtime`` stores the measurement as result rows
(:func:`run_runtime`).

One name, one idea at 2 layers: :mod:`gcc_sgcl.experiments.runtime` (the measurement),
:mod:`gcc_sgcl.experiments.studies.runtime` (its report table).
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from gcc_sgcl.cli import PlainHelpParser, user_errors
from gcc_sgcl.config import InputConfig, TrainConfig
from gcc_sgcl.presets import make_config
from gcc_sgcl.engine.pretrain import Trainer, build_pipeline
from gcc_sgcl.experiments.code_version import git_commit, host_fingerprint
from gcc_sgcl.experiments.rows import ResultRow, RowStore
from gcc_sgcl.sampling.dataset import PretrainPairDataset, collate_pairs, limit_threads
from gcc_sgcl.settings import SEED, Settings, add_arguments, at_least, default_of, from_args, setting


@dataclass
class RuntimeConfig(Settings):
    """Seconds per mini-batch of several methods, measured in one run (``bench_runtime.sh``)."""

    methods: list[str] = setting(["gcc", "sgcl"], "methods timed side by side")
    corpus: list[str] = setting(default_of(TrainConfig, "corpus"), "pre-training graphs")
    batch_size: int = setting(16, "the paper's runtime table uses 16", valid=at_least(1))
    batches: int = setting(60, "mini-batches per method", valid=at_least(1))
    seed: int = setting(0, "seed of the sampled nodes", valid=SEED)


def measure(
    methods: list[str],
    corpus: list[str],
    batch_size: int = default_of(RuntimeConfig, "batch_size"),
    batches: int = default_of(RuntimeConfig, "batches"),
    data_dir: str | None = None,
    seed: int = default_of(RuntimeConfig, "seed"),
) -> dict[str, dict[str, float]]:
    """Mean seconds per mini-batch (data side, step, total) and E_t setup time per method."""
    from gcc_sgcl.data import load_pretrain_corpus

    graphs = load_pretrain_corpus(corpus, data_dir)
    limit_threads()
    setups = {}
    for method in methods:
        cfg = make_config(method, {"train": {"batch_size": batch_size, "seed": seed, "corpus": corpus,
                                             "steps": batches}})
        start = time.perf_counter()
        pipeline, embs = build_pipeline(cfg, graphs, progress=False)
        setup_s = time.perf_counter() - start
        dataset = PretrainPairDataset(graphs, cfg.sampling, seed, batches * batch_size, pipeline, embs)
        setups[method] = (dataset, Trainer(cfg), setup_s)
    data = {m: [] for m in methods}
    step = {m: [] for m in methods}
    for b in range(batches):
        for method in np.roll(methods, -b):
            dataset, trainer, _ = setups[method]
            start = time.perf_counter()
            graph_q, graph_k = collate_pairs(dataset.__getitems__(range(b * batch_size, (b + 1) * batch_size)))
            sampled = time.perf_counter()
            trainer.step(graph_q, graph_k)
            data[method].append(sampled - start)
            step[method].append(time.perf_counter() - sampled)
    return {
        m: {"data_s": float(np.mean(data[m])), "step_s": float(np.mean(step[m])),
            "total_s": float(np.mean(data[m]) + np.mean(step[m])), "setup_s": setups[m][2]}
        for m in methods
    }


def run_runtime(settings: RuntimeConfig, rows: str, data_dir: str | None = None) -> list[ResultRow]:
    """Seconds per mini-batch of each method, measured in one run (:func:`measure`), stored as rows of task
    ``runtime`` (replacing earlier runtime rows of the same corpus)."""
    start = time.time()
    r = settings
    measured = measure(r.methods, r.corpus, r.batch_size, r.batches, data_dir, r.seed)
    commit, host = git_commit(), host_fingerprint()
    now = datetime.now().isoformat(timespec="seconds")
    name = "+".join(r.corpus)
    new = [ResultRow(
        method=m, mode="e2e", seed=r.seed, dataset=name, task="runtime", metric=metric, mean=value, std=0.0,
        std_kind=f"mean over {r.batches} mini-batches", n=r.batches,
        protocol=f"batch {r.batch_size}, methods alternate batch by batch in one process, one thread",
        corpus=name, batch_size=r.batch_size, config=make_config(m).to_dict(), commit=commit, host=host, time=now,
        eval_seconds=time.time() - start,
    ) for m, result in measured.items() for metric, value in result.items()]
    RowStore(rows).replace(lambda r: r.task == "runtime" and r.dataset == name, new)
    return new


def format_report(results: dict[str, dict[str, float]]) -> str:
    """Markdown table with ratios to the first method."""
    base = next(iter(results.values()))
    lines = ["| method | data s/batch | ratio | optimisation step s/batch | total s/batch | ratio | E_t setup s |",
             "|---|---|---|---|---|---|---|"]
    for m, r in results.items():
        lines.append(f"| {m} | {r['data_s']:.4f} | {r['data_s'] / base['data_s']:.2f} | {r['step_s']:.4f} | "
                     f"{r['total_s']:.4f} | {r['total_s'] / base['total_s']:.2f} | {r['setup_s']:.1f} |")
    return "\n".join(lines)


def command_line() -> argparse.ArgumentParser:
    """The command line: :class:`RuntimeConfig` and the data root."""
    p = PlainHelpParser(prog="python -m gcc_sgcl.experiments.runtime", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p, RuntimeConfig)
    add_arguments(p, InputConfig, only=("data_dir",))
    return p


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    a = command_line().parse_args(argv)
    r = from_args(RuntimeConfig, a)
    with user_errors():
        results = measure(r.methods, r.corpus, r.batch_size, r.batches, from_args(InputConfig, a).data_dir, r.seed)
    print(f"corpus={'+'.join(r.corpus)} batch={r.batch_size} batches/method={r.batches} "
          f"(methods alternate batch by batch; means)")
    print(format_report(results))


if __name__ == "__main__":
    main()
