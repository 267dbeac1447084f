"""Running `streamshell gateway` as a user runs it, for the gateway's client, fuzz and benchmark tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on (?P<host>\S+):(?P<port>\d+) .*?(metrics at (?P<metrics>\S+))?$")


@dataclass
class Gateway:
    process: subprocess.Popen
    host: str
    port: int
    metrics_url: str | None
    home: Path
    log: Path

    def dsn(self, user: str = "tester", **extra: str) -> str:
        parts = {"host": self.host, "port": str(self.port), "user": user, "dbname": "streamshell", **extra}
        return " ".join(f"{k}={v}" for k, v in parts.items())

    def metrics(self) -> dict[str, float]:
        assert self.metrics_url is not None
        text = urllib.request.urlopen(self.metrics_url, timeout=10).read().decode()
        return {line.split()[0]: float(line.split()[1]) for line in text.splitlines() if line and not line.startswith("#")}

    def wait_for_metric(self, name: str, value: float, within: float = 120) -> dict[str, float]:
        """Poll until the metric has `value` (a deadline for a failing test, not a timing check)."""
        deadline = time.monotonic() + within
        while True:
            seen = self.metrics()
            if seen.get(name) == value or time.monotonic() > deadline:
                return seen
            time.sleep(0.2)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


def start_gateway(home: Path, *args: str, env: dict[str, str] | None = None, host: str = "127.0.0.1") -> Gateway:
    """`streamshell gateway --port 0` on `home`; returns once it says where it listens."""
    home.mkdir(parents=True, exist_ok=True)
    log = home / "gateway.err"
    process = subprocess.Popen(
        [sys.executable, "-m", "shell", "gateway", "--host", host, "--port", "0", "--catalog", str(home), *args],
        cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=log.open("w"), text=True,
    )
    line = process.stdout.readline()
    match = LISTENING.search(line.strip())
    if match is None:
        process.wait(timeout=30)
        raise RuntimeError(f"gateway did not start ({process.returncode}): {line!r} {log.read_text()[-2000:]}")
    return Gateway(process, match["host"], int(match["port"]), match["metrics"], home, log)


def non_loopback_address() -> str | None:
    """An IPv4 address of this machine other than loopback, if it has one."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this picks the interface a route would use
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address
