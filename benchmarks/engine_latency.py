"""End-to-end latency of a running pipeline at a fixed input rate, measured with probes (engine benchmark).

Why it exists: the target is a p50 of at most 2 s from a change entering Kafka to its effect leaving the sink
topic, at 1K changes/s, with the state already holding the 1M keys. While kafka-python sends background changes
at `rate` per second (the same kind as the benchmark's change phase: users moved between accounts, 1 in 10
deleted; for the join, spread over the three topics; for the orders, half of them orders given another user and
amount), every `probe_ms` it sends a *probe* whose effect at the sink is recognisable, and a consumer thread
watches the sink topic from its end:

* user count: 512 probe users are inserted first (into accounts `probe-home-*`); probe n moves probe user
  `probe-user-{n % 512}` into a fresh account `probe-{n}`; its effect is sink key `probe-{n}` with userCount 1.
  A user is moved again only 102 s later: were it sooner, an engine that applies a micro-batch's changes of a
  key at once (streamshell) would never show the earlier account, and that probe would be lost;
* join: probe n inserts a fresh user `probe-{n}`; its effect is sink key `probe-{n}`;
* orders: as for the user count, and each probe user first gets one order `probe-order-{k}`, so a probe user's
  account has exactly one order: probe n's effect is sink key `probe-{n}` with orderCount 1.

Latency = when the consumer saw the sink record minus when the probe was sent (one clock, this process).
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field

from benchmarks.engine_data import KAFKA, KEY_PREFIXES

PROBE_USERS = 512  # a probe user is moved again after PROBE_USERS probes
COUNTS = {"count": "userCount", "orders": "orderCount"}  # pipelines whose probes move a probe user: the sink's count


@dataclass
class Latency:
    sent: int = 0  # messages sent to the input topics, probes included
    probes: int = 0
    seen: list[float] = field(default_factory=list)  # seconds, one per probe that arrived
    seconds: float = 0.0  # how long the rate was held

    def percentile(self, q: float) -> float | None:
        """Over every probe sent; one that never arrived counts as infinitely late (None: beyond the wait)."""
        if not self.probes:
            return None
        ordered = sorted(self.seen) + [float("inf")] * (self.probes - len(self.seen))
        value = ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
        return None if value == float("inf") else value

    def figures(self) -> dict:
        """What a benchmark reports of the phase."""
        return {"sent": self.sent, "probes": self.probes, "arrived": len(self.seen), "p50": self.percentile(0.5),
                "p99": self.percentile(0.99), "max": max(self.seen, default=None), "rate": self.sent / self.seconds}


class SinkWatcher:
    """Reads the sink topic from its current end on a thread; notes when each probe key first arrives."""

    def __init__(self, sink: str, pipeline: str):
        from kafka import KafkaConsumer, TopicPartition

        self.count = COUNTS.get(pipeline)  # the sink's field that a probe's effect has at 1, if any
        self.arrived: dict[str, float] = {}
        self.consumer = KafkaConsumer(bootstrap_servers=KAFKA, enable_auto_commit=False, fetch_max_wait_ms=50)
        parts = [TopicPartition(sink, p) for p in sorted(self.consumer.partitions_for_topic(sink) or ())]
        self.consumer.assign(parts)
        self.consumer.seek_to_end(*parts)
        for tp in parts:
            self.consumer.position(tp)  # resolve the end now, before any probe is sent
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="sink-watcher", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping.is_set():
            for records in self.consumer.poll(timeout_ms=50).values():
                now = time.time()
                for r in records:
                    key = r.key.decode() if r.key else ""
                    if not key.startswith("probe-") or r.value is None or key in self.arrived:
                        continue
                    if self.count and json.loads(r.value).get(self.count) != 1:
                        continue
                    self.arrived[key] = now

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.consumer.close()


def background_change(rng: random.Random, pipeline: str, topics: list[str], keys: int, accounts: int):
    """(topic, key, value or None) like the change phase's."""
    n = rng.randrange(keys)
    t = rng.randrange(len(topics)) if len(topics) > 1 else 0
    key = f"{KEY_PREFIXES[pipeline][t]}{n}"
    if rng.random() < 0.1:
        return topics[t], key, None
    if t == 0:
        value = {"uid": key, "accountId": f"a{rng.randrange(accounts)}", "fullName": "latency"}
    elif pipeline == "orders":
        value = {"oid": key, "uid": f"u{rng.randrange(keys)}", "amount": rng.randrange(1000)}
    elif t == 1:
        value = {"userUid": key, "favoriteColor": rng.choice(("red", "green", "blue"))}
    else:
        value = {"userUid": key, "favoriteCheese": rng.choice(("brie", "feta", "edam"))}
    return topics[t], key, value


def probe_setup(pipeline: str, topics: list[str]):
    """(topic, key, value) sent before the rate: the probe users (in accounts `probe-home-*`), an order each."""
    if pipeline not in COUNTS:
        return
    for k in range(PROBE_USERS):
        uid, oid = f"probe-user-{k}", f"probe-order-{k}"
        yield topics[0], uid, {"uid": uid, "accountId": f"probe-home-{k}", "fullName": "probe"}
        if pipeline == "orders":
            yield topics[1], oid, {"oid": oid, "uid": uid, "amount": 1}


def probe(pipeline: str, topics: list[str], n: int):
    if pipeline in COUNTS:
        uid = f"probe-user-{n % PROBE_USERS}"
        return topics[0], uid, {"uid": uid, "accountId": f"probe-{n}", "fullName": "probe"}
    return topics[0], f"probe-{n}", {"uid": f"probe-{n}", "accountId": "probe", "fullName": "probe"}


def measure(pipeline: str, topics: list[str], sink: str, keys: int, accounts: int, rate: int, seconds: float,
            probe_ms: int = 200, grace_s: float = 120.0) -> Latency:  # fmt: skip
    """Hold `rate` changes/s for `seconds` with a probe every `probe_ms`; then wait up to `grace_s` for probes."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=KAFKA, linger_ms=0, acks=1)
    watcher = SinkWatcher(sink, pipeline)
    rng = random.Random(42)
    result = Latency()
    sent_at: dict[str, float] = {}
    tick = 0.02
    started = time.time()
    next_probe = started
    try:
        for topic, key, value in probe_setup(pipeline, topics):  # before the first probe moves a probe user
            producer.send(topic, key=key.encode(), value=json.dumps(value).encode())
            result.sent += 1
        producer.flush()
        while (now := time.time()) - started < seconds:
            if now >= next_probe:
                topic, key, value = probe(pipeline, topics, result.probes)
                sent_at[f"probe-{result.probes}"] = time.time()
                producer.send(topic, key=key.encode(), value=json.dumps(value).encode())
                producer.flush()
                result.probes += 1
                result.sent += 1
                next_probe += probe_ms / 1000
            due = int((now - started) * rate) - result.sent
            for _ in range(max(0, due)):
                topic, key, value = background_change(rng, pipeline, topics, keys, accounts)
                producer.send(topic, key=key.encode(), value=json.dumps(value).encode() if value else None)
                result.sent += 1
            time.sleep(max(0.0, tick - (time.time() - now)))
        producer.flush()
        result.seconds = time.time() - started
        deadline = time.time() + grace_s
        while any(k not in watcher.arrived for k in sent_at) and time.time() < deadline:
            time.sleep(0.2)
    finally:
        watcher.close()
        producer.close()
    result.seen = [watcher.arrived[k] - t for k, t in sent_at.items() if k in watcher.arrived]
    return result
