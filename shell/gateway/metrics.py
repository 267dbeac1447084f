"""The gateway's own metrics in Prometheus' text format: clients connected, statements running, rows sent.

Why it exists: a gateway that dashboards and services depend on must be watchable as the jobs are (each job
serves its metrics on a port of its own, shell/jobs/metrics.py); the same small HTTP server serves these.

    streamshell_gateway_connections, _connections_total, _queries_running, _queries_total, _rows_sent_total,
    _errors_total, _protocol_errors_total, _authentication_failures_total, _cancel_requests_total,
    _spark_queries (the streaming queries running in the gateway's Spark: its clients' SELECTs; 0 once they
    are cancelled or their clients are gone)
"""

from __future__ import annotations

import threading
from typing import Callable
from http.server import ThreadingHTTPServer

from shell.jobs import metrics as job_metrics

GAUGES = ("connections", "queries_running")
COUNTERS = ("connections_total", "queries_total", "rows_sent_total", "errors_total", "protocol_errors_total",
            "authentication_failures_total", "cancel_requests_total")  # fmt: skip


class GatewayMetrics:
    def __init__(self, spark_queries: Callable[[], int] = lambda: 0) -> None:
        self.values = dict.fromkeys(GAUGES + COUNTERS, 0)
        self.spark_queries = spark_queries
        self._lock = threading.Lock()

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self.values[name] += amount

    def count(self, name: str) -> None:
        self.add(name, 1)

    def connected(self) -> None:
        with self._lock:
            self.values["connections"] += 1
            self.values["connections_total"] += 1

    def disconnected(self) -> None:
        self.add("connections", -1)

    def query_started(self) -> None:
        with self._lock:
            self.values["queries_running"] += 1
            self.values["queries_total"] += 1

    def query_ended(self) -> None:
        self.add("queries_running", -1)

    def text(self) -> str:
        try:
            spark_queries = self.spark_queries()
        except Exception:  # noqa: BLE001 - a Spark that is stopping: none
            spark_queries = 0
        with self._lock:
            lines = ["# TYPE streamshell_gateway_spark_queries gauge", f"streamshell_gateway_spark_queries {spark_queries}"]
            for name in GAUGES + COUNTERS:
                lines += [f"# TYPE streamshell_gateway_{name} {'gauge' if name in GAUGES else 'counter'}",
                          f"streamshell_gateway_{name} {self.values[name]}"]
            return "\n".join(lines) + "\n"


def serve(metrics: GatewayMetrics, host: str, port: int) -> tuple[ThreadingHTTPServer, str]:
    """At http://host:port/metrics on a daemon thread, by the jobs' own server."""
    return job_metrics.serve(metrics, host, port)  # type: ignore[arg-type] - it needs only .text()
