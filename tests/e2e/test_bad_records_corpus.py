"""A 1,000-message corpus of good and bad records through Kafka and Pulsar tables, against the real brokers.

Why it exists: a topic can hold anything, and the promise of `errors.mode` = 'dead-letter' (the default) is that
a bad record never stops the query and never gets lost, while every good record is processed exactly once.
Small hand-written cases (test_kafka_connector.py) show the mechanism; this corpus proves the promise at scale
and across every kind of bad input we know of, interleaved at random with good records:

* bad (kept aside, with the reason the json format gives): malformed JSON (truncated, not an object, `TRUE`),
  wrong types ("id": "abc", 7.5, 99999999999 or true for INT; "yes", 1 or "maybe" for BOOLEAN), missing fields
  with 'json.fail-on-missing-field' = 'true', binary garbage, empty values, null values (tombstones, which an
  append table cannot hold), and 1 MB values that do not decode;
* good, by the formats' rules (shell/formats/json.py, raw.py): an object or a number for a STRING column (its
  JSON text, as in Flink), an INT written as a string ("42"), explicit nulls, unknown extra keys, empty and null
  keys (the raw key format reads them as '' and NULL), and 1 MB values that do decode.

Kafka: a bounded table (`'scan.bounded.mode' = 'latest-offset'`) read by an INSERT job into a second topic, which
must finish normally. Pulsar (unbounded): the same corpus through an INSERT job into a second topic, which must
keep running. Both: the second topic holds every good record exactly once (same ids, same content), and
SHOW ERRORS lists exactly the bad records, at the positions they were produced at, with the expected reasons.
On Pulsar an empty payload is read like a null one (a tombstone) and an empty partition key is no key at all, so
those records are expected as such there (`for_pulsar`).
"""

from __future__ import annotations

import base64
import json
import logging
import random
import time
import uuid
from dataclasses import dataclass

import pytest

from shell.connectors.topic import NULL_VALUE_ERROR
from shell.jobs.registry import FINISHED, RUNNING
from shell.results import JobStarted, Rows
from tests.spark.helpers import run, wait_for

QUIET = logging.getLogger("tests.pulsar")
QUIET.setLevel(logging.CRITICAL)

SIZE = 1000
BIG = 1_000_000  # bytes of a "1 MB" value: under Kafka's default message.max.bytes (1,048,588) with its framing
SEED = 20261121
JOB_TIMEOUT = 300


@dataclass(frozen=True)
class Record:
    """One produced message and what must become of it: a row (`row`) or a dead letter (`reason`)."""

    index: int
    kind: str
    key: str | None  # None: no key at all
    value: bytes | None  # None: a null value (tombstone)
    row: tuple | None = None  # (id, k, name, ok) for a good record
    reason: str | None = None  # a substring of the error SHOW ERRORS must give

    @property
    def good(self) -> bool:
        return self.row is not None


def _json(**fields) -> bytes:
    return json.dumps(fields).encode()


def _padded(prefix: str, suffix: str, size: int = BIG) -> bytes:
    """`prefix` + 'x' * n + `suffix`, exactly `size` bytes."""
    return (prefix + "x" * (size - len(prefix) - len(suffix)) + suffix).encode()


def _good(i: int, rng: random.Random, key: str | None, k: str | None) -> Record:
    ok = i % 2 == 0
    variant = rng.randrange(6)
    if variant == 0:  # an object for a STRING column is its JSON text (Flink does the same)
        value, name = _json(id=i, name={"x": i, "y": [1, 2]}, ok=ok), json.dumps({"x": i, "y": [1, 2]}, separators=(",", ":"))
    elif variant == 1:  # a number for a STRING column, an INT written as a string
        value, name = _json(id=str(i), name=i, ok=ok), str(i)
    elif variant == 2:  # explicit nulls are present fields (fail-on-missing-field does not mind)
        value, name, ok = _json(id=i, name=None, ok=None), None, None
    elif variant == 3:  # keys the table does not have are ignored
        value, name = _json(id=i, extra=[1, {"z": None}], name=f"n{i}", ok=ok), f"n{i}"
    else:
        value, name = _json(id=i, name=f"name-{i}", ok=ok), f"name-{i}"
    return Record(i, "good", key, value, row=(i, k, name, ok))


