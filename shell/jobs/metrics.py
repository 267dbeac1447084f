"""A running job's metrics in Prometheus' text format, served by its job process on a loopback port.

A job that outlives the shell must be watchable from outside it (Prometheus, curl, an alert). The job process
looks at its queries' progress reports about once a second (`observe`): Spark keeps the last ones of each query
(`recentProgress`), so every micro-batch is counted once, by its batch id, even when several complete between two
looks. Bad records are the rows of the job's dead-letter side queries. Nothing here runs per row: a look reads a
few small progress reports on the driver.

    streamshell_job_up, _input_rows_total, _batches_total, _bad_records_total, _late_rows_total, _restarts_total,
    _input_rows_per_second, _processed_rows_per_second, _batch_duration_seconds, _state_rows, _state_bytes,
    _watermark_lag_seconds

each labelled with the job's id and name. SHOW JOBS' rates come from the same reports.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from shell.engine.progress_reports import ProgressReader
from shell.jobs.record import ALIVE

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _reports(reader: ProgressReader, query: Any) -> list[dict]:
    """A query's progress reports not looked at before, as dicts."""
    try:
        return reader.unread(query)
    except Exception:  # noqa: BLE001 - a query that is ending; looked at again next time
        return []


class JobMetrics:
    def __init__(self, job_id: str, name: str):
        self.labels = f'job_id="{_escape(job_id)}",name="{_escape(name)}"'
        self.seen: dict[tuple[int, str], set[tuple]] = {}  # (query's place, run id) -> (batch id, time) counted
        self.totals = {"input_rows": 0, "batches": 0, "bad_records": 0, "late_rows": 0}
        self.gauges = {"input_rows_per_second": 0.0, "processed_rows_per_second": 0.0, "batch_duration_seconds": 0.0,
                       "state_rows": 0, "state_bytes": 0, "watermark_lag_seconds": 0.0}  # fmt: skip
        self.restarts = 0
        self.up = 0
        self._lock = threading.Lock()
        self._reader = ProgressReader()

    def observe(self, job: Any) -> list[tuple[int, dict]]:
        """Count the batches completed since the last look, and take the latest gauges (`job`: a Job or JobSet).
        The reports of those batches, each with its part's place in the job (0 for a single INSERT)."""
        parts = getattr(job, "parts", [job])
        new: list[tuple[int, dict]] = []
        with self._lock:
            gauges = dict.fromkeys(self.gauges, 0)
            for place, part in enumerate(parts):
                for report in _reports(self._reader, part.query):
                    if self._first_time(place, report) and _executed(report):
                        new.append((place, report))
                        self.totals["input_rows"] += int(report.get("numInputRows") or 0)
                        self.totals["batches"] += 1
                        operators = report.get("stateOperators") or []
                        self.totals["late_rows"] += sum(int(o.get("numRowsDroppedByWatermark", 0)) for o in operators)
                for side in getattr(part, "side_queries", []):
                    for report in _reports(self._reader, getattr(side, "query", None) or side):
                        if self._first_time(1000 + place, report):
                            self.totals["bad_records"] += int(report.get("numInputRows") or 0)
                latest = self._reader.last_read(part.query)  # the newest of the reports just read
                if latest is not None:
                    _add_gauges(gauges, latest)
            self.gauges = gauges
            self.restarts = job.restarts
            self.up = 1 if job.status in ALIVE else 0
        return new

    def _first_time(self, place: int, report: dict) -> bool:
        """Whether this look is the first to see `report`. A report is told by its batch id and time: while no
        input arrives Spark reports the idle trigger under the id the next batch will have, so an id alone would
        hide that batch."""
        key = (place, str(report.get("runId")))
        batch = report.get("batchId")
        seen = self.seen.setdefault(key, set())
        ident = (batch, report.get("timestamp"))
        if batch is None or ident in seen:
            return False
        seen.add(ident)
        if len(seen) > 1000:  # Spark keeps about a hundred reports; the oldest are never offered again
            for old in sorted(seen, key=lambda ident: (ident[0], str(ident[1])))[:500]:
                seen.discard(old)
        return True

    def text(self) -> str:
        with self._lock:
            lines = []
            metric = lambda name, kind, value: lines.extend(  # noqa: E731
                [f"# TYPE streamshell_job_{name} {kind}", f"streamshell_job_{name}{{{self.labels}}} {value}"])
            metric("up", "gauge", self.up)
            for name, value in self.totals.items():
                metric(f"{name}_total", "counter", value)
            metric("restarts_total", "counter", self.restarts)
            for name, value in self.gauges.items():
                metric(name, "gauge", value)
            return "\n".join(lines) + "\n"


def _executed(report: dict) -> bool:
    """Whether a report is of a micro-batch that ran (with input, or to move the watermark), not of an idle trigger
    that only looked for input."""
    return "addBatch" in (report.get("durationMs") or {})


def _add_gauges(gauges: dict, report: dict) -> None:
    operators = report.get("stateOperators") or []
    gauges["input_rows_per_second"] += float(report.get("inputRowsPerSecond") or 0.0)
    gauges["processed_rows_per_second"] += float(report.get("processedRowsPerSecond") or 0.0)
    duration = int((report.get("durationMs") or {}).get("triggerExecution", 0)) / 1000
    gauges["batch_duration_seconds"] = max(gauges["batch_duration_seconds"], duration)
    gauges["state_rows"] += sum(int(o.get("numRowsTotal", 0)) for o in operators)
    gauges["state_bytes"] += sum(int(o.get("memoryUsedBytes", 0)) for o in operators)
    watermark = (report.get("eventTime") or {}).get("watermark")
    if watermark:
        try:
            moment = datetime.fromisoformat(watermark.replace("Z", "+00:00"))
        except ValueError:
            return
        if moment.timestamp() > 0:
            lag = max(0.0, time.time() - moment.timestamp())
            gauges["watermark_lag_seconds"] = max(gauges["watermark_lag_seconds"], round(lag, 3))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def serve(metrics: JobMetrics, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Serve `metrics` at http://host:port/metrics on a daemon thread; the server and its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server name
            if self.path.split("?")[0] not in ("/metrics", "/"):
                self.send_error(404, "metrics are at /metrics")
                return
            body = metrics.text().encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:  # scrapes are not news
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}/metrics"
