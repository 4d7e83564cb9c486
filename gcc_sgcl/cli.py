"""What every command-line entry point shares: known errors end as one line naming the file or flag, and
checks of arguments done before any data is loaded (imports nothing from the package)."""
from __future__ import annotations

import os
import re
import warnings
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DEBUG_ENV = "GCC_SGCL_DEBUG"
"""Set to ``1`` to see the full traceback of an error a command would report in one line."""

# Errors a user can cause with inputs, files and flags; the messages raised in the package name the file or
# flag. Anything else is a bug and keeps its traceback.
USER_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile)


def one_line(error: BaseException) -> str:
    """The message of ``error`` on one line: line breaks of a multi-line message become ``"; "``.

    >>> one_line(ValueError("config differs:\\n  a: 1 vs 2\\n  b: 3 vs 4"))
    'config differs: a: 1 vs 2; b: 3 vs 4'
    """
    text = re.sub(r"\s*\n\s*", "; ", str(error).strip()).replace(":; ", ": ")
    return text or type(error).__name__


def one_line_warning(message: Warning | str, category: type[Warning], *_: object, **__: object) -> str:
    """A warning as ``warning: <message>`` on one line (Python's default adds the file, line and source line)."""
    return f"warning: {one_line(message if isinstance(message, Warning) else Warning(message))}\n"


@contextmanager
def user_errors() -> Iterator[None]:
    """Wrap the body of a command's ``main()``: a known error (:data:`USER_ERRORS`) ends the program with
    ``error: <message>`` on stderr and exit code 1, without a traceback (unless ``$GCC_SGCL_DEBUG=1``); warnings
    print as one line (:func:`one_line_warning`)."""
    if os.environ.get(DEBUG_ENV, "") in ("", "0"):
        warnings.formatwarning = one_line_warning
    try:
        yield
    except USER_ERRORS as error:
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            raise
        raise SystemExit(f"error: {one_line(error)}") from None


def check_num_workers(value: int, flag: str = "--num-workers") -> None:
    """Raise ``ValueError`` naming ``flag`` unless ``value`` is a valid DataLoader worker count (>= 0)."""
    if value < 0:
        raise ValueError(f"{flag} must be >= 0 (0 = build batches in the main process), got {value}")


def check_writable_dir(path: str | os.PathLike, flag: str, create: bool = False) -> Path:
    """``path`` as a folder this process can write to (created first with ``create``), else an error naming
    ``flag`` and ``path``."""
    path = Path(path)
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"{flag} {path}: cannot create the folder ({error.strerror})") from None
    if not path.is_dir():
        raise ValueError(f"{flag} {path}: no such folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: the folder is not writable")
    return path
