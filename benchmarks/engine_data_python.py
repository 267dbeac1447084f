"""The engine benchmark's input and result check for small runs, in Python: the same messages without a Spark.

Why it exists: benchmarks/engine_data.py writes and checks the data with Spark, which pays for itself at a million
messages but costs a Spark start (seconds of two busy cores) per phase and per check; the benchmark's small runs,
which `make test` executes, write a few thousand messages and start eight of those. Here the same rules make the
same messages: Spark's `xxhash64` is computed as Spark computes it (XXH64 of each column in turn, seed 42), so a
message `v` has the same topic, key and value whichever side wrote it (tests/spark/test_engine_data_python.py
compares them), and kafka-python sends them in `v` order. The check reads the topics with kafka-python and
recomputes the pipeline's result in dictionaries, as engine_data's Spark check does with DataFrames.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import datetime, timedelta

MASK = (1 << 64) - 1
PRIME1, PRIME2, PRIME3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
PRIME4, PRIME5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
SPARK_SEED = 42
SMALL = 50_000  # messages a phase may have to be written (or checked) here rather than by Spark


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & MASK


def _fmix(h: int) -> int:
    h ^= h >> 33
    h = (h * PRIME2) & MASK
    h ^= h >> 29
    h = (h * PRIME3) & MASK
    return h ^ (h >> 32)


def _hash_long(value: int, seed: int) -> int:
    h = (seed + PRIME5 + 8) & MASK
    h ^= (_rotl((value * PRIME2) & MASK, 31) * PRIME1) & MASK
    return _fmix((_rotl(h, 27) * PRIME1 + PRIME4) & MASK)


def _hash_int(value: int, seed: int) -> int:
    h = (seed + PRIME5 + 4) & MASK
    h ^= ((value & 0xFFFFFFFF) * PRIME1) & MASK
    return _fmix((_rotl(h, 23) * PRIME2 + PRIME3) & MASK)


def xxhash64(value: int, salt: int | None = None) -> int:
    """Spark's `xxhash64(value)` of a BIGINT, or `xxhash64(value, salt)` with an INT literal beside it (signed)."""
    h = _hash_long(value, SPARK_SEED)
    if salt is not None:
        h = _hash_int(salt, h)
    return h - (1 << 64) if h >> 63 else h


def pmod(value: int, divisor: int) -> int:
    return value % divisor  # Python's % of a positive divisor is Spark's pmod


