"""The avro format on Kafka against the real broker: rows written by INSERT read back exactly, keys and values,
and a record that is not Avro kept aside as a dead letter while the query goes on."""

from __future__ import annotations

import datetime
import uuid
from decimal import Decimal

from kafka import KafkaProducer

from shell.results import Rows
from tests.spark.helpers import changes, run


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def kafka_table(brokers, name: str, topic: str, columns: str, extra: str = "") -> str:
    return f"""CREATE TABLE {name} ({columns}) WITH ('connector' = 'kafka', 'topic' = '{topic}',
      'properties.bootstrap.servers' = '{brokers.kafka_bootstrap}', 'value.format' = 'avro',
      'scan.bounded.mode' = 'latest-offset' {extra});"""


def test_rows_written_as_avro_read_back_exactly(session, brokers):
    topic = unique("avro")
    run(session, kafka_table(
        brokers, "t", topic,
        "id BIGINT, name STRING, price DECIMAL(10, 2), ok BOOLEAN, small TINYINT, ts TIMESTAMP(3), lt TIMESTAMP_LTZ(3), "
        "d DATE, raw BYTES, tags ARRAY<STRING>, attrs MAP<STRING, INT>, point ROW<x DOUBLE, y FLOAT>",
        ", 'key.format' = 'avro', 'key.fields' = 'id'",
    ))  # fmt: skip
    run(session, "INSERT INTO t VALUES (1, 'ada', 12.50, TRUE, CAST(-3 AS TINYINT), TIMESTAMP '2024-05-06 07:08:09.123', "
                 "TO_TIMESTAMP_LTZ(1714979289123, 3), DATE '2024-01-02', X'00ff', ARRAY['a', 'b'], MAP['k', 1], "
                 "ROW(1.5, CAST(2.5 AS FLOAT))), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);")
    rows = sorted(r for _, r in changes(run(session, "SELECT * FROM t;")))
    assert len(rows) == 2
    one, two = rows
    assert one[:5] == (1, "ada", Decimal("12.50"), True, -3)
    assert one[5] == datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)
    assert one[6].astimezone(datetime.timezone.utc) == datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, datetime.timezone.utc)
    assert (one[7], bytes(one[8]), list(one[9]), dict(one[10])) == (datetime.date(2024, 1, 2), b"\x00\xff", ["a", "b"], {"k": 1})
    assert (one[11].x, one[11].y) == (1.5, 2.5)
    assert two == (2,) + (None,) * 11


def avro_long(n: int) -> bytes:
    """Avro's zig-zag varint encoding of a long."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def test_a_record_that_is_not_avro_goes_to_the_dead_letters(session, brokers):
    topic = unique("avro-bad")
    # (id BIGINT NOT NULL, name STRING): a long, then a ["null", "string"] union
    good = [avro_long(1) + b"\x02" + avro_long(3) + b"ada", avro_long(2) + b"\x00"]
    bodies = [good[0], b"{not avro", avro_long(7) + b"\x02" + avro_long(40) + b"short", good[1]]
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for body in bodies:
        producer.send(topic, value=body)
    producer.flush()
    producer.close()
    run(session, kafka_table(brokers, "src", topic, "id BIGINT NOT NULL, name STRING"))
    assert sorted(r for _, r in changes(run(session, "SELECT id, name FROM src;"))) == [(1, "ada"), (2, None)]
    errors = run(session, "SHOW ERRORS FOR src;")
    assert isinstance(errors, Rows)
    by_position = {row[1]: row for row in errors.rows}
    assert set(by_position) == {f"{topic}:0:1", f"{topic}:0:2"}
    assert {row[2] for row in errors.rows} == {"malformed Avro"}
    assert by_position[f"{topic}:0:1"][4] == "{not avro"
