"""Device selection from GCC's ``<gpu>`` argument.

    python -m gcc_sgcl.engine.device <gpu>     prints the device, or why it cannot be used (exit status 2)

A GPU is usable whenever torch sees it: with a CUDA build of DGL the encoder runs DGL's kernels there, with
the registry's CPU-only DGL it runs the same GIN in plain torch (:func:`gcc_sgcl.models.flat.model_path`).
Views are built on the CPU either way.
"""
from __future__ import annotations

import sys

import torch

from gcc_sgcl.models.flat import dgl_sees_gpu, model_path


class DeviceError(RuntimeError, ValueError):
    """The requested GPU cannot be used by this installation; the message says what to do instead. A ``ValueError``
    too: a bad ``--device`` is the user's input, reported by every command in one line."""


def resolve_device(gpu: str | int) -> str:
    """``-1``/``cpu`` → ``"cpu"``; ``N`` → ``"cuda:N"``, falling back to CPU with a warning when CUDA is absent
    (:func:`resolve_device_quietly`, which says why instead of printing it)."""
    device, note = resolve_device_quietly(gpu)
    if note:
        print(f"[gcc_sgcl] CUDA is not available; running on CPU instead of GPU {gpu}", file=sys.stderr)
    return device


def resolve_device_quietly(gpu: str | int) -> tuple[str, str]:
    """``(device, why it is not the GPU asked for)`` of GCC's ``<gpu>``: ``-1``/``cpu`` → ``"cpu"``; ``N`` →
    ``"cuda:N"``, or ``"cpu"`` when torch has no CUDA. Raises :class:`DeviceError` when torch has CUDA but GPU ``N``
    is absent, before any work starts. With a CPU-only DGL the GPU is used through the plain-torch encoder path,
    said once on stderr.

    >>> resolve_device_quietly("-1")
    ('cpu', '')
    """
    gpu = str(gpu)
    if gpu in ("-1", "cpu"):
        return "cpu", ""
    if not gpu.isdigit():
        raise ValueError(f"<gpu> must be a GPU index, -1 or 'cpu', got {gpu!r}")
    if not torch.cuda.is_available():
        return "cpu", f"GPU {gpu} asked for: CUDA is not available to this torch"
    if int(gpu) >= torch.cuda.device_count():
        raise DeviceError(f"GPU {gpu} does not exist: torch sees {torch.cuda.device_count()} GPU(s); "
                          f"give an index below that, or -1 for CPU")
    device = f"cuda:{gpu}"
    if model_path(device, dgl_sees_gpu) == "plain":
        print(f"[gcc_sgcl] the installed DGL is CPU-only: the encoder runs in plain torch on {device} "
              f"(same parameters and checkpoints); views are built on the CPU", file=sys.stderr)
    return device, ""


def check_torch_device(device: str | torch.device) -> None:
    """Raise :class:`DeviceError` when ``device`` is a CUDA device torch cannot use on this machine, or neither a CPU
    nor a CUDA device (DGL runs on no other).

    >>> check_torch_device("cpu")
    >>> check_torch_device("mps")
    Traceback (most recent call last):
    ...
    gcc_sgcl.engine.device.DeviceError: device 'mps': this package runs on 'cpu' or 'cuda' (DGL has no mps backend)
    """
    device = torch.device(device)
    if device.type not in ("cpu", "cuda"):
        raise DeviceError(f"device {str(device)!r}: this package runs on 'cpu' or 'cuda' (DGL has no {device.type} "
                          f"backend)")
    if device.type != "cuda":
        return
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        raise DeviceError(f"device {str(device)!r}: torch sees no CUDA device on this machine; use 'cpu'")
    if (device.index or 0) >= count:
        raise DeviceError(f"device {str(device)!r} does not exist: torch sees {count} GPU(s)")


def main(argv: list[str] | None = None) -> None:
    """Print the device of ``<gpu>``; a device that cannot be used exits with status 2 and one line."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m gcc_sgcl.engine.device <gpu>")
    try:
        print(resolve_device(args[0]))
    except (DeviceError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
