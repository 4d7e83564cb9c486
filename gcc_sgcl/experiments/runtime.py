"""Seconds per mini-batch of pre-training for several methods on the same graphs, measured in one run.

``python -m gcc_sgcl.experiments.runtime --methods gcc sgcl --corpus ca-hepth --batch-size 16``
(wrapped by ``scripts/bench_runtime.sh``). For each method it times (a) the data side alone — RWR sampling,
SGCL's filter and augmentations, eigen-features, batching — and (b) full training steps (data + forward +
backward + update) through the same DataLoader the trainer uses. Methods are measured in interleaved
rounds so drift of the machine affects all of them alike; the ratio to the first method is printed.
Global embeddings E_t are computed (or loaded from the cache) before timing and reported separately.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from gcc_sgcl.config import make_config
from gcc_sgcl.engine.pretrain import Trainer, build_pipeline
from gcc_sgcl.sampling.dataset import PretrainPairDataset, collate_pairs, limit_threads, worker_init


def _loader(dataset, batch_size: int, start_batch: int, n_batches: int, num_workers: int, seed: int):
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, collate_fn=collate_pairs, num_workers=num_workers,
        sampler=range(start_batch * batch_size, (start_batch + n_batches) * batch_size),
        worker_init_fn=worker_init, generator=torch.Generator().manual_seed(seed),
    )


def measure(
    methods: list[str],
    corpus: list[str],
    batch_size: int = 16,
    batches: int = 30,
    rounds: int = 3,
    num_workers: int = 0,
    data_dir: str | None = None,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Median seconds per mini-batch (data only, full step) per method; see the module docstring."""
    from gcc_sgcl.data import load_pretrain_corpus

    graphs = load_pretrain_corpus(corpus, data_dir)
    if num_workers == 0:
        limit_threads()
    setups = {}
    for method in methods:
        cfg = make_config(method, {"train": {"batch_size": batch_size, "seed": seed, "corpus": corpus,
                                             "steps": rounds * batches * 2 + 1}})
        start = time.perf_counter()
        pipeline, embs = build_pipeline(cfg, graphs, progress=False)
        setup_s = time.perf_counter() - start
        dataset = PretrainPairDataset(graphs, cfg.sampling, seed, cfg.train.steps * batch_size, pipeline, embs)
        setups[method] = (cfg, dataset, setup_s)
    data_times = {m: [] for m in methods}
    step_times = {m: [] for m in methods}
    for r in range(rounds):
        for method in methods:
            cfg, dataset, _ = setups[method]
            start = time.perf_counter()
            for _ in _loader(dataset, batch_size, 2 * r * batches, batches, num_workers, seed):
                pass
            data_times[method].append((time.perf_counter() - start) / batches)
            trainer = Trainer(cfg)
            start = time.perf_counter()
            for q, k in _loader(dataset, batch_size, (2 * r + 1) * batches, batches, num_workers, seed):
                trainer.step(q, k)
            step_times[method].append((time.perf_counter() - start) / batches)
    return {
        m: {"data_s": float(np.median(data_times[m])), "step_s": float(np.median(step_times[m])),
            "setup_s": setups[m][2]}
        for m in methods
    }


def format_report(results: dict[str, dict[str, float]]) -> str:
    """Markdown table with ratios to the first method."""
    base = next(iter(results.values()))
    lines = ["| method | data s/batch | ratio | train-step s/batch | ratio | E_t setup s |",
             "|---|---|---|---|---|---|"]
    for m, r in results.items():
        lines.append(f"| {m} | {r['data_s']:.4f} | {r['data_s'] / base['data_s']:.2f} | {r['step_s']:.4f} | "
                     f"{r['step_s'] / base['step_s']:.2f} | {r['setup_s']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--methods", nargs="+", default=["gcc", "sgcl"])
    p.add_argument("--corpus", nargs="+", default=["synthetic"])
    p.add_argument("--batch-size", type=int, default=16, help="the paper's runtime table uses 16")
    p.add_argument("--batches", type=int, default=30, help="mini-batches per timed round")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median is reported")
    p.add_argument("--num-workers", type=int, default=0)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    results = measure(a.methods, a.corpus, a.batch_size, a.batches, a.rounds, a.num_workers, a.data_dir, a.seed)
    print(f"corpus={'+'.join(a.corpus)} batch={a.batch_size} workers={a.num_workers} "
          f"batches/round={a.batches} rounds={a.rounds} (median over rounds)")
    print(format_report(results))


if __name__ == "__main__":
    main()
