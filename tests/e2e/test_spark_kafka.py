"""Spark's own Kafka source and sink (the jars `make setup` resolved) work against the real broker."""

from __future__ import annotations

import uuid

from kafka import KafkaConsumer, KafkaProducer


def test_spark_reads_one_topic_and_writes_another(brokers, spark_runtime, tmp_path):
    source, sink = (f"smoke-{name}-{uuid.uuid4().hex[:8]}" for name in ("in", "out"))
    producer = KafkaProducer(bootstrap_servers=brokers.kafka_bootstrap)
    for i in range(10):
        producer.send(source, key=f"k{i}".encode(), value=f"v{i}".encode())
    producer.flush()
    producer.close()

    spark = spark_runtime.get()
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", brokers.kafka_bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "upper(CAST(value AS STRING)) AS value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", brokers.kafka_bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(180)
    assert query.exception() is None

    consumer = KafkaConsumer(
        sink, bootstrap_servers=brokers.kafka_bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=20000
    )
    received = {}
    for message in consumer:
        received[message.key.decode()] = message.value.decode()
        if len(received) == 10:
            break
    consumer.close()
    assert received == {f"k{i}": f"V{i}" for i in range(10)}
