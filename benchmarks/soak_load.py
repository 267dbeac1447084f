"""The load of the night-long soak: one pipeline's changes held at a fixed rate, with probes, for as long as it runs.

Why it exists: benchmarks/engine_latency.py holds a rate for a fixed time and gives the latency over all of it; a
run of hours needs the latency of each minute (does it grow over the night?) while the load goes on, and several
pipelines fed at once, each on its own topics. This is the same load (engine_latency's background changes: users
moved between accounts, 1 in 10 deleted, for the join spread over its three topics; a probe every 200 ms whose
effect at the sink is recognisable, watched by engine_latency.SinkWatcher) on a thread of its own, with every
probe's send time kept, so that `window(a, b)` gives the latency of the probes sent between `a` and `b`.
"""

from __future__ import annotations

import bisect
import json
import random
import threading
import time

from benchmarks.engine_data import KAFKA
from benchmarks.engine_latency import SinkWatcher, background_change, probe, probe_setup


def percentile(ordered: list[float], q: float) -> float | None:
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else None


class Load:
    """`rate` changes/s (probes included) into `topics` from `start()` until `stop()`, a probe every `probe_ms`."""

    def __init__(self, pipeline: str, topics: list[str], sink: str, keys: int, accounts: int, rate: int,
                 probe_ms: int = 200, seed: int = 42):  # fmt: skip
        self.pipeline, self.topics, self.sink = pipeline, topics, sink
        self.keys, self.accounts, self.rate, self.probe_ms = keys, accounts, rate, probe_ms
        self.rng = random.Random(seed)
        self.sent = 0  # messages sent to the input topics, probes included
        self.probe_times: list[float] = []  # probe n's send time (epoch s), in order
        self.started = self.ended = 0.0
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"load-{pipeline}", daemon=True)
        self.closed = False

    def start(self) -> None:
        from kafka import KafkaProducer

        self.producer = KafkaProducer(bootstrap_servers=KAFKA, linger_ms=0, acks=1)
        self.watcher = SinkWatcher(self.sink, self.pipeline)
        for topic, key, value in probe_setup(self.pipeline, self.topics):  # before the first probe moves one
            self.producer.send(topic, key=key.encode(), value=json.dumps(value).encode())
            self.sent += 1
        self.producer.flush()
        self.started = time.time()
        self._thread.start()

    def _send(self, topic: str, key: str, value: dict | None) -> None:
        self.producer.send(topic, key=key.encode(), value=json.dumps(value).encode() if value is not None else None)
        self.sent += 1

    def _run(self) -> None:
        tick, next_probe, base = 0.02, self.started, self.sent
        try:
            while not self._stop.is_set():
                now = time.time()
                if now >= next_probe:
                    n = len(self.probe_times)
                    self.probe_times.append(time.time())
                    self._send(*probe(self.pipeline, self.topics, n))
                    self.producer.flush()
                    next_probe += self.probe_ms / 1000
                    if next_probe < now - 5:  # fell far behind (a stalled broker): probes resume from now
                        next_probe = now
                for _ in range(max(0, int((now - self.started) * self.rate) - (self.sent - base))):
                    self._send(*background_change(self.rng, self.pipeline, self.topics, self.keys, self.accounts))
                time.sleep(max(0.0, tick - (time.time() - now)))
            self.producer.flush()
        except Exception as exc:  # noqa: BLE001 - a dead load is reported, not raised on a thread no one joins
            self.error = f"{type(exc).__name__}: {exc}"
        self.ended = time.time()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def latencies(self, first: int, last: int, now: float) -> tuple[list[float], int]:
        """(latency of probes first..last-1, sorted; how many of them had not arrived: counted at their age now,
        a lower bound)."""
        arrived = self.watcher.arrived.copy()
        out, late = [], 0
        for n in range(first, last):
            sent = self.probe_times[n]
            seen = arrived.get(f"probe-{n}")
            if seen is None:
                late += 1
                out.append(now - sent)
            else:
                out.append(seen - sent)
        return sorted(out), late

    def window(self, since: float, until: float) -> dict:
        """Latency of the probes sent in [since, until) (epoch s), as known now."""
        times = self.probe_times[: len(self.probe_times)]  # a snapshot: the thread only appends
        first, last = bisect.bisect_left(times, since), bisect.bisect_left(times, until)
        ordered, late = self.latencies(first, last, time.time())
        return {"probes": last - first, "late": late, "p50_s": percentile(ordered, 0.5),
                "p99_s": percentile(ordered, 0.99), "max_s": ordered[-1] if ordered else None}  # fmt: skip

    def halt(self) -> None:
        """Stop sending."""
        self._stop.set()
        self._thread.join(60)

    def close(self) -> None:
        """Stop sending and let go of the topics (a producer still open would create a deleted topic again)."""
        self.halt()
        if not self.closed:
            self.closed = True
            self.watcher.close()
            self.producer.close(timeout=10)

    def stop(self, grace_s: float = 120.0) -> dict:
        """Stop sending; wait up to `grace_s` for the probes still on their way; the figures of the whole run."""
        self.halt()
        deadline = time.time() + grace_s
        while time.time() < deadline:
            arrived = self.watcher.arrived.copy()
            if all(f"probe-{n}" in arrived for n in range(len(self.probe_times))):
                break
            time.sleep(0.5)
        ordered, late = self.latencies(0, len(self.probe_times), time.time())
        self.close()
        seconds = (self.ended or time.time()) - self.started
        return {"sent": self.sent, "probes": len(self.probe_times), "arrived": len(ordered) - late,
                "p50_s": percentile(ordered, 0.5), "p99_s": percentile(ordered, 0.99),
                "max_s": ordered[-1] if ordered else None, "rate": self.sent / seconds if seconds > 0 else None,
                "seconds": seconds, "error": self.error}  # fmt: skip
