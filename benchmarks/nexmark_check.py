"""The Nexmark benchmark's check: every run's sink against the other engines' results, after the runs.

Why it exists: a throughput figure of a job whose output is wrong is not a result. benchmarks/nexmark.py runs
each query in several engines, several times, each run into a Kafka topic of its own; this reads every such
topic to its end (plain Python, after all runs, never on an engine's path) and compares their final rows the way
the differential compares a case (differential/cases.py):

* an append-only result (a `kafka` sink) is the multiset of its rows;
* an upsert result (an `upsert-kafka` sink keyed by the case's key) is the latest row per key, a tombstone
  (a key without a value) taking the key's row away;
* rows are normalized as the differential normalizes them (numbers, timestamps), and a column an engine left out
  of its JSON is NULL.

Per query, every run is compared with the reference: Flink's first run when Flink ran the query, else the first
engine's. A query that only one engine ran cannot be compared and is not checked (unless the query is q12).
q12 groups by processing-time windows, so which windows close before a bounded input ends depends on the wall
clock (docs/differential.md); its runs are checked against the input instead: every row a 10 s window of one
bidder, and each bidder's counts together at most its bids in the input.

    .venv/bin/python -m benchmarks.nexmark_check --query qN --reference TOPIC --sink TOPIC [--events FILE]

compares one sink topic with a reference topic as a run's check does (q12: `--events`, the run's input file), and
prints the verdict as JSON; exit 1 when they differ.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.nexmark_queries import WALL_CLOCK, columns, key
from differential.cases import normalize_row, row_text

EXAMPLES = 5


@dataclass
class Verdict:
    ok: bool
    rows: int
    against: str  # what the run was compared with
    differences: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"ok": self.ok, "rows": self.rows, "against": self.against, "differences": self.differences}


def final_rows(messages: list[tuple[str | None, str | None]], query: str) -> Counter[str]:
    """A sink topic's messages as its final rows (canonical JSON texts, counted)."""
    cols, k = columns(query), key(query)

    def row(value: dict) -> str:
        return row_text(normalize_row({c: value.get(c) for c in cols}))

    if not k:
        return Counter(row(json.loads(v)) for _, v in messages if v is not None)
    latest: dict[str, str | None] = {}
    for message_key, value in messages:
        if value is not None:
            parsed = json.loads(value)
            latest[row_text(normalize_row({c: parsed.get(c) for c in k}))] = row(parsed)
        elif message_key is not None:
            parsed = json.loads(message_key)
            latest[row_text(normalize_row({c: parsed.get(c) for c in k}))] = None
    return Counter(r for r in latest.values() if r is not None)


def read_topic(topic: str, bootstrap: str, stall_s: float = 120) -> list[tuple[str | None, str | None]]:
    """Every (key, value) of a topic, each partition in offset order; an error only when reading stalls for
    `stall_s` (a sink of a million rows takes minutes through kafka-python on a busy machine)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, max_poll_records=20_000,
                             max_partition_fetch_bytes=16 * 2**20, fetch_max_bytes=64 * 2**20)  # fmt: skip
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        ends = consumer.end_offsets(parts)
        out: list[tuple[str | None, str | None]] = []
        progress = time.monotonic()
        while any(consumer.position(tp) < ends[tp] for tp in parts):
            if time.monotonic() - progress > stall_s:
                raise TimeoutError(f"reading {topic}: nothing new for {stall_s:.0f} s")
            for records in consumer.poll(timeout_ms=500).values():
                progress = time.monotonic()
                out.extend((r.key.decode() if r.key is not None else None,
                            r.value.decode() if r.value is not None else None) for r in records)  # fmt: skip
        return out
    finally:
        consumer.close()


def differences(expected: Counter[str], actual: Counter[str], names: tuple[str, str]) -> list[str]:
    """What differs between two results, a few rows of each side; empty when they are equal."""
    if expected == actual:
        return []
    missing, extra = expected - actual, actual - expected
    lines = [f"{names[0]} has {sum(expected.values())} row(s), {names[1]} {sum(actual.values())}; "
             f"{sum(missing.values())} of {names[0]}'s are not in {names[1]}'s, "
             f"{sum(extra.values())} of {names[1]}'s are not in {names[0]}'s"]  # fmt: skip
    lines += [f"- {r}" for r in sorted(missing)[:EXAMPLES]]
    lines += [f"+ {r}" for r in sorted(extra)[:EXAMPLES]]
    return lines


def bidder_bids(events_file: Path) -> Counter[int]:
    """Bids per bidder in the input."""
    out: Counter[int] = Counter()
    with events_file.open(encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            if event["event_type"] == 2:
                out[event["bid"]["bidder"]] += 1
    return out


def within_input(rows: Counter[str], bids: Counter[int]) -> list[str]:
    """q12's rows against the input (see the module docstring); the problems found."""
    problems, counted = [], Counter()
    for text in rows:
        r = json.loads(text)
        start, end = (dt.datetime.strptime(r[c], "%Y-%m-%d %H:%M:%S.%f") for c in ("starttime", "endtime"))
        if end - start != dt.timedelta(seconds=10) or start.timestamp() % 10:
            problems.append(f"not a 10 s window: {text}")
        counted[r["bidder"]] += r["bid_count"]
    problems += [f"bidder {b}: {n} bids counted, {bids[b]} in the input" for b, n in counted.items() if n > bids[b]]
    return problems[:EXAMPLES]


