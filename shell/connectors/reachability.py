"""A quick look at whether a broker answers before a query is started against it.

Spark's Kafka consumer and the Pulsar client both retry an unreachable broker for a long time without saying so,
and a user sees a query that shows nothing. One TCP connect per address, with a short timeout, turns that into
an immediate error that names the broker and the option to fix.
"""

from __future__ import annotations

import socket
from urllib.parse import urlparse

from shell.errors import ExecutionError

TIMEOUT_S = 2.0


def addresses(text: str, default_port: int) -> list[tuple[str, int]]:
    """'a:9092,b:9093' or 'pulsar://a:6650,b:6650' as (host, port) pairs."""
    found = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        parsed = urlparse(item if "://" in item else f"tcp://{item}")
        found.append((parsed.hostname or item, parsed.port or default_port))
    return found


def require_reachable(system: str, option: str, text: str, default_port: int) -> None:
    """Raise ExecutionError unless at least one of the addresses in `text` accepts a TCP connection."""
    problems = []
    for host, port in addresses(text, default_port):
        try:
            with socket.create_connection((host, port), timeout=TIMEOUT_S):
                return
        except OSError as exc:
            problems.append(f"{host}:{port} ({exc.strerror or exc})")
    raise ExecutionError(
        f"{system}: cannot reach " + ("; ".join(problems) if problems else repr(text)),
        hint=f"is the broker running? check '{option}' (scripts/services start starts local brokers)",
    )
