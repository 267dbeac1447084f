"""Keys typed while a live result is on screen, read without waiting: what table mode's navigation hears.

Why it exists: the live table redraws on the main thread between micro-batches, so it must hear Page Up or `/`
without blocking that loop, and without taking Ctrl-C away from the terminal driver: Ctrl-C stays a SIGINT and
stops the query exactly as it did before keys were read (shell/render/live.py's docstring says why that matters).
While a view reads keys the terminal is in cbreak mode (no echo, no line buffering, signals kept); `read()` takes
the bytes already waiting (a select with no timeout, never a blocking read) and decodes escape sequences with
prompt_toolkit's VT100 parser into the key names shell/render/navigation.py understands.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from typing import Iterator

ESCAPE_SECONDS = 0.05  # how long a lone Esc waits for the rest of a sequence when the caller would wait longer

# prompt_toolkit's key names -> ours; printable characters are themselves
NAMES = {
    "pageup": "pageup",
    "pagedown": "pagedown",
    "home": "home",
    "end": "end",
    "up": "up",
    "down": "down",
    "escape": "escape",
    "c-m": "enter",
    "c-j": "enter",
    "c-h": "backspace",  # Backspace sends DEL (0x7f) or ^H; the parser names both c-h
    "c-b": "pageup",  # less's and vi's page keys
    "c-f": "pagedown",
}


def key_names(presses) -> list[str]:  # noqa: ANN001 - prompt_toolkit KeyPress objects
    """Our names for parsed key presses; keys that mean nothing here are left out."""
    names = []
    for press in presses:
        key = getattr(press.key, "value", press.key)
        if key in NAMES:
            names.append(NAMES[key])
        elif isinstance(press.key, str) and len(press.key) == 1 and press.key.isprintable():
            names.append(press.key)
    return names


class KeyReader:
    """Decodes the bytes of a terminal's input into key names; `read()` never waits."""

    def __init__(self, fd: int):
        from prompt_toolkit.input.vt100_parser import Vt100Parser

        self.fd = fd
        self._presses: list = []
        self._parser = Vt100Parser(self._presses.append)
        self._pending = False  # bytes were fed that may be the start of an escape sequence

    def feed(self, data: str) -> list[str]:
        """The keys in `data` (a lone Esc waits for the next call, as it may begin a longer sequence)."""
        if data:
            self._parser.feed(data)
            self._pending = True
        elif self._pending:  # nothing came after it: a lone Esc is the Escape key
            self._parser.flush()
            self._pending = False
        presses, self._presses[:] = list(self._presses), []
        return key_names(presses)

    def read(self, wait: float = 0.0) -> list[str]:
        """The keys typed since the last call; waits up to `wait` seconds for one when none is waiting (0: never
        waits)."""
        data = b""
        timeout = min(wait, ESCAPE_SECONDS) if self._pending else wait
        try:
            while select.select([self.fd], [], [], timeout)[0]:
                timeout = 0
                chunk = os.read(self.fd, 1024)
                if not chunk:
                    break
                data += chunk
                if len(data) > 65536:  # a paste: enough for one redraw
                    break
        except (OSError, ValueError):
            return []
        return self.feed(data.decode("utf-8", "replace"))


@contextlib.contextmanager
def terminal_keys(enabled: bool = True) -> Iterator[KeyReader | None]:
    """A KeyReader on stdin in cbreak mode for the duration, or None when stdin is not a terminal (or `enabled` is
    false). The terminal's settings are restored at the end, also after Ctrl-C."""
    if not enabled:
        yield None
        return
    try:
        import termios

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    except (ImportError, OSError, ValueError, AttributeError):
        saved = None
    if saved is None:
        yield None
        return
    cbreak = list(saved)
    cbreak[3] = cbreak[3] & ~(termios.ICANON | termios.ECHO | termios.ECHOCTL)  # ISIG stays: Ctrl-C is SIGINT
    cbreak[6] = list(cbreak[6])
    cbreak[6][termios.VMIN] = 1
    cbreak[6][termios.VTIME] = 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, cbreak)
    except termios.error:
        yield None
        return
    try:
        yield KeyReader(fd)
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)
