"""What every command-line entry point shares: known errors end as one line naming the file or flag, and
checks of arguments done before any data is loaded (imports nothing from the package).

One name, one idea at 2 layers: :mod:`gcc_sgcl.cli` (what every command shares), :mod:`gcc_sgcl.bench.cli` (the
benchmarks' command).
"""
from __future__ import annotations

import atexit
import os
import re
import signal
import sys
import threading
import traceback
import warnings
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from gcc_sgcl.settings import OneLineParser

DEBUG_ENV = "GCC_SGCL_DEBUG"
"""Set to ``1`` to see the full traceback of an error a command would report in one line."""

INTERRUPTED_EXIT = 130
"""The exit status of a command stopped by Ctrl-C (the shell's for SIGINT)."""

TERMINATED_EXIT = 143
"""The exit status of a command stopped by SIGTERM (128 + 15, the shell's convention)."""


def stop_exit(signum: int) -> int:
    """The exit status of a command stopped by the signal ``signum``: 128 + its number (130 for Ctrl-C, 143 for
    SIGTERM).

    >>> stop_exit(signal.SIGINT), stop_exit(signal.SIGTERM)
    (130, 143)
    """
    return 128 + int(signum)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a ``kill``, a batch system's stop), raised in the main thread where Ctrl-C raises
    ``KeyboardInterrupt``: a command stops on it exactly as on Ctrl-C, and exits with :data:`TERMINATED_EXIT`."""


def _terminate(_signum: int, _frame: object) -> None:
    raise Terminated


def stop_now(signum: int, _frame: object = None) -> None:
    """A second stop signal: one line, and the process ends at once with :func:`stop_exit`'s status (every output goes
    through a temporary file, so nothing is left half-written; a pre-training keeps its last checkpoint)."""
    print(f"\n[gcc_sgcl] {signal.Signals(signum).name} again: stopping now; the last checkpoint written is kept",
          file=sys.stderr, flush=True)
    os._exit(stop_exit(signum))


def stop_at_once_on_signals() -> dict:
    """From now on, SIGINT and SIGTERM end this process at once with one line (:func:`stop_now`), for a command
    ending after a stop request: a signal in its last lines would otherwise raise ``KeyboardInterrupt`` and print a
    traceback. Returns the previous handlers (to restore); a no-op outside the main thread."""
    try:
        return {signum: signal.signal(signum, stop_now) for signum in STOP_SIGNALS}
    except ValueError:  # not the main thread
        return {}


def _ignore_stop_signals() -> None:
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def _stopped_worker_pipe(kind: type, tb: object) -> bool:
    """Whether an error is the broken pipe of multiprocessing's fd-sharing thread: a DataLoader worker ended by a
    stop while a batch's shared memory was on its way (nothing is lost; the command is stopping). That thread
    reports it through ``sys.excepthook`` as a traceback after the command's one line."""
    frames = traceback.extract_tb(tb) if tb is not None else []
    return issubclass(kind, (BrokenPipeError, ConnectionResetError)) and any(
        "multiprocessing" in frame.filename for frame in frames)


def _interrupted_loader(unraisable: object) -> bool:
    """Whether an unraisable error is torch's DataLoader iterator cleaning up after a Ctrl-C that came while it was
    being made: its ``__del__`` reads attributes its ``__init__`` never set (``'_MultiProcessingDataLoaderIter' object
    has no attribute '_shutdown'``), printed as "Exception ignored ..." after the command's one line."""
    frames = traceback.extract_tb(getattr(unraisable, "exc_traceback", None))
    return (issubclass(getattr(unraisable, "exc_type", type(None)), AttributeError)
            and any(frame.filename.endswith(os.path.join("utils", "data", "dataloader.py")) for frame in frames))