def _bad(i: int, kind: str, rng: random.Random) -> tuple[bytes | None, str]:
    """The value and the expected reason of a bad record of `kind`."""
    if kind == "malformed":
        value = rng.choice(
            [b'{"id": %d, "name": "cut' % i, b"{not json %d" % i, b"[%d]" % i, b'"%d"' % i, b"null",
             b'{"id": %d, "name": "x", "ok": TRUE}' % i, b'{"id": %d, "name": "x", "ok": true' % i]
        )  # fmt: skip
        return value, "malformed JSON"
    if kind == "wrong-int":
        bad = rng.choice(["abc", 7.5, 99_999_999_999, True, [i], {"v": i}])
        return _json(id=bad, name="x", ok=True), "field 'id': expected INT"
    if kind == "wrong-boolean":
        return _json(id=i, name="x", ok=rng.choice(["yes", 1, "maybe", [True]])), "field 'ok': expected BOOLEAN"
    if kind == "missing":
        field = rng.choice(["id", "name", "ok"])
        fields = {"id": i, "name": "x", "ok": True}
        del fields[field]
        return _json(**fields), f"missing field '{field}'"
    if kind == "garbage":
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        return rng.choice([b"\x00", b"\xff", b"\x89PNG"]) + body, "malformed JSON"
    if kind == "empty":
        return b"", "empty record"  # Pulsar reads an empty payload as a null value: see `for_pulsar`
    if kind == "null":
        return None, NULL_VALUE_ERROR
    if kind == "big-malformed":
        return _padded('{"id": %d, "name": "' % i, ""), "malformed JSON"  # the string never ends
    if kind == "big-wrong-type":
        return _padded('{"id": "abc", "ok": true, "name": "', '"}'), "field 'id': expected INT"
    raise AssertionError(kind)


BAD_KINDS = {
    "malformed": 40, "wrong-int": 30, "wrong-boolean": 30, "missing": 30, "garbage": 30, "empty": 20, "null": 20,
    "big-malformed": 1, "big-wrong-type": 1,
}  # fmt: skip
BIG_GOOD = 2


def corpus() -> list[Record]:
    """SIZE records, bad ones at random positions (same every run), each with a unique id = its index."""
    rng = random.Random(SEED)
    kinds = [k for kind, n in BAD_KINDS.items() for k in [kind] * n] + ["big-good"] * BIG_GOOD
    kinds += ["good"] * (SIZE - len(kinds))
    rng.shuffle(kinds)
    records = []
    for i, kind in enumerate(kinds):
        roll = rng.random()
        key, k = ("", "") if roll < 0.05 else (None, None) if roll < 0.10 else (f"k{i}", f"k{i}")
        if kind == "good":
            records.append(_good(i, rng, key, k))
        elif kind == "big-good":
            value = _padded('{"id": %d, "ok": true, "name": "' % i, '"}')
            records.append(Record(i, kind, key, value, row=(i, k, json.loads(value)["name"], True)))
        else:
            value, reason = _bad(i, kind, rng)
            records.append(Record(i, kind, key if value is not None else f"k{i}", value, reason=reason))
    return records


def for_pulsar(records: list[Record]) -> list[Record]:
    """What Pulsar keeps of the corpus: an empty payload is read like a null one (our source reads both as a
    NULL value, the tombstone), and an empty partition key is no key at all (the client does not send it)."""
    out = []
    for r in records:
        if r.kind == "empty":
            r = Record(r.index, r.kind, r.key, None, r.row, NULL_VALUE_ERROR)
        if r.key == "":
            r = Record(r.index, r.kind, None, r.value, r.row and (*r.row[:1], None, *r.row[2:]), r.reason)
        out.append(r)
    return out


def source_columns() -> str:
    return "k STRING, id INT, name STRING, ok BOOLEAN"


def format_options() -> str:
    return """'key.format' = 'raw', 'key.fields' = 'k', 'value.fields-include' = 'EXCEPT_KEY',
              'value.format' = 'json', 'value.json.fail-on-missing-field' = 'true'"""


def dead_letters(session, table: str) -> list[tuple]:
    """SHOW ERRORS FOR `table`, retried while a file is still being written (a half line does not parse)."""
    for _ in range(10):
        try:
            result = run(session, f"SHOW ERRORS FOR {table};")
        except json.JSONDecodeError:
            time.sleep(1)
            continue
        assert isinstance(result, Rows)
        return result.rows
    raise AssertionError("SHOW ERRORS kept failing on half-written files")


def check_output(records: list[Record], rows: list[dict]) -> None:
    """Every good record exactly once, with its content; nothing else."""
    expected = {r.index: r.row for r in records if r.good}
    ids = [row["id"] for row in rows]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"ids written more than once: {duplicates[:20]}"
    missing, extra = sorted(set(expected) - set(ids)), sorted(set(ids) - set(expected))
    assert not missing and not extra, f"missing good ids {missing[:20]}, unexpected ids {extra[:20]}"
    wrong = [i for i, row in ((r["id"], r) for r in rows) if (row["id"], row["k"], row["name"], row["ok"]) != expected[i]]
    assert not wrong, f"content differs for ids {wrong[:20]}: e.g. {str([r for r in rows if r['id'] == wrong[0]])[:300]}"


