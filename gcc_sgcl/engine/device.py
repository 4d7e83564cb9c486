"""Device selection from GCC's ``<gpu>`` argument."""
from __future__ import annotations

import sys

import torch


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
