"""One process at a time per folder (a run's folder, an evaluation's fold cache): an exclusive ``flock`` on
``<folder>/.lock``, which holds the PID.

The kernel drops the lock when its holder exits, however it exits, so a lock file left by a killed run is
simply taken over by the next one. A process forked while the lock is held (data loader and CV workers) closes
its copy of the lock's descriptor at once: otherwise it would hold the lock too, and keep it after its parent was
killed.

The lock file is opened with ``O_NOFOLLOW`` (:func:`~gcc_sgcl.fileio.open_nofollow`): a symbolic link planted as
``.lock`` is refused with one line naming it, its target neither emptied nor written; on release the file is removed
only while it is still the one this process locked.
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gcc_sgcl.fileio import open_nofollow

LOCK_NAME = ".lock"
_HELD: set[int] = set()  # descriptors of the locks this process holds


def _close_inherited() -> None:
    """In a forked child: close the copies of the parent's lock descriptors (the parent keeps its lock)."""
    for fd in _HELD:
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD.clear()


os.register_at_fork(after_in_child=_close_inherited)


class RunFolderLockedError(OSError):
    """Another live process holds the folder's lock; the message names the folder and its PID."""


def _holder(fd: int) -> str:
    """The PID written in the lock file open as ``fd`` (``"unknown"`` while its holder is writing it)."""
    text = os.pread(fd, 64, 0).decode(errors="replace").strip()
    return text or "unknown"


@contextmanager
def run_folder_lock(folder: str | os.PathLike, user: str = "run",
                    advice: str = "choose another --run-name / --output-dir") -> Iterator[Path]:
    """Hold ``folder``'s lock for the block (the folder is created); yields the lock file's path.

    Raises :class:`RunFolderLockedError` at once, without waiting, when another process holds it; its message
    names the folder, the holder (``user``, e.g. "run") and its PID, and ends with ``advice``. A symbolic link (or
    another file that is not a regular one) at the lock file's place raises a
    :class:`~gcc_sgcl.fileio.LinkRefusedError` naming it. The lock file is removed on release, unless something
    else has taken its name meanwhile.
    """
    folder = Path(folder)
    path = folder / LOCK_NAME
    while True:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            fd = open_nofollow(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # a finishing holder removed the emptied folder after our mkdir
            continue
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
    _HELD.add(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        if fd in _HELD:  # else a forked child leaves the block: the lock and its file are the parent's
            _HELD.discard(fd)
            try:
                if os.path.samestat(os.lstat(path), os.fstat(fd)):  # still our file, not one (or a link) put there
                    path.unlink()
            except FileNotFoundError:
                pass
            os.close(fd)
