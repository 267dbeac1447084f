"""Keeping the terminal the shell's own while Spark runs underneath it.

Why it exists: the JVM and Spark's Python workers write straight to file descriptor 2 (JDK warnings, crash
reports), which would draw over the prompt and the live table. In the interactive shell, descriptor 2 is pointed
at `<home>/log/stderr.log` (inherited by the JVM when it starts), while Python's `sys.stderr` stays on the
terminal. The print connector writes through `CurrentStderr`, which follows `sys.stderr` as prompt-toolkit and
rich swap it, so job output appears above the prompt or the live table instead of through them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator



class CurrentStderr:
    """A text stream that writes to whatever `sys.stderr` is at the moment of writing."""

    def write(self, text: str) -> int:
        try:
            return sys.stderr.write(text)
        except (OSError, ValueError):
            return 0

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def keys_not_echoed() -> Iterator[None]:
    """While a statement runs, keys are not echoed (no `^C` or stray letters over the live table).

    Ctrl-C still interrupts; keys typed meanwhile wait for the next prompt, except while a live table shows: it reads
    them (shell/render/keys.py)."""
    try:
        import termios

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    except (ImportError, OSError, ValueError):
        saved = None
    if saved is None:
        yield
        return
    quiet = list(saved)
    quiet[3] = quiet[3] & ~(termios.ECHO | termios.ECHOCTL)
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except termios.error:
        pass
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def interrupt_with_ctrl_c() -> None:
    """Make Ctrl-C raise KeyboardInterrupt, even if the shell was started with SIGINT ignored.

    A process started in the background of a non-interactive shell (`cmd &`, nohup, some launchers) inherits
    SIGINT ignored, and Python then installs no handler of its own: Ctrl-C would neither cancel a query nor clear
    the input line. Once the shell runs on a terminal, Ctrl-C is the user's, as it is in an interactive bash."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
