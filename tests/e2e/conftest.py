"""The real brokers for end-to-end tests: started once per test session, never mocked.

Why this exists: e2e tests need a Kafka and a Pulsar broker.  The `brokers` fixture runs
`scripts/services start --started-file ...`, so brokers that were already running (a developer's
own `scripts/services start`) are reused and left running, and at the end of the session it stops
only the brokers that this session started.  Ports follow the same STREAMSHELL_* overrides as
scripts/services.

Under pytest-xdist (`make test` runs these tiers on two workers) the workers share the brokers: who started what
and how many sessions use them is kept in a file of the run's shared temporary folder, under a lock, and the last
session out stops what was started (tests/e2e/shared_brokers.py).  They stay up while the run lasts: a test that
stops a broker stops one of its own (tests/e2e/own_brokers.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.shared_brokers import Brokers, services_in_use
from tests.postgres import postgres  # noqa: F401 - the fixture, for the jdbc connector's tests

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "scripts" / "services"


def _port(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


def _services_dir() -> Path:
    cache = Path(os.environ.get("STREAMSHELL_CACHE") or Path.home() / ".cache" / "streamshell")
    return Path(os.environ.get("STREAMSHELL_SERVICES_DIR") or cache / "services")


def broker_diagnosis(lines: int = 12) -> str:
    """The brokers' status, the free space on their disk and the last ERROR lines of their logs: what a failed
    broker test needs to be read."""
    status = subprocess.run([str(SERVICES), "status"], cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True,
                            text=True, timeout=60)
    out = [f"scripts/services status: {' / '.join((status.stdout + status.stderr).split(chr(10))).strip(' /')}"]
    if _services_dir().exists():
        disk = shutil.disk_usage(_services_dir())
        out.append(f"disk of {_services_dir()}: {disk.free / 2**30:.1f} GiB free of {disk.total / 2**30:.1f} GiB")
    for log in sorted(_services_dir().glob("*/*.log")):
        errors = [line[:300] for line in log.read_text(errors="replace").splitlines() if " ERROR " in line]
        out.append(f"{log}: {len(errors)} ERROR lines" + ("; the last ones:" if errors else ""))
        out.extend(errors[-lines:])
    return "\n".join(out)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test that used the brokers reports their state too (CI shows nothing else of them)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and "brokers" in getattr(item, "fixturenames", ()):
        try:
            report.sections.append(("broker diagnosis", broker_diagnosis()))
        except Exception as error:  # noqa: BLE001 - a diagnosis must never hide the failure itself
            report.sections.append(("broker diagnosis", f"unavailable: {error}"))


@pytest.fixture(scope="session")
def brokers(tmp_path_factory) -> Brokers:
    with services_in_use(tmp_path_factory):
        yield Brokers(
            kafka_bootstrap=f"127.0.0.1:{_port('STREAMSHELL_KAFKA_PORT', 9092)}",
            pulsar_service_url=f"pulsar://127.0.0.1:{_port('STREAMSHELL_PULSAR_PORT', 6650)}",
            pulsar_admin_url=f"http://127.0.0.1:{_port('STREAMSHELL_PULSAR_HTTP_PORT', 8080)}",
        )
