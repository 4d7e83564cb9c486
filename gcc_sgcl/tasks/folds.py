"""A cross-validated evaluation's fold predictions, kept while it runs so that one killed part-way resumes at its
missing folds (GCC's SVC on COLLAB's structural features takes longer than a session).

A cache folder belongs to one evaluation; the caller names it (the sweep after the row it computes, the task
commands after the dataset). ``meta.json`` records what the predictions depend on besides the features (the
classifier's description, the CV seed, folds and repetitions, a digest of the labels and of every split's test
indices, scikit-learn's version and :data:`VERSION`), ``features.npy`` the features, and ``<i>.npz`` fold ``i``'s
predictions and fit seconds, each written atomically as the fold finishes. :func:`open_cache` keeps the stored
folds only when the meta is equal and the features are equal up to float noise (the same embedding recomputed on
the other CPU kind differs in its last bits); otherwise it empties the folder. Reads and removal are best-effort:
a fold file that is gone or unreadable is fitted again. One evaluation at a time uses a folder
(:func:`held_cache`): a second one started meanwhile stops at once with an error naming the folder and the first
one's PID, instead of emptying the first one's folds. A symbolic link in place of a file the cache writes or removes
is refused (:class:`~gcc_sgcl.fileio.LinkRefusedError`), never written through.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import sklearn

from gcc_sgcl.engine.run_lock import run_folder_lock
from gcc_sgcl.fileio import atomic_target, load_npy, refuse_link

VERSION = 1  # raise when a classifier's fit changes in a way its description does not show
FEATURE_RTOL = 1e-5  # stored and current features agree to this (relative to the largest magnitude)
META, FEATURES = "meta.json", "features.npy"


@dataclass(frozen=True)
class FoldResult:
    """One fold's test predictions, the seconds its fit took, and whether they were read back from the cache."""

    predictions: np.ndarray
    seconds: float
    stored: bool = False


@dataclass(frozen=True)
class CacheProgress:
    """How far the evaluation cached in a folder has got: folds stored, folds in all, and the seconds the stored
    folds' fits took."""

    stored: int = 0
    total: int = 0
    seconds: float = 0.0


def cache_folder(root: str | Path | None, name: str) -> Path | None:
    """The cache folder of the evaluation called ``name`` under ``root`` (None: no cache), its name kept to
    letters, digits and ``._+=,-``.

    >>> cache_folder("saved/folds", "collab-gcc ⊕ structural-s0")
    PosixPath('saved/folds/collab-gcc_structural-s0')
    """
    return None if root is None else Path(root) / re.sub(r"[^\w.+=,-]+", "_", name, flags=re.ASCII)


def cache_meta(labels: np.ndarray, splits: Sequence[Sequence[tuple[np.ndarray, np.ndarray]]], model: str,
               seed: int) -> dict[str, Any]:
    """What an evaluation's fold predictions depend on besides the features (see the module docstring)."""
    classes, inverse = np.unique(np.asarray(labels), return_inverse=True)
    digest = hashlib.sha256(inverse.astype(np.int64).tobytes())
    for repetition in splits:
        for _, test in repetition:
            digest.update(np.asarray(test, dtype=np.int64).tobytes() + b"|")
    return {"version": VERSION, "model": model, "seed": seed, "classes": classes.tolist(), "repeats": len(splits),
            "folds": len(splits[0]) if splits else 0, "sklearn": sklearn.__version__, "splits": digest.hexdigest()}


def same_features(stored: np.ndarray, features: np.ndarray) -> bool:
    """Whether two feature matrices are the same embedding up to float noise: equal shapes and every entry within
    :data:`FEATURE_RTOL` of the largest magnitude.

    >>> x = np.array([[1.0, -2.0], [3.0, 0.0]], dtype=np.float32)
    >>> same_features(x, x * (1 + 1e-6)), same_features(x, x + 0.01), same_features(x, x[:1])
    (True, False, False)
    """
    a, b = np.asarray(stored, dtype=np.float64), np.asarray(features, dtype=np.float64)
    if a.shape != b.shape:
        return False
    scale = float(np.abs(b).max(initial=0.0))
    return bool(np.allclose(a, b, rtol=0.0, atol=FEATURE_RTOL * scale))


