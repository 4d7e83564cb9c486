"""Where a result row came from: the commit of the code that produced it."""
from __future__ import annotations

import subprocess
from pathlib import Path


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
