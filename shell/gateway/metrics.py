"""The gateway's own metrics in Prometheus' text format (clients connected, statements running, rows sent) and its
health, on a loopback HTTP port.

Why it exists: a gateway that dashboards and services depend on must be watchable as the jobs are (each job
serves its metrics on a port of its own, shell/jobs/metrics.py, in the same text format), and a load balancer or
a supervisor needs a yes/no: `/health`.

    streamshell_gateway_connections, _connections_total, _queries_running, _queries_total, _rows_sent_total,
    _errors_total, _protocol_errors_total, _authentication_failures_total, _cancel_requests_total,
    _spark_queries (the streaming queries running in the gateway's Spark: its clients' SELECTs; 0 once they
    are cancelled or their clients are gone)
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from shell.jobs import metrics as job_metrics

GAUGES = ("connections", "queries_running")
HELP = {  # each metric's `# HELP` line, before its `# TYPE` line (Prometheus' text exposition format)
    "spark_queries": "Streaming queries running in the gateway's Spark (its clients' SELECTs).",
    "connections": "Clients connected now.",
    "queries_running": "Statements running now.",
    "connections_total": "Clients that have connected since the gateway started.",
    "queries_total": "Statements (and extended-protocol steps) run since the gateway started.",
    "rows_sent_total": "Result rows (and COPY lines) sent to clients.",
    "errors_total": "Statements that failed with an error sent to the client.",
    "protocol_errors_total": "Connections ended because the client broke the protocol (08P01).",
    "authentication_failures_total": "Connections refused for a wrong or missing password (28P01).",
    "cancel_requests_total": "Cancel requests received.",
}
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
            lines = [f"# HELP streamshell_gateway_spark_queries {HELP['spark_queries']}",
                     "# TYPE streamshell_gateway_spark_queries gauge", f"streamshell_gateway_spark_queries {spark_queries}"]
            for name in GAUGES + COUNTERS:
                lines += [f"# HELP streamshell_gateway_{name} {HELP[name]}",
                          f"# TYPE streamshell_gateway_{name} {'gauge' if name in GAUGES else 'counter'}",
                          f"streamshell_gateway_{name} {self.values[name]}"]
            return "\n".join(lines) + "\n"


def serve(metrics: GatewayMetrics, host: str, port: int, health: Callable[[], dict]) -> tuple[ThreadingHTTPServer, str]:
    """`/metrics` (Prometheus' text) and `/health` (JSON: 200 while the gateway serves and its Spark is up or
    starting, 503 once Spark failed to start) at http://host:port on a daemon thread; the server and its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server name
            path = self.path.split("?")[0]
            if path in ("/metrics", "/"):
                self._answer(200, metrics.text().encode(), job_metrics.CONTENT_TYPE)
            elif path == "/health":
                state = health()
                self._answer(200 if state.get("status") == "ok" else 503, json.dumps(state).encode(), "application/json")
            else:
                self.send_error(404, "metrics are at /metrics, health at /health")

        def _answer(self, code: int, body: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:  # scrapes are not news
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="gateway-metrics", daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}/metrics"
