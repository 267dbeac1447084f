"""The real brokers for end-to-end tests: started once per test session, never mocked.

Why this exists: e2e tests need a Kafka and a Pulsar broker.  The `brokers` fixture runs
`scripts/services start --started-file ...`, so brokers that were already running (a developer's
own `scripts/services start`) are reused and left running, and at the end of the session it stops
only the brokers that this session started.  Ports follow the same STREAMSHELL_* overrides as
scripts/services.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "scripts" / "services"


def _port(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


@dataclass(frozen=True)
class Brokers:
    kafka_bootstrap: str
    pulsar_service_url: str
    pulsar_admin_url: str


@pytest.fixture(scope="session")
def brokers(tmp_path_factory) -> Brokers:
    started_file = tmp_path_factory.mktemp("services") / "started"
    proc = subprocess.run(
        [str(SERVICES), "start", "--started-file", str(started_file)],
        cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    started = started_file.read_text().split() if started_file.exists() else []
    if proc.returncode != 0:
        if started:  # do not leave behind what this failed call did start
            subprocess.run([str(SERVICES), "stop", *started], cwd=ROOT, capture_output=True)
        pytest.fail(f"scripts/services start failed: {(proc.stderr or proc.stdout).strip()}",
                    pytrace=False)
    try:
        yield Brokers(
            kafka_bootstrap=f"127.0.0.1:{_port('STREAMSHELL_KAFKA_PORT', 9092)}",
            pulsar_service_url=f"pulsar://127.0.0.1:{_port('STREAMSHELL_PULSAR_PORT', 6650)}",
            pulsar_admin_url=f"http://127.0.0.1:{_port('STREAMSHELL_PULSAR_HTTP_PORT', 8080)}",
        )
    finally:
        if started:
            subprocess.run([str(SERVICES), "stop", *started], cwd=ROOT, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=180)
