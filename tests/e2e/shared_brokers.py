"""The scripts/services brokers shared by every pytest-xdist worker of a run: started once, stopped by the last user.

Why this exists: `make test` runs the broker tiers on two workers, each its own pytest session, and both the
`brokers` fixture (tests/e2e/conftest.py) and the Kafka-only `kafka_broker` (tests/e2e/kafka_topics.py) start what
is not running and stop what they started. Two sessions doing that alone would start a broker twice or stop it
under the other's feet, so who started what and how many use it is kept in a file of the run's shared temporary
folder, under a lock. These brokers are never stopped while the run lasts: a test that stops a broker stops one of
its own (tests/e2e/own_brokers.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import uuid
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Brokers:
    kafka_bootstrap: str
    pulsar_service_url: str
    pulsar_admin_url: str


@contextlib.contextmanager
def services_in_use(tmp_path_factory, *names: str):
    """Start the scripts/services brokers `names` (all when none are named) unless they run, for as long as the
    block lasts; the last user in this run (over every xdist worker) stops the ones the run started."""
    shared = shared_folder(tmp_path_factory)
    ledger = shared / "services-in-use.json"

    def read() -> dict:
        return json.loads(ledger.read_text()) if ledger.exists() else {"users": 0, "started": []}

    with locked(shared / "services.lock"):
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
