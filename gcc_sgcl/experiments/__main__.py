"""``python -m gcc_sgcl.experiments {run,finetune,runtime,report,sgcl-method,method,export,shipped} ...``: the
experiment runner's commands.

- ``run``: pre-train, embed and evaluate every method × mode × seed on every dataset (skips stored rows);
- ``finetune``: fine-tune the sweep's encoders on its classification datasets;
- ``runtime``: seconds per mini-batch of several methods, measured in one run;
- ``report``: regenerate the Markdown report, CSV tables and heat-map from the stored rows;
- ``sgcl-method``: print the method name of the tables' ``sgcl`` row (``sgcl`` or the chosen ``sgcl[c=…]``);
- ``method``: print a variant's name, e.g. ``method sgcl-no-crop --like 'sgcl[c=0.4]'`` → ``sgcl-no-crop[c=0.4]``;
  ``@singles``, ``@pairs``, ``@loo`` name the presets of a sweep stage (:data:`~gcc_sgcl.experiments.sweep.PRESET_GROUPS`).

- ``export``: pre-train one encoder of a sweep if needed and write it for shipping (``saved/pretrained/<name>``);
- ``shipped``: rewrite the listing of the shipped encoders in ``saved/pretrained/README.md`` from the folders there
  (:mod:`gcc_sgcl.experiments.shipped`).

``run`` and ``finetune`` with ``--plan`` print what is still to do, with time estimates, and run nothing
(:mod:`gcc_sgcl.experiments.plan`); with ``--stash DIR`` they write the encoders of the jobs still to do (finished
or not) under DIR, to carry to another machine, and run nothing; with ``--until HH:MM`` they (and ``export``) start
only the jobs whose estimates end before that time.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from gcc_sgcl.cli import PlainHelpParser, exit_after_stop, stop_exit, user_errors
from gcc_sgcl.config import InputConfig
from gcc_sgcl.engine.interrupt import stop_at_once_on_signals
from gcc_sgcl.engine.pretrain import Interrupted
from gcc_sgcl.experiments.encoders import export_run, stash
from gcc_sgcl.experiments.finetune_sweep import run_finetune
from gcc_sgcl.experiments.frozen_sweep import run_sweep
from gcc_sgcl.experiments.plan import Deadline, format_plan, parse_deadline, plan_finetune, plan_sweep
from gcc_sgcl.experiments.report import build_report
from gcc_sgcl.experiments.studies.selection import chosen_sgcl
from gcc_sgcl.experiments.runtime import RuntimeConfig, run_runtime
from gcc_sgcl.experiments.settings import (
    ChoiceConfig,
    ExportConfig,
    MethodNameConfig,
    ReportConfig,
    ShippedConfig,
    SweepConfig,
)
from gcc_sgcl.experiments.shipped import update_listing
from gcc_sgcl.experiments.sweep import Sweep, derived_method, expand_groups
from gcc_sgcl.settings import add_arguments, from_args, given_flags
from gcc_sgcl.tasks.finetune import FinetuneConfig
from gcc_sgcl.tasks.graph_classification import SVC_PROTOCOLS


FINETUNE_FLAGS = ("epochs", "max_folds", "view_copies")  # the FinetuneConfig fields ``finetune`` takes


def command_line() -> argparse.ArgumentParser:
    """The subcommands: ``run`` (:class:`~gcc_sgcl.experiments.settings.SweepConfig`), ``finetune`` (the sweep plus
    :class:`~gcc_sgcl.tasks.finetune.FinetuneConfig`'s epochs, max folds and view copies), ``runtime``
    (:class:`~gcc_sgcl.experiments.runtime.RuntimeConfig`), ``report`` (:class:`~gcc_sgcl.experiments.settings.ReportConfig`),
    ``sgcl-method`` (:class:`~gcc_sgcl.experiments.settings.ChoiceConfig`), ``export`` (the sweep's settings but its datasets,
    plus :class:`~gcc_sgcl.experiments.settings.ExportConfig`) and ``shipped`` (:class:`~gcc_sgcl.experiments.settings.ShippedConfig`)."""
    p = PlainHelpParser(prog="python -m gcc_sgcl.experiments", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sweep_choices = {"svc": SVC_PROTOCOLS}
    run = sub.add_parser("run", help="pre-train, embed and evaluate a sweep")
    add_arguments(run, SweepConfig, choices=sweep_choices)
    ft = sub.add_parser("finetune", help="fine-tune a sweep's encoders")
    add_arguments(ft, SweepConfig, choices=sweep_choices)
    add_arguments(ft, FinetuneConfig, only=FINETUNE_FLAGS)
    ex = sub.add_parser("export", help="pre-train one encoder of a sweep if needed and export it for shipping")
    add_arguments(ex, SweepConfig, choices=sweep_choices, only=[f.name for f in dataclasses.fields(SweepConfig)
                                                                if f.name not in ("datasets", "plan", "stash")])
    add_arguments(ex, ExportConfig)
    rt = sub.add_parser("runtime", help="seconds per mini-batch per method, one run")
    add_arguments(rt, RuntimeConfig, only=("methods", "corpus", "batch_size", "batches"))
    add_arguments(rt, ReportConfig, only=("rows",))
    add_arguments(rt, InputConfig, only=("data_dir",))
    add_arguments(sub.add_parser("report", help="write the report from stored rows"), ReportConfig)
    add_arguments(sub.add_parser("sgcl-method", help="print the method name of the tables' sgcl row (the c grid's "
                                                     "choice)"), ChoiceConfig)
    add_arguments(sub.add_parser("method", help="print a variant's method name (e.g. the tables' sgcl without a "
                                                "stage)"), MethodNameConfig)
    add_arguments(sub.add_parser("shipped", help="rewrite the README listing of the shipped encoders"), ShippedConfig)
    return p


def finetune_settings(args: argparse.Namespace) -> FinetuneConfig:
    """The fine-tuning settings of ``finetune``'s flags (:data:`FINETUNE_FLAGS`); the sweep's ``--batch-size`` is
    the pre-training batch, not fine-tuning's."""
    given = given_flags(FinetuneConfig, args)
    return FinetuneConfig(**{name: given[name] for name in FINETUNE_FLAGS if name in given})


def deadline(sweep: Sweep, finetune: FinetuneConfig | None = None) -> Deadline | None:
    """The sweep's ``--until`` as an admission rule (None without one)."""
    return Deadline(sweep, parse_deadline(sweep.until), finetune) if sweep.until else None


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point. A sweep whose pre-training is stopped by Ctrl-C or SIGTERM (the checkpoint written
    after the step in progress) ends with one line and exit status 130 (143 for SIGTERM); the same command resumes it."""
    try:
        dispatch(argv)
    except Interrupted as stop:
        stop_at_once_on_signals()  # another Ctrl-C from here to the exit ends it at once, not with a traceback
        print(f"[gcc_sgcl] interrupted: {stop}; the same command resumes it", file=sys.stderr)
        exit_after_stop(stop_exit(stop.signum))


def dispatch(argv: list[str] | None = None) -> None:
    """Run the subcommand of ``argv``."""
    a = command_line().parse_args(argv)
    with user_errors():
        if a.command in ("run", "finetune") and (from_args(Sweep, a).plan or from_args(Sweep, a).stash):
            sweep = from_args(Sweep, a)
            jobs = plan_sweep(sweep) if a.command == "run" else plan_finetune(sweep, finetune_settings(a))
            if sweep.plan:
                print(format_plan(jobs))
            else:
                for folder in stash(sweep, [(j.method, j.mode, j.seed) for j in jobs], sweep.stash):
                    print(f"stashed {folder}")
        elif a.command == "run":
            sweep = from_args(Sweep, a)
            added = run_sweep(sweep, admit=deadline(sweep))
            print(f"{len(added)} new rows in {sweep.rows}", file=sys.stderr)
        elif a.command == "finetune":
            sweep, settings = from_args(Sweep, a), finetune_settings(a)
            added = run_finetune(sweep, settings, admit=deadline(sweep, settings))
            print(f"{len(added)} new rows in {sweep.rows}", file=sys.stderr)
        elif a.command == "export":
            sweep = Sweep(**{**given_flags(SweepConfig, a), "datasets": []})
            jobs = sweep.jobs()
            if len(jobs) != 1:
                raise ValueError(f"export writes one encoder: give one of --methods, --modes and --seeds, got "
                                 f"{len(jobs)} (method, mode, seed) combinations")
            admit = deadline(sweep)
            if admit is not None and not admit(jobs[0], {}):
                return
            print(export_run(sweep, *jobs[0], from_args(ExportConfig, a).to))
        elif a.command == "runtime":
            rows, data_dir = from_args(ReportConfig, a).rows, from_args(InputConfig, a).data_dir
            for row in run_runtime(from_args(RuntimeConfig, a), rows, data_dir):
                print(f"{row.method:<24} {row.metric:<8} {row.mean:.4f}")
        elif a.command == "method":
            name = from_args(MethodNameConfig, a)
            print("\n".join(derived_method(base, name.like, *name.set) for base in expand_groups(name.bases)))
        elif a.command == "shipped":
            shipped = from_args(ShippedConfig, a)
            print(update_listing(shipped.folder, shipped.readme))
        elif a.command == "sgcl-method":
            choice = from_args(ChoiceConfig, a)
            print(chosen_sgcl(choice.rows, choice.grid))
        else:
            report = from_args(ReportConfig, a)
            build_report(report.rows, report.out, report.intro, report.heatmap_dataset, c_grid=report.c_grid,
                         protocol=report.protocol, status=report.status, readme=report.readme)
            print("\n".join(filter(None, [report.out, report.readme])))


if __name__ == "__main__":
    main()
