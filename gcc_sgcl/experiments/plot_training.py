"""Plot the training curves of one or more runs from their TensorBoard events.

``python -m gcc_sgcl.experiments.plot_training saved/RUN_A saved/RUN_B --out docs/curves.png`` draws loss,
positive-pair probability, learning rate and mean subgraph size per step, one line per run.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from gcc_sgcl.cli import PlainHelpParser, user_errors  # noqa: E402
from gcc_sgcl.experiments.studies.markdown import save_figure  # noqa: E402
from gcc_sgcl.settings import Settings, add_arguments, from_args, setting


@dataclass
class PlotConfig(Settings):
    """Training curves of runs (``python -m gcc_sgcl.experiments.plot_training``)."""

    runs: list[str] = setting(help="run folders with TensorBoard events", positional=True)
    out: str = setting("training_curves.png", "PNG file to write")


PANELS = (("train/loss", "InfoNCE loss"), ("train/prob", "positive-pair probability"),
          ("train/lr", "learning rate"), ("train/nodes_q", "mean nodes per query view"))


def read_scalars(run_dir: str | Path) -> dict[str, tuple[list[int], list[float]]]:
    """``tag -> (steps, values)`` of every scalar logged in ``run_dir``."""
    if not Path(run_dir).is_dir():
        raise FileNotFoundError(f"no TensorBoard scalars under {run_dir}: not a folder")
    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    tags = acc.Tags().get("scalars", [])
    if not tags:
        raise FileNotFoundError(f"no TensorBoard scalars under {run_dir} (was it trained with this package?)")
    return {t: ([e.step for e in acc.Scalars(t)], [e.value for e in acc.Scalars(t)]) for t in tags}


def plot_runs(run_dirs: list[str | Path], out: str | Path) -> Path:
    """Write a 2×2 PNG of the curves of ``run_dirs`` to ``out``."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for run in run_dirs:
        scalars = read_scalars(run)
        for ax, (tag, title) in zip(axes.flat, PANELS):
            if tag in scalars:
                ax.plot(*scalars[tag], label=Path(run).name, linewidth=1)
            ax.set_title(title)
            ax.set_xlabel("step")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, out, dpi=110)
    return out


def command_line() -> argparse.ArgumentParser:
    """The command line: :class:`PlotConfig`."""
    p = PlainHelpParser(prog="python -m gcc_sgcl.experiments.plot_training", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p, PlotConfig)
    return p


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    plot = from_args(PlotConfig, command_line().parse_args(argv))
    with user_errors():
        print(plot_runs(plot.runs, plot.out))


if __name__ == "__main__":
    main()
