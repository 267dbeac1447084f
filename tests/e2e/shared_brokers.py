"""The scripts/services brokers shared by every pytest-xdist worker of a run: started once, stopped by the last user.

Why this exists: `make test` runs the broker tiers on two workers, each its own pytest session, and both the
`brokers` fixture (tests/e2e/conftest.py) and the Kafka-only `kafka_broker` (tests/e2e/kafka_topics.py) start what
is not running and stop what they started. Two sessions doing that alone would start a broker twice or stop it
under the other's feet, so who started what and how many use it is kept in a file of the run's shared temporary
folder, under a lock. And since the outage tests stop a broker for a while, a test module holds a share of the
brokers while it runs (its module fixtures' jobs included) and an outage holds them alone: it waits for the other
worker's module to end, and that worker's next module waits for it (a turnstile keeps the outage from waiting
forever behind a stream of shares).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.e2e.cli import ROOT

SERVICES = ROOT / "scripts" / "services"


def shared_folder(tmp_path_factory) -> Path:
    """A folder every pytest-xdist worker of this run shares (without xdist: the run's own temporary folder)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def locked(path: Path, mode: int = fcntl.LOCK_EX):
    with open(path, "a+") as handle:
        fcntl.flock(handle, mode)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class _Share:
    """This process's share of the brokers: one shared flock on the run's lock file, counted so that it can be
    taken again inside itself, and dropped while this process holds the brokers alone."""

    folder: Path | None = None
    handle = None
    count = 0

    @classmethod
    def take(cls, folder: Path) -> None:
        cls.folder = folder
        if cls.count == 0:
            with locked(folder / "brokers-turnstile.lock"):  # waits while an outage waits for the brokers
                cls.handle = open(folder / "brokers-in-use.lock", "a+")
                fcntl.flock(cls.handle, fcntl.LOCK_SH)
        cls.count += 1

    @classmethod
    def give_back(cls) -> None:
        cls.count -= 1
        if cls.count == 0:
            cls.handle.close()  # closing the file lets go of its flock
            cls.handle = None


@contextlib.contextmanager
def sharing_brokers(tmp_path_factory):
    """Hold a share of the brokers: no other worker stops one meanwhile."""
    _Share.take(shared_folder(tmp_path_factory))
    try:
        yield
    finally:
        _Share.give_back()


@contextlib.contextmanager
def brokers_alone():
    """Hold the brokers alone while a test stops one: this process's own share is let go meanwhile, the other
    worker's modules that use the brokers end first, and its next ones wait."""
    folder = _Share.folder
    if folder is None:  # the brokers were not started through services_in_use: no other session shares them
        yield
        return
    if _Share.count:
        fcntl.flock(_Share.handle, fcntl.LOCK_UN)
    try:
        with locked(folder / "brokers-turnstile.lock"):
            alone = open(folder / "brokers-in-use.lock", "a+")
            fcntl.flock(alone, fcntl.LOCK_EX)
        try:
            yield
        finally:
            alone.close()
    finally:
        if _Share.count:
            fcntl.flock(_Share.handle, fcntl.LOCK_SH)


@contextlib.contextmanager
def services_in_use(tmp_path_factory, *names: str):
    """Start the scripts/services brokers `names` (all when none are named) unless they run, for as long as the
    block lasts; the last user in this run (over every xdist worker) stops the ones the run started."""
    shared = shared_folder(tmp_path_factory)
    ledger = shared / "services-in-use.json"

    def read() -> dict:
        return json.loads(ledger.read_text()) if ledger.exists() else {"users": 0, "started": []}

    with sharing_brokers(tmp_path_factory), locked(shared / "services.lock"):
        started_file = shared / f"started-{uuid.uuid4().hex}"
        proc = subprocess.run([str(SERVICES), "start", *names, "--started-file", str(started_file)], cwd=ROOT,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)  # fmt: skip
        started = started_file.read_text().split() if started_file.exists() else []
        if proc.returncode != 0:
            if started:  # do not leave behind what this failed call did start
                subprocess.run([str(SERVICES), "stop", *started], cwd=ROOT, capture_output=True)
            pytest.fail(f"scripts/services start failed: {(proc.stderr or proc.stdout).strip()}", pytrace=False)
        state = read()
        ledger.write_text(json.dumps({"users": state["users"] + 1,
                                      "started": sorted(set(state["started"]) | set(started))}))
    try:
        yield
    finally:
        with locked(shared / "services.lock"):
            state = read()
            users, started = state["users"] - 1, state["started"]
            if users == 0 and started:
                subprocess.run([str(SERVICES), "stop", *started], cwd=ROOT, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=180)  # fmt: skip
                started = []
            ledger.write_text(json.dumps({"users": users, "started": started}))