def change_rows(pipeline: str, phase: str, keys: int, changes: int, accounts: int, topics: list[str], tasks: int):
    """(v, topic, key, value) of one phase, value None for a tombstone: engine_data.change_rows' rows, in v order."""
    from benchmarks.engine_data import CHEESES, COLORS, KEY_PREFIXES

    def value(v: int, t: int, key: str) -> str:
        if t == 0:  # users (every pipeline's first topic)
            row = {"uid": key, "accountId": f"a{pmod(xxhash64(v, 14), accounts)}", "fullName": f"name-{v}"}
        elif pipeline == "join" and t == 1:
            row = {"userUid": key, "favoriteColor": COLORS[pmod(xxhash64(v, 16), 12)]}
        elif pipeline == "join":
            row = {"userUid": key, "favoriteCheese": CHEESES[pmod(xxhash64(v, 17), 12)]}
        else:  # orders
            row = {"oid": key, "uid": f"u{pmod(xxhash64(v, 18), keys)}", "amount": pmod(xxhash64(v, 19), 1000)}
        return json.dumps(row, separators=(",", ":"))

    prefixes = KEY_PREFIXES[pipeline]
    if phase == "preload":
        for v in range(keys):
            for t in range(len(topics)):
                key = f"{prefixes[t]}{v}"
                yield v, topics[t], key, value(v, t, key)
        return
    # Spark's range(keys, keys + changes, 1, tasks) gives task p the p-th contiguous slice of the range
    bounds = [keys + changes * p // tasks for p in range(tasks + 1)]
    for p in range(tasks):
        for v in range(bounds[p], bounds[p + 1]):
            n = tasks * pmod(xxhash64(v, 12), keys // tasks) + p
            t = pmod(xxhash64(v, 15), len(topics))
            key = f"{prefixes[t]}{n}"
            gone = pmod(xxhash64(v, 13), 10) == 0
            yield v, topics[t], key, None if gone else value(v, t, key)


def order_rows(rows: int):
    """engine_data.orders' (key, value) rows: id, price, qty 0..9, ts 1 ms apart from 2026-01-01."""
    start = datetime(2026, 1, 1)
    for i in range(rows):
        ts = (start + timedelta(milliseconds=i)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        cents = (i % 1000) * 10 + 100  # Spark's DECIMAL: (i % 1000) / 10.0 + 1 rounded to 2 places, as 1.00
        yield str(i), (f'{{"id":{i},"price":{cents // 100}.{cents % 100:02d},"qty":{pmod(xxhash64(i), 10)},'
                       f'"ts":"{ts}"}}')  # fmt: skip


def send(messages, bootstrap: str) -> int:
    """Send (topic, key, value) messages in order (one producer, so a key's messages keep their order)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, batch_size=512 * 1024, acks="all",
                             max_in_flight_requests_per_connection=1)  # fmt: skip
    sent = 0
    try:
        for topic, key, value in messages:
            producer.send(topic, key=key.encode(), value=None if value is None else value.encode())
            sent += 1
        producer.flush()
    finally:
        producer.close()
    return sent


def produce(args, bootstrap: str, tasks: int) -> dict:
    topics = args.topics.split(",")
    rows = change_rows(args.pipeline, args.phase, args.keys, args.changes, args.accounts, topics, tasks)
    started = time.time()
    sent = send(((topic, key, value) for _, topic, key, value in rows), bootstrap)
    return {"writing": started, "done": time.time(), "rows": sent}


def orders(args, bootstrap: str) -> dict:
    started = time.time()
    sent = send(((args.topic, key, value) for key, value in order_rows(args.rows)), bootstrap)
    return {"writing": started, "done": time.time(), "rows": sent}


# ---- checking a sink -------------------------------------------------------------------------------------------


def messages(topic: str, bootstrap: str) -> list[tuple[str, str | None]]:
    """Every (key, value) of a topic, each partition in offset order."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        ends = consumer.end_offsets(parts)
        out: list[tuple[str, str | None]] = []
        deadline = time.monotonic() + 120
        while any(consumer.position(tp) < ends[tp] for tp in parts):
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic} took over 120 s")
            for records in consumer.poll(timeout_ms=500).values():
                out.extend((r.key.decode() if r.key is not None else None,
                            r.value.decode() if r.value is not None else None) for r in records)  # fmt: skip
        return out
    finally:
        consumer.close()


def latest(topic: str, bootstrap: str) -> dict[str, dict]:
    """The rows a topic holds at its end: the latest message per key, parsed, deletes gone."""
    last: dict[str, str | None] = {}
    for key, value in messages(topic, bootstrap):
        last[key] = value
    return {k: json.loads(v) for k, v in last.items() if v is not None}


def _text(value) -> str | None:
    """A JSON field as Spark's get_json_object gives it: None stays None, a number its JSON text."""
    return None if value is None else value if isinstance(value, str) else json.dumps(value)


def verify(args, bootstrap: str) -> dict:
    inputs = args.inputs.split(",")
    sink = latest(args.sink, bootstrap)
    if args.pipeline in ("count", "count-messages", "orders"):
        field = "orderCount" if args.pipeline == "orders" else "userCount"
        actual = {k: _text(v.get(field)) for k, v in sink.items()}
        if args.pipeline == "count-messages":
            accounts = [json.loads(v).get("accountId") for _, v in messages(inputs[0], bootstrap) if v is not None]
        else:
            users = {k: v.get("accountId") for k, v in latest(inputs[0], bootstrap).items()}
            if args.pipeline == "orders":
                order_users = [v.get("uid") for v in latest(inputs[1], bootstrap).values()]
                accounts = [users[uid] for uid in order_users if uid in users]
            else:
                accounts = list(users.values())
        expected = {str(k): str(n) for k, n in Counter(accounts).items() if k is not None}
    else:
        users = latest(inputs[0], bootstrap)
        colors, cheeses = latest(inputs[1], bootstrap), latest(inputs[2], bootstrap)
        expected = {k: [u.get("accountId"), k, colors.get(k, {}).get("favoriteColor"),
                        cheeses.get(k, {}).get("favoriteCheese")] for k, u in users.items()}  # fmt: skip
        actual = {k: [_text(v.get(f)) for f in ("accountId", "userUid", "favoriteColor", "favoriteCheese")]
                  for k, v in sink.items()}  # fmt: skip
    wrong = sorted(k for k in expected.keys() | actual.keys() if expected.get(k) != actual.get(k))
    return {
        "ok": not wrong,
        "expected_rows": len(expected),
        "sink_rows": len(actual),
        "mismatches": len(wrong),
        "examples": [{"k": k, "expected": expected.get(k), "actual": actual.get(k)} for k in wrong[:5]],
    }