def check(runs: list[dict], read, events_file: Path) -> dict[str, Verdict]:  # noqa: ANN001 - read(topic) -> messages
    """A verdict for every run (`{"id", "engine", "query", "run", "sink"}`), by its id."""
    verdicts: dict[str, Verdict] = {}
    by_query: dict[str, list[dict]] = {}
    for r in runs:
        by_query.setdefault(r["query"], []).append(r)
    bids: Counter[int] | None = None
    for query, group in by_query.items():
        if query in WALL_CLOCK:
            bids = bid_counts = bids if bids is not None else bidder_bids(events_file)
            for r in group:
                rows = final_rows(read(r["sink"]), query)
                problems = within_input(rows, bid_counts)
                verdicts[r["id"]] = Verdict(not problems, sum(rows.values()), "the input (processing time)", problems)
            continue
        engines = sorted({r["engine"] for r in group})
        if len(engines) < 2:
            for r in group:
                verdicts[r["id"]] = Verdict(False, 0, "nothing", [f"{query}: only {engines[0]} ran it: nothing to compare with"])
            continue
        reference = next((r for r in group if r["engine"] == "flink"), group[0])
        expected = final_rows(read(reference["sink"]), query)
        name = f"{reference['engine']} run {reference['run']}"
        for r in group:
            others = ", ".join(e for e in engines if e != r["engine"])
            if r is reference:
                verdicts[r["id"]] = Verdict(True, sum(expected.values()), others)
                continue
            actual = final_rows(read(r["sink"]), query)
            diff = differences(expected, actual, (name, f"{r['engine']} run {r['run']}"))
            verdicts[r["id"]] = Verdict(not diff, sum(actual.values()), others, diff)
        if not expected and all(v.rows == 0 for i, v in verdicts.items() if i in {r["id"] for r in group}):
            for r in group:  # equal, but nothing was compared
                verdicts[r["id"]].against += " (no rows)"
    return verdicts


def main(argv: list[str] | None = None) -> int:
    from benchmarks.engine_data import KAFKA

    parser = argparse.ArgumentParser(description="compare a Nexmark sink topic with a reference topic")
    parser.add_argument("--query", required=True)
    parser.add_argument("--reference", required=True, help="the topic the sink is compared with")
    parser.add_argument("--sink", required=True)
    parser.add_argument("--events", type=Path, help="the input's JSON-lines file (q12)")
    args = parser.parse_args(argv)
    runs = [{"id": "reference", "engine": "flink", "query": args.query, "run": 1, "sink": args.reference},
            {"id": "sink", "engine": "sink", "query": args.query, "run": 1, "sink": args.sink}]  # fmt: skip
    verdict = check(runs, lambda topic: read_topic(topic, KAFKA), args.events or Path("/dev/null"))["sink"]
    print(json.dumps(verdict.as_dict()))
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
