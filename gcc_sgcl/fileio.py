"""Writing files so that readers only ever see complete ones, never through a symbolic link, and hashing their
bytes (imports nothing from the package, so every layer can use it).

Every file the package writes into a run or output folder goes through one of three doors: :func:`atomic_target`
(a temporary file, created with ``O_EXCL | O_NOFOLLOW``, renamed onto the name), :func:`open_nofollow` (lock files
and the appended ``results.csv``: opened with ``O_NOFOLLOW``) or :func:`refuse_link` (a check before writing in place).
A symbolic link planted where a file is to be written (a shared folder, an unpacked archive) is refused by each with
a one-line :class:`LinkRefusedError` naming it and what it points to; the link and its target are left as they were.
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where an array is read, not with the package
    import numpy as np

_CHUNK = 1 << 20
# What a failed write of an output looks like: a full disk or quota, a file too large, a read-only or forbidden
# folder, an I/O error; ``None``: numpy's "76160 requested and 56288 written" carries no errno. A missing folder
# (ENOENT) is left as it is: callers rely on FileNotFoundError (a cache folder removed meanwhile).
_WRITE_FAILURES = {None, errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}


class WriteError(OSError):
    """An output could not be written (a full disk, a read-only folder, ...): the message names the file and says
    that nothing was left under its name (an earlier version of it stays as it was); ``reason`` is the cause alone
    (``"No space left on device"``), for messages that name the file themselves."""

    def __init__(self, target: str | os.PathLike, reason: str, code: int | None = None) -> None:
        super().__init__(f"{target}: cannot write it ({reason}); nothing was written under that name")
        self.target, self.errno, self.reason = target, code, reason

    def __reduce__(self) -> tuple:
        # raised in a forked worker (a CV fold's save), it is pickled back to the parent
        return type(self), (self.target, self.reason, self.errno)


class LinkRefusedError(OSError):
    """A symbolic link (or another file that is not a regular one) stands where the package would write a file: it
    is refused, not written through; the message names it and what it points to, on one line.

    >>> print(LinkRefusedError("run/.lock", "/home/u/notes"))
    refused: run/.lock is a symbolic link (to /home/u/notes); the package never writes through a link: remove it
    """

    def __init__(self, path: str | os.PathLike, to: str | None = None, what: str = "a symbolic link") -> None:
        if to is None and what == "a symbolic link":
            try:
                to = os.readlink(path)
            except OSError:
                to = "?"
        aim = f" (to {to})" if to is not None else ""
        advice = "never writes through a link" if what == "a symbolic link" else "writes regular files only"
        super().__init__(f"refused: {path} is {what}{aim}; the package {advice}: remove it")
        self.link, self.to, self.what = path, to, what

    def __reduce__(self) -> tuple:
        # raised in a forked worker (a CV fold's save), it is pickled back to the parent
        return type(self), (self.link, self.to, self.what)


def refuse_link(path: str | os.PathLike) -> Path:
    """``path``, unless a symbolic link stands there (dangling or not): then a :class:`LinkRefusedError` naming it.
    Writers that write in place (not through :func:`atomic_target` or :func:`open_nofollow`) call it first.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()); (folder / "a").symlink_to("/nowhere")
    >>> refuse_link(folder / "b") == folder / "b"
    True
    >>> refuse_link(folder / "a")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    gcc_sgcl.fileio.LinkRefusedError: refused: .../a is a symbolic link (to /nowhere); the package never writes ...
    """
    if os.path.islink(path):
        raise LinkRefusedError(path)
    return Path(path)


def open_nofollow(path: str | os.PathLike, flags: int, mode: int = 0o666) -> int:
    """``os.open(path, flags | O_NOFOLLOW, mode)`` of a regular file, for files written in place (a lock file, an
    appended log): a symbolic link at ``path`` (the kernel refuses to follow it) or a file that is not a regular one
    (a FIFO, a device) raises a :class:`LinkRefusedError` naming it, and nothing is opened or created."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise LinkRefusedError(path) from None
        raise
    kind = stat.S_IFMT(os.fstat(fd).st_mode)
    if kind != stat.S_IFREG:
        os.close(fd)
        raise LinkRefusedError(path, None, "not a regular file")
    return fd


