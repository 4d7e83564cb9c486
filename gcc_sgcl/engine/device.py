"""Device selection from GCC's ``<gpu>`` argument (``python -m gcc_sgcl.engine.device <gpu>`` prints it)."""
from __future__ import annotations

import argparse
import sys

import torch

from gcc_sgcl.cli import user_errors


def resolve_device(gpu: str | int) -> str:
    """``-1``/``cpu`` → ``"cpu"``; ``N`` → ``"cuda:N"``, falling back to CPU with a warning when CUDA is absent."""
    gpu = str(gpu)
    if gpu in ("-1", "cpu"):
        return "cpu"
    if not gpu.isdigit():
        raise ValueError(f"<gpu> must be a GPU index, -1 or 'cpu', got {gpu!r}")
    if not torch.cuda.is_available():
        print(f"[gcc_sgcl] CUDA is not available; running on CPU instead of GPU {gpu}", file=sys.stderr)
        return "cpu"
    return f"cuda:{gpu}"


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point of the shell scripts: print the device of ``<gpu>``."""
    p = argparse.ArgumentParser(prog="python -m gcc_sgcl.engine.device", description=__doc__)
    p.add_argument("gpu", help="GPU index, -1 or cpu")
    a = p.parse_args(argv)
    with user_errors():
        print(resolve_device(a.gpu))


if __name__ == "__main__":
    main()
