"""Parsed datasets cached as DGL binaries, keyed by the sha256 of their source files' bytes.

An entry is one file, ``<name>-<key>.bin`` in :func:`resolve_cache_dir` (``key``: a digest of the sources'
:func:`fingerprint`), renamed into place whole: DGL's binary of the graphs and arrays followed by a trailer that
records the fingerprint and the binary's length and sha256. A reader therefore sees one writer's complete entry
or none, and two source files loaded under one dataset name are two entries (they once shared a ``.bin`` and a
``.json`` renamed separately, and a reader could pair one writer's graphs with the other's sidecar). An entry is
checked before it is used: a damaged one (truncated, empty, edited) is rebuilt with a one-line notice on stderr;
a cache that cannot be written (a full disk, a read-only ``$GCC_SGCL_CACHE``) is skipped with one.
"""
from __future__ import annotations

import hashlib
import json
import re
import struct
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import dgl
import numpy as np
import torch

from gcc_sgcl.data.paths import CACHE_ENV, resolve_cache_dir
from gcc_sgcl.fileio import atomic_target, sha256_of

# Bump when a reader's output changes, so caches written by older code are rebuilt.
CACHE_VERSION = 3

Parsed = tuple[list[dgl.DGLGraph], dict[str, np.ndarray]]

_MAGIC = b"GCCSGCL3"
_TAIL = struct.Struct("<Q8s")  # the trailer's JSON length, then the magic bytes: the file's last 16 bytes
_CHUNK = 1 << 20


class DamagedEntryError(ValueError):
    """A cache entry that cannot be used as it is (the message says why); it is rebuilt."""


def fingerprint(sources: Sequence[Path]) -> dict:
    """What an entry is built from: cache version and each source's sha256 (an edit is noticed even when it keeps
    the file's size and modification time)."""
    return {"version": CACHE_VERSION, "sha256": [sha256_of(path) for path in sources]}


def cache_entry(name: str, expected: dict) -> Path:
    """The entry of dataset ``name`` built from the sources of fingerprint ``expected``.

    >>> cache_entry("imdb-binary", {"version": 3, "sha256": []}).name
    'imdb-binary-890ac76e30c20495.bin'
    """
    key = hashlib.sha256(json.dumps(expected, sort_keys=True).encode()).hexdigest()[:16]
    return resolve_cache_dir() / f"{name}-{key}.bin"


def write_entry(path: Path, parsed: Parsed, expected: dict) -> None:
    """Write ``parsed`` as the entry ``path`` of fingerprint ``expected`` (atomically; a failed write is a
    :class:`~gcc_sgcl.fileio.WriteError` naming ``path``)."""
    graphs, arrays = parsed
    tensors = {key: torch.from_numpy(np.ascontiguousarray(value)) for key, value in arrays.items()}
    with atomic_target(path) as tmp:
        tmp.touch()  # a read-only or full cache fails here as an OSError, not as one of DGL's C++ errors
        try:
            dgl.save_graphs(str(tmp), graphs, tensors or None)
        except dgl.DGLError as error:  # e.g. "FileStream.Write incomplete" on a full disk, with a C++ stack
            raise OSError(f"DGL: {_first_line(error)}") from None
        size = tmp.stat().st_size
        trailer = json.dumps({"fingerprint": expected, "bytes": size, "sha256": sha256_of(tmp)}).encode()
        with open(tmp, "ab") as f:
            f.write(trailer + _TAIL.pack(len(trailer), _MAGIC))


def read_entry(path: Path, expected: dict) -> Parsed:
    """The graphs and arrays of the entry ``path``, checked to be complete and of fingerprint ``expected``; a
    :class:`DamagedEntryError` otherwise."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        if size < _TAIL.size:
            raise DamagedEntryError(f"{size} bytes, shorter than its trailer")
        f.seek(size - _TAIL.size)
        length, magic = _TAIL.unpack(f.read(_TAIL.size))
        if magic != _MAGIC or length > size - _TAIL.size:
            raise DamagedEntryError("no trailer at its end: truncated, or not written by this code")
        f.seek(size - _TAIL.size - length)
        try:
            trailer = json.loads(f.read(length))
        except ValueError:
            raise DamagedEntryError("its trailer is not readable JSON") from None
        if not isinstance(trailer, dict) or trailer.get("fingerprint") != expected:
            raise DamagedEntryError("built from other source files")
        graphs_size = size - _TAIL.size - length
        if trailer.get("bytes") != graphs_size or trailer.get("sha256") != _head_sha256(f, graphs_size):
            raise DamagedEntryError("its graphs differ from the bytes written")
    try:
        graphs, tensors = dgl.load_graphs(str(path))
    except dgl.DGLError as error:
        raise DamagedEntryError(f"DGL: {_first_line(error)}") from None
    return graphs, {key: value.numpy() for key, value in tensors.items()}


def load_cached(name: str, sources: Sequence[Path], build: Callable[[], Parsed]) -> Parsed:
    """``build()``'s graphs and arrays, read from the cache when it holds an intact entry built from these very
    ``sources`` (else built, and written to the cache when it can be)."""
    expected = fingerprint(sources)
    path = cache_entry(name, expected)
    if path.exists():
        try:
            return read_entry(path, expected)
        except (DamagedEntryError, OSError) as damage:
            _notice(f"{path}: damaged parse-cache entry ({_first_line(damage)}); rebuilding it")
    parsed = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_entry(path, parsed, expected)
    except OSError as error:
        reason = getattr(error, "reason", None) or error.strerror or _first_line(error)
        _notice(f"{path}: cannot write the parse cache (${CACHE_ENV}={path.parent}: {reason}); going on without "
                f"caching {name}")
    return parsed


def _head_sha256(f, size: int) -> str:
    """sha256 of the first ``size`` bytes of the open file ``f``."""
    f.seek(0)
    digest, left = hashlib.sha256(), size
    while left > 0:
        block = f.read(min(_CHUNK, left))
        if not block:
            break
        digest.update(block)
        left -= len(block)
    return digest.hexdigest()


def _first_line(error: BaseException) -> str:
    """``error``'s first line, without the ``[hh:mm:ss] file.cc:line:`` prefix DGL's C++ errors start with."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return re.sub(r"^\[[\d:]+\] \S+:\d+: ", "", text)


def _notice(message: str) -> None:
    """One line on stderr: the cache is an optimisation, so its trouble never stops a load."""
    print(message, file=sys.stderr, flush=True)