def write_failure(target: str | os.PathLike, error: BaseException) -> WriteError | None:
    """The :class:`WriteError` naming ``target`` that ``error`` stands for when it is a failed write (an
    ``OSError`` of :data:`_WRITE_FAILURES`, or an error raised while handling one, as torch's ``RuntimeError:
    [enforce fail at inline_container.cc...]`` is); ``None`` for any other error (a :class:`LinkRefusedError`
    included: it is raised as it is).

    >>> print(write_failure("out.npy", OSError(errno.ENOSPC, "No space left on device")))
    out.npy: cannot write it (No space left on device); nothing was written under that name
    >>> write_failure("out.npy", FileNotFoundError(errno.ENOENT, "No such file or directory")) is None
    True
    """
    if isinstance(error, WriteError):
        return error
    cause = error if isinstance(error, OSError) else error.__context__
    if not isinstance(cause, OSError) or isinstance(cause, LinkRefusedError) or cause.errno not in _WRITE_FAILURES:
        return None
    reason = cause.strerror or str(cause).strip() or type(cause).__name__
    return WriteError(target, reason, cause.errno)


@contextmanager
def atomic_target(target: str | os.PathLike) -> Iterator[Path]:
    """A fresh sibling path to write ``target``'s new content to: synced to disk and renamed onto ``target``
    when the block succeeds, removed when it raises, so readers only ever see a complete file. The folder is
    synced after the rename (where the platform can open a folder), so the new name survives a power cut too.

    The temporary file is created empty, with ``O_EXCL | O_NOFOLLOW`` (never a file or link that was there), and
    the mode of the process's umask; the caller writes it (``open(tmp, "wb")``, ``torch.save``, ``np.save``, ...).
    A symbolic link at ``target`` (dangling or not) is refused before anything is written, and again before the
    rename: a :class:`LinkRefusedError` naming it, the link and what it points to left as they were. A kill
    mid-write can leave the temporary file behind: its name is ``.<target name>.<pid>-<random>.tmp``, removed by
    :func:`remove_stale_temporaries` once that process is gone. A failed write (a full disk, a read-only folder:
    :func:`write_failure`) raises a :class:`WriteError` naming ``target``, not the temporary file.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with atomic_target(folder / "a.txt") as tmp:
    ...     _ = tmp.write_text("done")
    >>> [p.name for p in folder.iterdir()], (folder / "a.txt").read_text()
    (['a.txt'], 'done')
    """
    target = refuse_link(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
    created = False
    try:
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666))
            created = True
            yield tmp
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            refuse_link(target)  # planted while the file was written
            os.replace(tmp, target)
        except Exception as error:
            failure = write_failure(target, error)
            if failure is None or failure is error:
                raise
            raise failure from error
        sync_folder(target.parent)
    finally:
        try:
            if created:
                tmp.unlink(missing_ok=True)
        except OSError:  # a read-only folder refuses even removing what is not there; the error above tells why
            pass


def sync_folder(folder: str | os.PathLike) -> None:
    """Sync ``folder``'s entries to disk, so that a file just created or renamed in it survives a power cut
    (a no-op where the platform cannot open a folder)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def copy_atomic(src: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Copy the file ``src`` onto ``target`` through :func:`atomic_target` (readers see the old or the whole new
    file, never part of it); returns ``target``.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a").write_text("new"), (folder / "b").write_text("old")
    >>> copy_atomic(folder / "a", folder / "b").read_text(), sorted(p.name for p in folder.iterdir())
    ('new', ['a', 'b'])
    """
    with atomic_target(target) as tmp:
        shutil.copyfile(src, tmp)
    return Path(target)


def remove_stale_temporaries(target: str | os.PathLike) -> list[Path]:
    """Remove the temporary files that interrupted atomic writes of ``target`` left in its folder (also those of
    earlier versions: ``.<name>.<random>.tmp`` and the ``<name><random>.tmp`` of ``tempfile.mkstemp``); returns
    them. A temporary file of another process still running on this machine is its write in progress, and
    stays; the calling process's own are stale (a killed run's PID is often reused, e.g. in containers)."""
    target = Path(target)
    name = re.escape(target.name)
    current = re.compile(rf"\.{name}\.(\d+)-[0-9a-f]{{32}}\.tmp")
    earlier = re.compile(rf"\.{name}\.[0-9a-f]+\.tmp|{name}\w+\.tmp")
    stale = []
    for tmp in sorted(target.parent.glob("*.tmp")):
        writer = current.fullmatch(tmp.name)
        if writer is None and earlier.fullmatch(tmp.name) is None:
            continue  # another file's
        if writer is not None and _running_elsewhere(int(writer.group(1))):
            continue  # a write in progress
        tmp.unlink(missing_ok=True)
        stale.append(tmp)
    return stale


