"""The keyed join stage on the JVM (jvm/stages) against the Python stage, on real Kafka topics.

Both must give the same changes for every query shape the JVM stage takes (an aggregate, a filter, a projection,
COUNT(*) alone of one upsert table; inner, left, full and semi joins of two), over updates, deletes, tombstones of
absent keys, updates that change nothing, NULLs and several changes of a key in one micro-batch and across
batches; and the JVM one must be the one that ran.
"""

from __future__ import annotations

import json
import uuid

import pytest
from kafka import KafkaProducer

from shell.paths import jvm_bundle_jars
from tests.spark.helpers import changes, materialize, run

pytestmark = pytest.mark.skipif(not jvm_bundle_jars("stages"), reason="jvm/stages is not built: scripts/jvm-deps stages")

CHANGES = [  # (key, value or None for a tombstone), in this order
    ("u1", {"uid": "u1", "acct": "a", "age": 30}),
    ("u2", {"uid": "u2", "acct": "a", "age": 40}),
    ("u3", {"uid": "u3", "acct": "b", "age": None}),
    ("u2", {"uid": "u2", "acct": "b", "age": 41}),  # moves to another group
    ("u4", {"uid": "u4", "acct": "c", "age": 20}),
    ("u1", None),  # deleted
    ("u5", None),  # a tombstone of a key never seen
    ("u4", {"uid": "u4", "acct": "c", "age": 20}),  # the same row again: no change
    ("u6", {"uid": "u6", "acct": None, "age": 1}),  # a NULL group
    ("u7", {"uid": "u7", "acct": "a", "age": 70}),
    ("u7", {"uid": "u7", "acct": "a", "age": 71}),
    ("u7", None),
    ("u7", {"uid": "u7", "acct": "d", "age": 72}),  # deleted and back, with a new row
]

COLORS = [
    ("u2", {"uid": "u2", "color": "red"}),
    ("u3", {"uid": "u3", "color": "blue"}),
    ("u3", {"uid": "u3", "color": "green"}),
    ("u9", {"uid": "u9", "color": "black"}),  # no such user
    ("u4", {"uid": "u4", "color": "white"}),
    ("u4", None),
    ("u7", {"uid": "u7", "color": "pink"}),
]

QUERIES = {  # the query, and its result after every change (the rows, in any order)
    "SELECT acct, COUNT(*) AS n, SUM(age) AS s FROM users GROUP BY acct;":
        [("b", 2, 41), ("c", 1, 20), (None, 1, 1), ("d", 1, 72)],
    "SELECT uid, age FROM users WHERE age > 25;": [("u2", 41), ("u7", 72)],
    "SELECT uid, acct FROM users;": [("u2", "b"), ("u3", "b"), ("u4", "c"), ("u6", None), ("u7", "d")],
    "SELECT COUNT(*) AS n FROM users;": [(5,)],
    "SELECT u.uid, c.color FROM users u LEFT JOIN colors c ON u.uid = c.uid;":
        [("u2", "red"), ("u3", "green"), ("u4", None), ("u6", None), ("u7", "pink")],
    "SELECT u.acct, COUNT(*) AS n FROM users u JOIN colors c ON u.uid = c.uid GROUP BY u.acct;": [("b", 2), ("d", 1)],
    "SELECT c.uid, c.color FROM colors c WHERE c.uid IN (SELECT uid FROM users);":
        [("u2", "red"), ("u3", "green"), ("u7", "pink")],
    "SELECT u.uid AS a, c.uid AS b FROM users u FULL JOIN colors c ON u.uid = c.uid;":
        [("u2", "u2"), ("u3", "u3"), ("u4", None), ("u6", None), ("u7", "u7"), (None, "u9")],
}


