"""``python -m gcc_sgcl.experiments {run,finetune,runtime,report} ...``: the experiment runner's commands.

- ``run``: pre-train, embed and evaluate every method × mode × seed on every dataset (skips stored rows);
- ``finetune``: fine-tune the sweep's encoders on its classification datasets;
- ``runtime``: seconds per mini-batch of several methods, measured in one run;
- ``report``: regenerate the Markdown report, CSV tables and heat-map from the stored rows.
"""
from __future__ import annotations

import argparse
import sys

from gcc_sgcl.cli import user_errors
from gcc_sgcl.experiments.report import build_report
from gcc_sgcl.experiments.runner import Sweep, run_finetune, run_runtime, run_sweep
from gcc_sgcl.tasks.graph_classification import SVC_PROTOCOLS

DEFAULT_ROWS = "saved/repro/rows.jsonl"


def sweep_arguments(p: argparse.ArgumentParser) -> None:
    """The flags that define a :class:`Sweep`."""
    d = Sweep(methods=[], seeds=[], datasets=[])
    p.add_argument("--methods", nargs="+", required=True, help="pretrain.sh presets or training-free methods")
    p.add_argument("--seeds", nargs="+", type=int, required=True)
    p.add_argument("--datasets", nargs="+", required=True, help="downstream datasets")
    p.add_argument("--modes", nargs="+", default=d.modes, choices=["e2e", "moco"])
    p.add_argument("--corpus", nargs="+", default=d.corpus, help="pre-training graphs")
    p.add_argument("--steps", type=int, default=d.steps)
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--moco-queue", type=int, default=d.moco_queue, help="MoCo queue length (nce_k)")
    p.add_argument("--num-workers", type=int, default=d.num_workers)
    p.add_argument("--save-freq", type=int, default=d.save_freq)
    p.add_argument("--output-dir", default=d.output_dir, help="where the run folders go")
    p.add_argument("--rows", default=DEFAULT_ROWS, help="JSON-lines result store")
    p.add_argument("--data-dir", default=None, help="data root (default $GCC_SGCL_DATA, else ./data)")
    p.add_argument("--device", default=d.device)
    p.add_argument("--folds", type=int, default=d.folds)
    p.add_argument("--repeats", type=int, default=d.repeats, help="repetitions of the K-fold CV (paper: 10)")
    p.add_argument("--eval-seed", type=int, default=d.eval_seed, help="seed of the CV splits, same for all")
    p.add_argument("--svc", default=d.svc, choices=list(SVC_PROTOCOLS),
                   help="graph-classification SVC: gcc = C=100000, gamma=1/n_features (GCC); grid = C by inner "
                        "grid search in each fold; c1 = C=1 (the 100-step tables' protocol)")


def to_sweep(a: argparse.Namespace) -> Sweep:
    """The :class:`Sweep` of parsed flags."""
    return Sweep(methods=a.methods, seeds=a.seeds, datasets=a.datasets, modes=a.modes, corpus=a.corpus,
                 steps=a.steps, batch_size=a.batch_size, moco_queue=a.moco_queue, num_workers=a.num_workers,
                 save_freq=a.save_freq, output_dir=a.output_dir, rows=a.rows, data_dir=a.data_dir,
                 device=a.device, folds=a.folds, repeats=a.repeats, eval_seed=a.eval_seed, svc=a.svc)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(prog="python -m gcc_sgcl.experiments", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sweep_arguments(sub.add_parser("run", help="pre-train, embed and evaluate a sweep"))
    ft = sub.add_parser("finetune", help="fine-tune a sweep's encoders")
    sweep_arguments(ft)
    ft.add_argument("--epochs", type=int, default=30)
    ft.add_argument("--max-folds", type=int, default=None, help="run only the first m of the CV folds")
    rt = sub.add_parser("runtime", help="seconds per mini-batch per method, one run")
    rt.add_argument("--methods", nargs="+", default=["gcc", "sgcl"])
    rt.add_argument("--corpus", nargs="+", default=["synthetic"])
    rt.add_argument("--batch-size", type=int, default=16, help="the paper's runtime table uses 16")
    rt.add_argument("--batches", type=int, default=40)
    rt.add_argument("--rows", default=DEFAULT_ROWS)
    rt.add_argument("--data-dir", default=None)
    rep = sub.add_parser("report", help="write the report from stored rows")
    rep.add_argument("--rows", default=DEFAULT_ROWS)
    rep.add_argument("--out", default="docs/results.md")
    rep.add_argument("--intro", default=None, help="Markdown file put before the tables")
    rep.add_argument("--heatmap-dataset", default="rdt-b")
    a = p.parse_args(argv)
    with user_errors():
        if a.command == "run":
            added = run_sweep(to_sweep(a))
            print(f"{len(added)} new rows in {a.rows}", file=sys.stderr)
        elif a.command == "finetune":
            added = run_finetune(to_sweep(a), a.epochs, a.max_folds)
            print(f"{len(added)} new rows in {a.rows}", file=sys.stderr)
        elif a.command == "runtime":
            for row in run_runtime(a.methods, a.corpus, a.rows, a.data_dir, a.batch_size, a.batches):
                print(f"{row.method:<24} {row.metric:<8} {row.mean:.4f}")
        else:
            build_report(a.rows, a.out, a.intro, a.heatmap_dataset)
            print(a.out)


if __name__ == "__main__":
    main()
