"""Where a result row came from: the commit of the code that produced it and the machine's numeric libraries."""
from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any


def git_commit(root: str | Path | None = None) -> str:
    """``HEAD``'s hash of the repository holding ``root`` (default: the folder holding this package), with
    ``-dirty`` if tracked files outside its top-level ``docs/`` changed: the sweep writes its rows, tables and
    figures there while it runs, which says nothing about the code that produced them."""
    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":/",
                                ":(top,exclude)docs"], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


# Environment variables that choose a numeric library's code path or threads.
NUMERIC_ENV = ("OPENBLAS_CORETYPE", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "OPENBLAS_NUM_THREADS")


def host_fingerprint() -> dict[str, Any]:
    """The machine that scores a sweep's rows, taken at the sweep's start. What of the machine can change a row's last digits with the same code and seeds (measured: OpenBLAS'
    kernel moves the classifier's scores, MKL's code path the eigenvectors of the views and, with the thread
    count, the trained weights; ``docs/reproducibility.md``): the CPU, its cores, the BLAS / OpenMP libraries
    numpy, scipy and torch load (threadpoolctl: kind, version, kernel architecture, threads) and torch's version
    and threads."""
    import torch
    from threadpoolctl import threadpool_info

    libraries = sorted({(i.get("internal_api"), i.get("version"), i.get("architecture"), i.get("num_threads"))
                        for i in threadpool_info()}, key=str)
    mkl = re.search(r"Math Kernel Library Version ([\d.]+)", torch.__config__.show())
    return {"cpu": _cpu_model(), "cores": os.cpu_count(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "torch_mkl": mkl[1] if mkl else None,
            "libraries": [list(lib) for lib in libraries],
            "env": {k: os.environ[k] for k in NUMERIC_ENV if k in os.environ}}


def _cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else the platform's processor string)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