@pytest.fixture
def users(session, brokers):
    topics = {name: f"jvm-stage-{name}-{uuid.uuid4().hex[:8]}" for name in ("users", "colors")}
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for name, messages in (("users", CHANGES), ("colors", COLORS)):
        for key, value in messages:
            body = None if value is None else json.dumps(value).encode()
            producer.send(topics[name], key=key.encode(), value=body)
    producer.flush()
    producer.close()

    def tables(per_batch: int) -> None:
        for name, columns in (("users", "uid STRING, acct STRING, age INT"), ("colors", "uid STRING, color STRING")):
            run(session, f"""CREATE TEMPORARY TABLE {name} ({columns}, PRIMARY KEY (uid) NOT ENFORCED) WITH (
                  'connector' = 'upsert-kafka', 'topic' = '{topics[name]}',
                  'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'key.format' = 'raw',
                  'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset',
                  'source.max-messages-per-trigger' = '{per_batch}');""")

    return tables


@pytest.mark.parametrize("per_batch", [100, 5], ids=["one-batch", "batches-of-5"])
def test_the_jvm_stage_gives_the_python_stages_changes_and_the_right_result(session, users, per_batch):
    users(per_batch)
    shown = {}
    # the Python stage once, where a key's changes span batches; in one batch the JVM's are checked on their own
    engines = ("true", "false") if per_batch == 5 else ("true",)
    for jvm in engines:
        run(session, f"SET 'table.exec.changelog.jvm-stages' = '{jvm}';")
        for query in QUERIES:
            plan = run(session, f"EXPLAIN {query}").text  # the stage a query runs, as Spark planned it
            assert ("KeyedJoinStage" in plan, "TransformWithStateInPySpark" in plan) == (jvm == "true", jvm == "false")
            shown[query, jvm] = [(str(op), row) for op, row in changes(run(session, query))]
    for query, expected in QUERIES.items():
        grouped = "GROUP BY" in query or "COUNT(*) AS n FROM users;" in query
        key = (1 if "GROUP BY" in query else 0) if grouped else None
        if "false" in engines:  # a batch's rows come in no set order
            assert sorted(shown[query, "true"], key=repr) == sorted(shown[query, "false"], key=repr), query
        assert materialize(shown[query, "true"], key) == sorted(expected, key=repr), query


def upserts_in(bootstrap: str, topic: str) -> dict[str, dict]:
    """An upsert topic read to its end as its readers keep it: the last value per key, a tombstone removing it."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        end = consumer.end_offsets(parts)
        kept: dict[str, dict] = {}
        while any(consumer.position(p) < end[p] for p in parts):
            for records in consumer.poll(timeout_ms=1000).values():
                for record in records:
                    if record.value is None:
                        kept.pop(record.key.decode(), None)
                    else:
                        kept[record.key.decode()] = json.loads(record.value)
        return kept
    finally:
        consumer.close()


@pytest.mark.parametrize("netting", ["true", "false"])
def test_a_join_into_an_upsert_sink_keyed_as_the_stage_leaves_the_joined_rows_there(session, users, brokers, netting):
    """With 'sink-netting' the JVM stage gives one change per sink key and batch and the sink writes it as it comes;
    without, the batch is netted per key before it is written. Both leave the join's rows in the topic."""
    users(3)
    topic = f"jvm-stage-joined-{uuid.uuid4().hex[:8]}"
    run(session, f"""SET 'table.exec.changelog.sink-netting' = '{netting}';
        CREATE TEMPORARY TABLE joined (uid STRING, acct STRING, color STRING, PRIMARY KEY (uid) NOT ENFORCED) WITH (
          'connector' = 'upsert-kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}',
          'key.format' = 'raw', 'value.format' = 'json');
        INSERT INTO joined SELECT u.uid, u.acct, c.color FROM users u LEFT JOIN colors c ON u.uid = c.uid;""")
    failed = session.jobs.wait_all()  # the job ends with its bounded input
    assert not failed, [job.failure for job in failed]
    assert upserts_in(brokers.kafka_bootstrap, topic) == {
        "u2": {"uid": "u2", "acct": "b", "color": "red"}, "u3": {"uid": "u3", "acct": "b", "color": "green"},
        "u4": {"uid": "u4", "acct": "c", "color": None}, "u6": {"uid": "u6", "acct": None, "color": None},
        "u7": {"uid": "u7", "acct": "d", "color": "pink"}}
