"""Parsed datasets cached as DGL binaries, keyed by the sha256 of their source files' bytes."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import dgl
import numpy as np
import torch

from gcc_sgcl.data.paths import resolve_cache_dir
from gcc_sgcl.fileio import atomic_target, sha256_of

# Bump when a reader's output changes, so caches written by older code are rebuilt.
CACHE_VERSION = 2

Parsed = tuple[list[dgl.DGLGraph], dict[str, np.ndarray]]


def fingerprint(sources: Sequence[Path]) -> dict:
    """What the sidecar records: cache version and each source's sha256 (an edit is noticed even when it keeps
    the file's size and modification time)."""
    return {"version": CACHE_VERSION, "sha256": [sha256_of(path) for path in sources]}


def cache_paths(name: str) -> tuple[Path, Path]:
    """``(graphs.bin, sidecar.json)`` of dataset ``name`` in :func:`resolve_cache_dir`."""
    cache_dir = resolve_cache_dir()
    return cache_dir / f"{name}.bin", cache_dir / f"{name}.json"


def load_cached(name: str, sources: Sequence[Path], build: Callable[[], Parsed]) -> Parsed:
    """``build()``'s graphs and arrays, read from the cache when it was built from these very ``sources``."""
    bin_path, meta_path = cache_paths(name)
    expected = fingerprint(sources)
    if bin_path.exists() and meta_path.exists() and json.loads(meta_path.read_text()) == expected:
        graphs, tensors = dgl.load_graphs(str(bin_path))
        return graphs, {key: value.numpy() for key, value in tensors.items()}
    graphs, arrays = build()
    bin_path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {key: torch.from_numpy(np.ascontiguousarray(value)) for key, value in arrays.items()}
    with atomic_target(bin_path) as tmp:
        dgl.save_graphs(str(tmp), graphs, tensors or None)
    with atomic_target(meta_path) as tmp:
        tmp.write_text(json.dumps(expected, indent=1))
    return graphs, arrays
