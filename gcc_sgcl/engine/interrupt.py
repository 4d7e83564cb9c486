"""Ctrl-C and SIGTERM during pre-training: the first one asks the loop to stop after the step in progress (the
loop then writes the checkpoint and exits with one line); a second one exits at once, leaving the last checkpoint
written (saves are atomic). DataLoader workers ignore SIGINT
(:func:`~gcc_sgcl.sampling.dataset.worker_init`): the terminal sends it to the whole process group, and the main
process ends them itself. Once the stop is under way, the command keeps that second-signal rule to its end
(:func:`stop_at_once_on_signals`), so a Ctrl-C in its last lines or in the interpreter's shutdown is no traceback."""
from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator

from gcc_sgcl.cli import stop_at_once_on_signals, stop_now as _stop_now

__all__ = ["StopRequest", "stop_at_once_on_signals", "stop_on_signals"]


class StopRequest:
    """Set by SIGINT / SIGTERM while :func:`stop_on_signals` is active."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __bool__(self) -> bool:
        return self.signal is not None

    def _handle(self, signum: int, _frame: object) -> None:
        if self.signal is not None:
            _stop_now(signum)
        self.signal = signum
        print(f"\n[gcc_sgcl] {signal.Signals(signum).name}: stopping after the current step to write the checkpoint "
              "(again to stop at once)", file=sys.stderr, flush=True)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """A :class:`StopRequest` set by SIGINT or SIGTERM inside the block (the previous handlers restored after it).
    Outside the main thread (where Python cannot install handlers) it is never set."""
    request = StopRequest()
    signals = (signal.SIGINT, signal.SIGTERM)
    try:
        previous = {s: signal.signal(s, request._handle) for s in signals}
    except ValueError:  # not the main thread
        yield request
        return
    try:
        yield request
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