@contextmanager
def held_cache(folder: Path | None) -> Iterator[None]:
    """Hold the lock of the cache ``folder`` for the block (nothing for None): a second evaluation into the same
    folder raises :class:`~gcc_sgcl.engine.run_lock.RunFolderLockedError` meanwhile. When the block succeeds, the
    folder and its parent are removed afterwards if it left them empty (:func:`close_cache`)."""
    if folder is None:
        yield
        return
    with run_folder_lock(folder, user="evaluation", advice="give each evaluation running at once its own "
                                                           "--fold-cache"):
        yield
    _remove_empty(folder)


def open_cache(folder: Path, features: np.ndarray, meta: dict[str, Any]) -> int:
    """Make ``folder`` the cache of the evaluation of ``features`` described by ``meta``: its stored folds are
    kept when its meta and features match (:func:`same_features`), else it is emptied and both are written.
    Returns the number of folds kept."""
    for name in (META, FEATURES):
        refuse_link(folder / name)
    if folder.exists():
        try:
            stored_meta, stored_features = json.loads((folder / META).read_text()), load_npy(folder / FEATURES)
            kept = stored_meta == meta and same_features(stored_features, features)
        except (OSError, ValueError):
            kept = False
        if kept:
            return len(list(folder.glob("*.npz")))
        close_cache(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_target(folder / FEATURES) as tmp, open(tmp, "wb") as f:
        np.save(f, np.asarray(features, dtype=np.float32))
    with atomic_target(folder / META) as tmp:
        tmp.write_text(json.dumps(meta, indent=1))
    return 0


def load_fold(folder: Path, i: int, size: int | None = None) -> FoldResult | None:
    """Fold ``i``'s stored result if it is there, readable and holds ``size`` predictions (None: any number); else
    None."""
    try:
        with np.load(folder / f"{i}.npz") as stored:
            predictions, seconds = stored["predictions"], float(stored["seconds"])
    except (OSError, ValueError, KeyError):
        return None
    return FoldResult(predictions, seconds, stored=True) if size is None or predictions.shape == (size,) else None


def save_fold(folder: Path, i: int, result: FoldResult) -> None:
    """Write fold ``i``'s result atomically; nothing is written if the folder is gone (another process finished
    the same evaluation and removed it)."""
    try:
        with atomic_target(folder / f"{i}.npz") as tmp, open(tmp, "wb") as f:
            np.savez(f, predictions=result.predictions, seconds=result.seconds)
    except FileNotFoundError:
        pass


def cache_progress(folder: Path | None, **expected: Any) -> CacheProgress:
    """How far the evaluation cached in ``folder`` has got; nothing when there is no folder, its meta is
    unreadable, or a meta field differs from ``expected`` (e.g. ``repeats=10``: the next run would empty it).
    Whether the stored folds match the next run's features is only known when that run opens the cache."""
    try:
        meta = json.loads((folder / META).read_text()) if folder is not None else {}
        total = int(meta["repeats"]) * int(meta["folds"])
    except (OSError, ValueError, KeyError, TypeError):
        return CacheProgress()
    if any(meta.get(field) != value for field, value in expected.items()):
        return CacheProgress()
    folds = [load_fold(folder, int(path.stem)) for path in folder.glob("*.npz") if path.stem.isdigit()]
    seconds = [f.seconds for f in folds if f is not None]
    return CacheProgress(len(seconds), total, sum(seconds))


def close_cache(folder: Path) -> None:
    """Remove the files the cache owns (meta, features, folds, interrupted temporaries) and then the folder and its
    parent if they are left empty (the sweep's folder of one row label, mode, seed and budget; under
    :func:`held_cache` its lock file stays until the lock is released); any other file is left alone, and nothing
    happens if the folder is gone already. A symbolic link among them is refused before any is removed."""
    owned = [path for pattern in (META, FEATURES, "*.npz", ".*.tmp") for path in folder.glob(pattern)
             if pattern != "*.npz" or path.stem.isdigit()]
    for path in owned:
        refuse_link(path)
    for path in owned:
        path.unlink(missing_ok=True)
    _remove_empty(folder)


def _remove_empty(folder: Path) -> None:
    """Remove ``folder`` and then its parent if each is empty (the parent: the sweep's folder of one row)."""
    for empty in (folder, folder.parent):
        try:
            empty.rmdir()
        except OSError:
            return
