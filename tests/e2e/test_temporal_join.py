"""An event-time temporal join on Kafka, streaming: rows wait for the watermark of both topics, then are emitted
by the keyed stage's event-time timeout, in a micro-batch that brings no row of their key."""

from __future__ import annotations

import uuid

from tests.spark.helpers import run, take


def test_rows_are_joined_with_their_version_once_both_watermarks_pass_them(session, brokers):
    orders, rates = (f"temporal-{name}-{uuid.uuid4().hex[:8]}" for name in ("orders", "rates"))
    kafka = f"'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}'"
    run(session, f"""
        CREATE TABLE orders (id INT, cur STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
          WITH ('connector' = 'kafka', 'topic' = '{orders}', {kafka}, 'format' = 'json');
        CREATE TABLE rates (cur STRING, rate DOUBLE, at TIMESTAMP(3), WATERMARK FOR at AS at, PRIMARY KEY (cur) NOT ENFORCED)
          WITH ('connector' = 'upsert-kafka', 'topic' = '{rates}', {kafka}, 'key.format' = 'raw', 'value.format' = 'json');
        INSERT INTO rates VALUES ('EUR', 1.1, TIMESTAMP '2024-01-01 09:00:00');
        INSERT INTO orders VALUES (1, 'EUR', TIMESTAMP '2024-01-01 09:30:00');""")
    stream = run(session, "SELECT o.id, r.rate FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;")
    try:
        # Only GBP from here on: order 1 (EUR) is emitted because event time passed it, not because its key moved.
        run(session, """
            INSERT INTO rates VALUES ('GBP', 2.0, TIMESTAMP '2024-01-01 10:00:00');
            INSERT INTO orders VALUES (2, 'GBP', TIMESTAMP '2024-01-01 10:30:00');
            INSERT INTO rates VALUES ('GBP', 2.1, TIMESTAMP '2024-01-01 11:00:00');
            INSERT INTO orders VALUES (3, 'GBP', TIMESTAMP '2024-01-01 11:30:00');""")
        changes = take(stream, 2, timeout=240)
    finally:
        stream.cancel()
    # Order 3 (11:30) waits: the rates' watermark is at 11:00. Rows of different keys come in no set order.
    assert sorted(changes) == [("+I", (1, 1.1)), ("+I", (2, 2.0))]