def check_dead_letters(records: list[Record], letters: list[tuple], position_of) -> None:
    """SHOW ERRORS rows (seen at, position, error, key, value) are exactly the bad records, with their reasons."""
    bad = {position_of(r): r for r in records if not r.good}
    by_position = {}
    for letter in letters:
        assert letter[1] not in by_position, f"dead letter kept twice: {letter[1]}"
        by_position[letter[1]] = letter
    missing, extra = sorted(set(bad) - set(by_position)), sorted(set(by_position) - set(bad))
    assert not missing and not extra, f"bad records not kept: {missing[:10]}; kept but not bad: {extra[:10]}"
    for position, record in bad.items():
        _, _, error, key, value = by_position[position]
        assert record.reason in error, f"{record.kind} record {record.index}: error {error!r}, expected {record.reason!r}"
        assert key == record.key, f"{record.kind} record {record.index}: key {key!r}, produced {record.key!r}"
        if record.value is None:
            assert value is None, f"{record.kind} record {record.index}: value {str(value)[:80]!r}"
        elif record.kind != "garbage":  # garbage is shown as x'..' hex or as text: only check it is there
            assert value == record.value.decode(), f"{record.kind} record {record.index}: value {str(value)[:80]!r}"
        else:
            assert value, f"garbage record {record.index}: no value kept"
    assert sum(r.kind.startswith("big") for r in bad.values()) == 2


def test_corpus_through_a_kafka_insert_job(session, brokers):
    from kafka import KafkaConsumer, KafkaProducer

    records = corpus()
    source, sink = f"corpus-{uuid.uuid4().hex[:8]}", f"corpus-out-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap, max_request_size=2 * BIG, linger_ms=5)
    futures = [
        producer.send(source, key=None if r.key is None else r.key.encode(), value=r.value) for r in records
    ]
    producer.flush()
    offsets = {r.index: f.get(timeout=60) for r, f in zip(records, futures)}
    producer.close()
    assert {m.partition for m in offsets.values()} == {0}

    run(session, f"""CREATE TABLE src ({source_columns()}) WITH ('connector' = 'kafka', 'topic' = '{source}',
          'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'scan.bounded.mode' = 'latest-offset',
          {format_options()});""")  # fmt: skip
    run(session, f"""CREATE TABLE out (id INT, k STRING, name STRING, ok BOOLEAN) WITH ('connector' = 'kafka',
          'topic' = '{sink}', 'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'format' = 'json');""")
    started = run(session, "INSERT INTO out SELECT id, k, name, ok FROM src;")
    assert isinstance(started, JobStarted)
    job = session.jobs.get(started.job_id)
    wait_for(lambda: job.status != RUNNING, JOB_TIMEOUT, "the bounded job to end", interval=2)
    job.await_end()  # and its writer of dead letters
    assert (job.status, job.failure) == (FINISHED, None)

    consumer = KafkaConsumer(
        sink, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=15000,
        fetch_max_bytes=8 * BIG, max_partition_fetch_bytes=4 * BIG,
    )  # fmt: skip
    rows = [json.loads(m.value) for m in consumer]
    consumer.close()
    check_output(records, rows)

    letters = dead_letters(session, "src")
    check_dead_letters(records, letters, lambda r: f"{source}:0:{offsets[r.index].offset}")
    assert len(run(session, "SHOW ERRORS FOR src LIMIT 7;").rows) == 7


def test_corpus_through_a_pulsar_insert_job(session, brokers):
    import pulsar

    records = for_pulsar(corpus())
    base = "persistent://public/default/"
    source, sink = f"{base}corpus-{uuid.uuid4().hex[:8]}", f"{base}corpus-out-{uuid.uuid4().hex[:8]}"
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        producer = client.create_producer(source, batching_enabled=False, chunking_enabled=False)
        ids = {}
        for r in records:
            extra = {} if r.key is None else {"partition_key": r.key}
            ids[r.index] = producer.send(r.value, **extra)
        producer.close()
        reader = client.create_reader(sink, pulsar.MessageId.earliest)

        run(session, f"""CREATE TABLE src ({source_columns()}) WITH ('connector' = 'pulsar', 'topic' = '{source}',
              'service-url' = '{brokers.pulsar_service_url}', 'admin-url' = '{brokers.pulsar_admin_url}',
              {format_options()});""")  # fmt: skip
        run(session, f"""CREATE TABLE out (id INT, k STRING, name STRING, ok BOOLEAN) WITH ('connector' = 'pulsar',
              'topic' = '{sink}', 'service-url' = '{brokers.pulsar_service_url}', 'format' = 'json');""")
        started = run(session, "INSERT INTO out SELECT id, k, name, ok FROM src;")
        job = session.jobs.get(started.job_id)

        good = sum(r.good for r in records)
        rows = []
        deadline = time.monotonic() + JOB_TIMEOUT
        while len(rows) < good:
            assert job.status == RUNNING, f"the job ended: {job.status} {job.failure}"
            assert time.monotonic() < deadline, f"only {len(rows)} of {good} good records after {JOB_TIMEOUT} s"
            try:
                rows.append(json.loads(reader.read_next(timeout_millis=2000).data()))
            except pulsar.Timeout:
                continue
        with pytest.raises(pulsar.Timeout):  # nothing more: no duplicates on the way
            rows.append(json.loads(reader.read_next(timeout_millis=5000).data()))
        check_output(records, rows)

        bad = len(records) - good
        letters = wait_for(lambda: (lambda rows: rows if len(rows) >= bad else None)(dead_letters(session, "src")),
                           120, f"{bad} dead letters")  # fmt: skip
        check_dead_letters(records, letters, lambda r: f"{source}:{base64.b64encode(ids[r.index].serialize()).decode()}")
        assert job.status == RUNNING and job.failure is None  # an unbounded source: the job goes on
    finally:
        client.close()


