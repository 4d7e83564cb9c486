"""One process at a time per folder (a run's folder, an evaluation's fold cache): an exclusive ``flock`` on
``<folder>/.lock``, which holds the PID.

The kernel drops the lock when its holder exits, however it exits, so a lock file left by a killed run is
simply taken over by the next one.
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = ".lock"


class RunFolderLockedError(OSError):
    """Another live process holds the run folder's lock; the message names the folder and its PID."""


def _holder(fd: int) -> str:
    """The PID written in the lock file open as ``fd`` (``"unknown"`` while its holder is writing it)."""
    text = os.pread(fd, 64, 0).decode(errors="replace").strip()
    return text or "unknown"


@contextmanager
def run_folder_lock(folder: str | os.PathLike, user: str = "run",
                    advice: str = "choose another --run-name / --output-dir") -> Iterator[Path]:
    """Hold ``folder``'s lock for the block (the folder is created); yields the lock file's path.

    Raises :class:`RunFolderLockedError` at once, without waiting, when another process holds it; its message
    names the folder, the holder (``user``, e.g. "run") and its PID, and ends with ``advice``. The lock file is
    removed on release.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise RunFolderLockedError(
                f"{folder} is in use by another {user} (PID {holder}, lock file {path}); wait for it to end, or "
                f"{advice}"
            ) from None
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                break
        except FileNotFoundError:
            pass
        # the previous holder removed the file between our open and flock: lock the new one instead
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)
