"""Write training-free embeddings: ``<out_dir>/<dataset>.npy`` for each dataset.

    python -m gcc_sgcl.classical --method prone --dataset usa_airport kdd_icdm --out-dir saved/classical/prone

Prints one tab-separated line per dataset: the written path, its column count (the ``--hidden`` to give
the task CLI), the dataset kind and the seconds the embedding took.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from gcc_sgcl.classical import METHODS, embed_dataset
from gcc_sgcl.cli import check_writable_dir, user_errors
from gcc_sgcl.data import check_dataset_names, dataset_kind, dataset_name
from gcc_sgcl.fileio import atomic_target


def main(argv: list[str] | None = None) -> list[Path]:
    """Command-line entry point; returns the written paths."""
    p = argparse.ArgumentParser(
        prog="python -m gcc_sgcl.classical", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--method", required=True, choices=sorted(METHODS))
    p.add_argument("--dataset", nargs="+", required=True, help="node, graph or similarity dataset names, or graph "
                   "file paths")
    p.add_argument("--out-dir", required=True, help="folder to write <dataset>.npy (a path: <stem>.npy) to "
                   "(created if missing)")
    p.add_argument("--hidden", type=int, default=64, help="embedding size of prone and graphwave (the "
                   "structural and spectral floors have fixed sizes)")
    p.add_argument("--data-dir", default=None, help="data root (default: $GCC_SGCL_DATA or ./data)")
    p.add_argument("--seed", type=int, default=0, help="seed of the numpy Generator of randomized methods")
    a = p.parse_args(argv)
    with user_errors():
        check_dataset_names(a.dataset, ("node", "graph", "similarity"), "--dataset")
        out_dir = check_writable_dir(a.out_dir, "--out-dir", create=True)
        written = []
        for name in a.dataset:
            start = time.perf_counter()
            emb = embed_dataset(a.method, name, a.data_dir, a.hidden, a.seed)
            seconds = time.perf_counter() - start
            path = out_dir / f"{dataset_name(name)}.npy"
            with atomic_target(path) as tmp, open(tmp, "wb") as f:
                np.save(f, emb)
            print(f"{path}\t{emb.shape[1]}\t{dataset_kind(name)}\t{seconds:.1f}s", flush=True)
            written.append(path)
    return written


if __name__ == "__main__":
    main()
