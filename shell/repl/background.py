"""Running a slow call off the main thread, so Ctrl-C never lands in the middle of a Spark call.

Why it exists: on a terminal, Ctrl-C raises KeyboardInterrupt in the main thread wherever it is; raised inside a
Py4J round trip it would leave Spark's gateway half-way through a command. So statements run on a worker thread
while the main thread waits (with a spinner when it takes a while). The first Ctrl-C asks the call to be undone
as soon as it returns (a SELECT that was starting is cancelled); a second one stops waiting, and whatever the call
returns later is cleaned up by `on_abandoned`.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Callable

from rich.console import Console

SPINNER_DELAY_SECONDS = 0.3


@dataclass
class Call:
    value: Any = None
    error: BaseException | None = None
    interrupted: bool = False  # Ctrl-C was pressed while it ran
    presses: int = 0
    abandoned: bool = False  # Ctrl-C was pressed twice: the caller stopped waiting


class Abandoned(Exception):
    """The user stopped waiting for a call (it goes on in the background and is cleaned up when it returns)."""


def run_patiently(
    fn: Callable[[], Any],
    console: Console,
    label: str,
    on_abandoned: Callable[[Any], None] | None = None,
    patience: int = 2,
) -> Call:
    """Run `fn` on a worker thread and wait for it; a spinner shows `label` after a short delay.

    The `patience`-th Ctrl-C stops waiting (raises Abandoned); the ones before only mark the call interrupted."""
    call = Call()
    done = threading.Event()
    lock = threading.Lock()

    def work() -> None:
        try:
            call.value = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            call.error = exc
        with lock:
            done.set()
            abandoned = call.abandoned
        if abandoned and on_abandoned is not None and call.error is None:
            try:
                on_abandoned(call.value)
            except Exception:  # noqa: BLE001 - nobody is left to tell
                pass

    threading.Thread(target=work, name="streamshell-statement", daemon=True).start()
    started = time.monotonic()
    status = None
    try:
        while True:
            try:
                if done.wait(0.05):
                    break
                if status is None and console.is_terminal and time.monotonic() - started > SPINNER_DELAY_SECONDS:
                    status = console.status(label, spinner="dots")
                    status.start()
            except KeyboardInterrupt:
                with lock:
                    if done.is_set():
                        break
                    presses = call.presses = call.presses + 1
                    call.interrupted = True
                    if presses >= patience:
                        call.abandoned = True
                        raise Abandoned() from None
                label = "Cancelling… (Ctrl-C again to stop waiting)"
                if status is not None:
                    status.update(label)
    finally:
        if status is not None:
            status.stop()
    return call


def wait_for_spark(runtime, console: Console) -> None:  # noqa: ANN001 - shell.engine.spark.SparkRuntime
    """Block until Spark is ready, with a spinner counting the seconds; Ctrl-C raises KeyboardInterrupt.

    A failed start raises its ExecutionError (from `runtime.get`)."""
    runtime.start()
    if runtime.started:
        return
    started = time.monotonic()
    status = console.status("Starting Spark…", spinner="dots") if console.is_terminal else None
    if status is not None:
        status.start()
    try:
        while True:
            try:
                runtime.get(timeout=0.1)
                return
            except FutureTimeout:
                if status is not None:
                    status.update(f"Starting Spark… {time.monotonic() - started:.0f} s (Ctrl-C to give up)")
    finally:
        if status is not None:
            status.stop()