def quiet_stopped_workers() -> tuple:
    """Make ``sys.excepthook`` and ``threading.excepthook`` drop :func:`_stopped_worker_pipe` errors, and
    ``sys.unraisablehook`` :func:`_interrupted_loader` ones (every other error is reported as before); returns the
    previous hooks, to restore."""
    system, threads, unraisable = sys.excepthook, threading.excepthook, sys.unraisablehook

    def system_hook(kind: type, value: BaseException, tb: object) -> None:
        if not _stopped_worker_pipe(kind, tb):
            system(kind, value, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if not _stopped_worker_pipe(args.exc_type, args.exc_traceback):
            threads(args)

    def unraisable_hook(args: object) -> None:
        if not _interrupted_loader(args):
            unraisable(args)

    sys.excepthook, threading.excepthook, sys.unraisablehook = system_hook, thread_hook, unraisable_hook
    return system, threads, unraisable


def exit_after_stop(status: int) -> NoReturn:
    """End a command that has reported its stop with ``status``; once the interpreter shuts down, further Ctrl-C and
    SIGTERM are ignored (its shutdown resets Python's handlers and would meet them with the default action, status
    -2). Registered with ``atexit``, so a caller that catches the ``SystemExit`` (a test) keeps its handlers."""
    if threading.current_thread() is threading.main_thread():
        atexit.register(_ignore_stop_signals)
    raise SystemExit(status)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Ctrl-C and a ``kill``: the main process of a command handles them; the processes it forks ignore them."""


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold :data:`STOP_SIGNALS` back (block them) in this thread inside the block, to fork workers in it.

    A forked process starts with its parent's signal mask, so a Ctrl-C that reaches a worker after the fork and
    before its initializer ignores it waits instead of raising ``KeyboardInterrupt`` mid-start (a traceback after
    the command's one line); the worker's initializer calls :func:`ignore_signals`. One that reaches this process
    inside the block is delivered when the block ends.

    >>> held = lambda: signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    >>> before = held()
    >>> with signals_held():
    ...     held()
    True
    >>> held() == before
    True
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def ignore_signals(signals: tuple[int, ...] = STOP_SIGNALS) -> None:
    """In a worker forked inside :func:`signals_held`: ignore ``signals`` (one held back since the fork is
    dropped), then let :data:`STOP_SIGNALS` through again."""
    for signum in signals:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


# Errors a user can cause with inputs, files and flags; the messages raised in the package name the file or
# flag. Anything else is a bug and keeps its traceback.
USER_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile)


_ROLES = re.compile(r":(?:class|func|meth|mod|data|attr|exc):`~?([^`]+)`")


def plain_text(text: str) -> str:
    """Docstring markup as plain text for ``--help``: roles become their last name part, literals lose their quotes.

    >>> plain_text("Embed with :meth:`~gcc_sgcl.api.Encoder.embed_nodes` (``--copies 2``); see :mod:`gcc_sgcl.tasks`.")
    'Embed with embed_nodes (--copies 2); see gcc_sgcl.tasks.'
    """
    text = _ROLES.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if "~" in m.group(0) else m.group(1), text)
    return text.replace("``", "")


class PlainHelpParser(OneLineParser):
    """An ArgumentParser whose ``--help`` is plain text (:func:`plain_text`): descriptions and help strings may be
    the docstrings' reStructuredText; its errors are one line (:class:`~gcc_sgcl.settings.OneLineParser`)."""

    def format_help(self) -> str:
        return plain_text(super().format_help())


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
    ``error: <message>`` on stderr and exit code 1; Ctrl-C, and SIGTERM (raised as :class:`Terminated` inside the
    block), end it with one line and exit code 130 or 143, without a traceback (unless ``$GCC_SGCL_DEBUG=1``);
    warnings print as one line (:func:`one_line_warning`)."""
    if os.environ.get(DEBUG_ENV, "") in ("", "0"):
        warnings.formatwarning = one_line_warning
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread: Python runs handlers there only
        previous = None
    hooks, stopping = quiet_stopped_workers(), False
    try:
        yield
    except USER_ERRORS as error:
        close_progress_bars()
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            raise
        raise SystemExit(f"error: {one_line(error)}") from None
    except KeyboardInterrupt as stop:
        stopping = True  # the quiet hooks stay until the exit: workers' pipes may still break meanwhile
        handlers = stop_at_once_on_signals()  # a second Ctrl-C while this one is reported ends at once
        try:
            close_progress_bars()
            if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
                raise
            term = isinstance(stop, Terminated)
            print(f"\n{'terminated (SIGTERM)' if term else 'interrupted'}: nothing half-written (every output goes "
                  "through a temporary file); run the same command again to go on (pre-training and generate resume "
                  "where they stopped)", file=sys.stderr)
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
        exit_after_stop(TERMINATED_EXIT if term else INTERRUPTED_EXIT)
    finally:
        if not stopping:
            sys.excepthook, threading.excepthook, sys.unraisablehook = hooks
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def close_progress_bars() -> None:
    """End every open tqdm bar, so that an error printed next is the last line (a bar left open is redrawn over
    it, or closed after it at exit)."""
    tqdm_module = sys.modules.get("tqdm.std")  # no import: a command that drew no bar has none to close
    if tqdm_module is not None:
        for bar in list(tqdm_module.tqdm._instances):
            bar.close()


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