def no_second_query(session, table: str) -> bool:
    """The job kept its bad records itself: one folder per micro-batch that had some, and none of the files of a
    streaming dead-letter query (which writes beside a `_spark_metadata` folder)."""
    folder = session.home / "errors" / table
    files = list(folder.rglob("part-*.json"))
    return bool(files) and all(f.parent.name.startswith("batch-") for f in files) and not list(folder.rglob("_spark_metadata"))


def test_corpus_through_a_stateful_kafka_job(session, brokers):
    """A stateful job (a global COUNT) keeps its bad records by reading again, by offset range, each micro-batch
    that had some: over several micro-batches, every bad record is kept exactly once."""
    from kafka import KafkaProducer

    records = corpus()
    source = f"corpus-agg-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap, max_request_size=2 * BIG, linger_ms=5)
    futures = [producer.send(source, key=None if r.key is None else r.key.encode(), value=r.value) for r in records]
    producer.flush()
    offsets = {r.index: f.get(timeout=60) for r, f in zip(records, futures)}
    producer.close()

    run(session, f"""CREATE TABLE src ({source_columns()}) WITH ('connector' = 'kafka', 'topic' = '{source}',
          'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'scan.bounded.mode' = 'latest-offset',
          'source.max-messages-per-trigger' = '300', {format_options()});""")  # fmt: skip
    run(session, "CREATE TABLE sink (n BIGINT) WITH ('connector' = 'blackhole');")
    job = session.jobs.get(run(session, "INSERT INTO sink SELECT COUNT(*) FROM src;").job_id)
    wait_for(lambda: job.status != RUNNING, JOB_TIMEOUT, "the bounded job to end", interval=2)
    job.await_end()
    assert (job.status, job.failure) == (FINISHED, None)

    check_dead_letters(records, dead_letters(session, "src"), lambda r: f"{source}:0:{offsets[r.index].offset}")
    assert no_second_query(session, "src")
    assert len(list((session.home / "errors" / "src").rglob("batch-*"))) > 1  # several micro-batches had some


def test_corpus_through_a_stateful_pulsar_job(session, brokers):
    """The same through Pulsar, unbounded: the range read of our Pulsar source finds each batch's bad records."""
    import pulsar

    records = for_pulsar(corpus())
    source = f"persistent://public/default/corpus-agg-{uuid.uuid4().hex[:8]}"
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        producer = client.create_producer(source, batching_enabled=False, chunking_enabled=False)
        ids = {}
        for r in records:
            ids[r.index] = producer.send(r.value, **({} if r.key is None else {"partition_key": r.key}))
        producer.close()
    finally:
        client.close()
    run(session, f"""CREATE TABLE src ({source_columns()}) WITH ('connector' = 'pulsar', 'topic' = '{source}',
          'service-url' = '{brokers.pulsar_service_url}', 'admin-url' = '{brokers.pulsar_admin_url}',
          'scan.startup.mode' = 'earliest', 'source.max-messages-per-trigger' = '300', {format_options()});""")  # fmt: skip
    run(session, "CREATE TABLE sink (n BIGINT) WITH ('connector' = 'blackhole');")
    job = session.jobs.get(run(session, "INSERT INTO sink SELECT COUNT(*) FROM src;").job_id)
    bad = sum(not r.good for r in records)
    letters = wait_for(lambda: (lambda rows: rows if len(rows) >= bad else None)(dead_letters(session, "src")),
                       JOB_TIMEOUT, f"{bad} dead letters")  # fmt: skip
    check_dead_letters(records, letters, lambda r: f"{source}:{base64.b64encode(ids[r.index].serialize()).decode()}")
    assert no_second_query(session, "src")
    assert job.status == RUNNING and job.failure is None
