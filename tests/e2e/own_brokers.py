"""Brokers of a test's own, on free ports, for the tests that stop one.

Why this exists: an outage test stops its broker with `scripts/services stop` for a while. Stopping the brokers that
every other test shares would make those tests wait for it (or fail), and under pytest-xdist the other worker's
tests run meanwhile; so a test that stops a broker starts its own (`scripts/services start` on free ports, with a
services folder of its own: a few seconds, from the same cached bundles) and stops only that one.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.shared_brokers import SERVICES, Brokers
from tests.e2e.cli import ROOT

PORT_VARIABLES = ("STREAMSHELL_KAFKA_PORT", "STREAMSHELL_KAFKA_CONTROLLER_PORT", "STREAMSHELL_PULSAR_PORT",
                  "STREAMSHELL_PULSAR_HTTP_PORT", "STREAMSHELL_PULSAR_BOOKIE_PORT")  # fmt: skip


@dataclass(frozen=True)
class OwnBrokers:
    """Where the brokers listen, and the environment under which scripts/services stops and starts them."""

    brokers: Brokers
    env: dict[str, str]

    def services(self, action: str, broker: str, attempts: int = 1) -> str:
        """Run `scripts/services ACTION BROKER` on these brokers; a start is tried again while the stopped broker
        lets go of its ports."""
        for attempt in range(1, attempts + 1):
            proc = subprocess.run([str(SERVICES), action, broker], cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=300)  # fmt: skip
            if proc.returncode == 0:
                return proc.stdout.strip()
            if attempt < attempts:
                time.sleep(10)
        pytest.fail(f"scripts/services {action} {broker} (own brokers) failed (exit {proc.returncode}): "
                    f"{(proc.stderr or proc.stdout).strip()}", pytrace=False)  # fmt: skip


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports free on the loopback now (the kernel's choice, held together so none repeats)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@contextlib.contextmanager
def own_brokers(folder: Path, *names: str) -> Iterator[OwnBrokers]:
    """Start the scripts/services brokers `names` (kafka, pulsar) on free ports with their data under `folder`, and
    stop them when the block ends."""
    ports = dict(zip(PORT_VARIABLES, free_ports(len(PORT_VARIABLES)), strict=True))
    env = {**os.environ, "STREAMSHELL_SERVICES_DIR": str(folder), **{k: str(v) for k, v in ports.items()}}
    own = OwnBrokers(Brokers(kafka_bootstrap=f"127.0.0.1:{ports['STREAMSHELL_KAFKA_PORT']}",
                             pulsar_service_url=f"pulsar://127.0.0.1:{ports['STREAMSHELL_PULSAR_PORT']}",
                             pulsar_admin_url=f"http://127.0.0.1:{ports['STREAMSHELL_PULSAR_HTTP_PORT']}"), env)  # fmt: skip
    try:
        for name in names:
            own.services("start", name)
        yield own
    finally:
        subprocess.run([str(SERVICES), "stop", *names], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=180)  # fmt: skip