def _running_elsewhere(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine and is not this process."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def marked_block(text: str, start: str, end: str, where: str | os.PathLike = "text") -> tuple[int, int]:
    """The span of the block from marker ``start`` to marker ``end`` (both included) in ``text``; a text without
    them is a ``ValueError`` naming ``where`` and the markers.

    >>> text = "a <!-- x --> old <!-- x end --> b"
    >>> i, j = marked_block(text, "<!-- x -->", "<!-- x end -->"); text[i:j]
    '<!-- x --> old <!-- x end -->'
    """
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{where}: no markers {start!r} ... {end!r}")
    return i, j + len(end)


def replace_marked_blocks(path: str | os.PathLike, blocks: dict[tuple[str, str], str]) -> Path:
    """Rewrite each block of the file at ``path`` between its (start, end) markers by the new block given for
    them (which carries the markers), through a temporary file; returns the path."""
    path = Path(path)
    text = path.read_text()
    for (start, end), block in blocks.items():
        i, j = marked_block(text, start, end, path)
        text = text[:i] + block + text[j:]
    with atomic_target(path) as tmp:
        tmp.write_text(text)
    return path


GCC_CHECKPOINT_NAMES = re.compile(r"current\.pth|ckpt_epoch_\d+\.pth")
"""The checkpoint file names of GCC's run folders (its README's ``<load_path>``): inside a run folder of this code
they name that run's checkpoint."""


def folder_of(load_path: str | os.PathLike) -> Path:
    """The folder a ``--load-path`` names: itself, or a checkpoint file's folder (where ``generate`` writes the
    embeddings, the tasks read them and log ``results.csv``), GCC's checkpoint names included.

    >>> folder_of("saved/run/current.pth").as_posix(), folder_of("saved/run").as_posix()
    ('saved/run', 'saved/run')
    """
    path = Path(load_path)
    gcc_name = not path.exists() and GCC_CHECKPOINT_NAMES.fullmatch(path.name)
    return path.parent if path.is_file() or gcc_name else path


def load_npy(path: str | os.PathLike) -> "np.ndarray":
    """``np.load`` of a ``.npy`` file whose header has first been checked against the file's size: a header
    declaring more data than the file holds (a forged or truncated file asking for terabytes) is a ``ValueError``
    naming the file before anything is allocated; object arrays (pickles) are refused.

    >>> import tempfile, numpy as np
    >>> path = Path(tempfile.mkdtemp()) / "rows.npy"; np.save(path, np.zeros((3, 2), np.float32))
    >>> load_npy(path).shape
    (3, 2)
    >>> _ = path.write_bytes(path.read_bytes().replace(b"(3, 2)", b"(9, 2)"))  # a header claiming more rows
    >>> load_npy(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...rows.npy: its header declares shape (9, 2) of float32 (72 bytes), but the file holds 24 bytes after it: truncated or forged
    """
    import numpy as np
    from numpy.lib import format as npy

    path = Path(path)
    with open(path, "rb") as f:
        try:
            version = npy.read_magic(f)
            read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
            shape, _, dtype = read(f)
        except ValueError as error:
            raise ValueError(f"{path}: not a .npy array ({error})") from None
        if dtype.hasobject:
            raise ValueError(f"{path}: an array of Python objects, refused (it would be unpickled)")
        declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
        held = os.fstat(f.fileno()).st_size - f.tell()
    if declared != held:
        raise ValueError(f"{path}: its header declares shape {shape} of {dtype} ({declared:,} bytes), but the file "
                         f"holds {held:,} bytes after it: truncated or forged")
    return np.load(path, allow_pickle=False)


def sha256_of(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()
