"""Write training-free embeddings: ``<out_dir>/<dataset>.npy`` for each dataset.

    python -m gcc_sgcl.classical --method prone --hidden 64 --dataset usa_airport --out-dir saved/classical/prone-64

Prints one tab-separated line per dataset: the written path, its column count (the ``--hidden`` to give
the task CLI), the dataset kind and the seconds the embedding took.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gcc_sgcl.classical import METHODS, embed_dataset
from gcc_sgcl.cli import PlainHelpParser, check_writable_dir, user_errors
from gcc_sgcl.config import InputConfig, ModelConfig
from gcc_sgcl.data import check_dataset_names, dataset_kind, dataset_name
from gcc_sgcl.fileio import atomic_target
from gcc_sgcl.settings import SEED, Settings, add_arguments, at_least, default_of, from_args, setting


@dataclass
class ClassicalConfig(Settings):
    """Training-free embeddings (``python -m gcc_sgcl.classical``)."""

    method: str = setting(help="training-free method")
    out_dir: str = setting(help="folder to write <dataset>.npy (a path: <stem>.npy) to (created if missing)")
    hidden: int = setting(default_of(ModelConfig, "hidden_size"), "embedding size of the sized methods (prone, "
                                                                  "graphwave, graph2vec, panther, struc2vec, random; "
                                                                  "the others have fixed or data-chosen sizes)",
                                                                  valid=at_least(1))
    seed: int = setting(0, "seed of the numpy Generator of randomized methods", valid=SEED)


def command_line() -> argparse.ArgumentParser:
    """The command line: :class:`ClassicalConfig`, the datasets and the data root."""
    p = PlainHelpParser(
        prog="python -m gcc_sgcl.classical", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(p, ClassicalConfig, choices={"method": sorted(METHODS)})
    add_arguments(p, InputConfig, only=("dataset", "data_dir"), required=("dataset",))
    return p


def main(argv: list[str] | None = None) -> list[Path]:
    """Command-line entry point; returns the written paths."""
    a = command_line().parse_args(argv)
    c, where = from_args(ClassicalConfig, a), from_args(InputConfig, a)
    with user_errors():
        check_dataset_names(where.dataset, ("node", "graph", "similarity"), "--dataset")
        out_dir = check_writable_dir(c.out_dir, "--out-dir", create=True)
        written = []
        for name in where.dataset:
            start = time.perf_counter()
            emb = embed_dataset(c.method, name, where.data_dir, c.hidden, c.seed)
            seconds = time.perf_counter() - start
            path = out_dir / f"{dataset_name(name)}.npy"
            with atomic_target(path) as tmp, open(tmp, "wb") as f:
                np.save(f, emb)
            print(f"{path}\t{emb.shape[1]}\t{dataset_kind(name)}\t{seconds:.1f}s", flush=True)
            written.append(path)
    return written


if __name__ == "__main__":
    main()
