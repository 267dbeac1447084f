"""Which tables of a stateful job keep their bad records themselves (counted, then read again by offset range), and
which need a dead-letter query: a table's offsets must be told apart by their topics."""

import json

from shell.catalog.model import Column, TableDef
from shell.connectors.base import SourceFrame
from shell.connectors.registry import connector_for
from shell.engine.batch_dead_letters import sort_sources

KAFKA = {"connector": "kafka", "properties.bootstrap.servers": "k:9092", "format": "json"}
PULSAR = {"connector": "pulsar", "service-url": "pulsar://p:6650", "admin-url": "http://p:8080", "format": "json"}


def table(name: str, **options) -> TableDef:
    return TableDef(name, [Column("id", "BIGINT")], options=options)


def opened(table_def: TableDef, counted: bool = True, bad: bool = True) -> tuple[TableDef, SourceFrame]:
    dead = object() if bad else None  # stands for the frame of bad records; never run here
    return table_def, SourceFrame(None, False, dead, f"/errors/{table_def.name}", "bad-records-1" if counted else None)


def names(result) -> tuple[list[str], list[str]]:
    kept, streamed = result
    return [t.table.name for t in kept], [name for name, _, _ in streamed]


def test_tables_on_topics_of_their_own_are_counted():
    a, b = table("a", topic="ta", **KAFKA), table("b", topic="tb;tc", **KAFKA)
    kept, streamed = sort_sources([opened(a), opened(b)])
    assert [(t.table.name, t.topics, t.folder) for t in kept] == [
        ("a", frozenset({"ta"}), "/errors/a"),
        ("b", frozenset({"tb", "tc"}), "/errors/b"),
    ]
    assert streamed == []


def test_a_shared_topic_or_a_pattern_needs_the_dead_letter_query():
    shared = [opened(table("a", topic="t1;t2", **KAFKA)), opened(table("b", topic="t2", **KAFKA), bad=False)]
    assert names(sort_sources(shared)) == ([], ["a"])  # a's offsets cannot be told from b's; b keeps no bad records
    pattern = [opened(table("a", topic="t1", **KAFKA)), opened(table("p", **{"topic-pattern": "t.*"}, **KAFKA))]
    assert names(sort_sources(pattern)) == ([], ["a", "p"])


def test_a_self_join_gets_one_dead_letter_query():
    t = table("t", topic="t", **KAFKA)
    assert names(sort_sources([opened(t), opened(t)])) == ([], ["t"])


def test_tables_not_counted_or_without_bad_records():
    files = table("f", connector="filesystem", path="/data", format="json")
    assert names(sort_sources([opened(files, counted=False)])) == ([], ["f"])
    assert names(sort_sources([opened(table("a", topic="t", **KAFKA), bad=False)])) == ([], [])


def test_offsets_name_their_topics():
    kafka, pulsar = connector_for(table("k", topic="t", **KAFKA)), connector_for(table("p", topic="t", **PULSAR))
    assert kafka.offset_topics(json.dumps({"orders": {"0": 5, "1": 7}})) == {"orders"}
    assert kafka.offset_topics(json.dumps({"offset": 3, "timestamp": 3000})) == frozenset()  # the end-of-input source
    assert kafka.offset_topics("12") == frozenset()  # some other source's offset
    partitioned = {"persistent://public/default/t-partition-0": "earliest", "persistent://public/default/t-partition-1": "x"}
    assert pulsar.offset_topics(json.dumps(partitioned)) == {"persistent://public/default/t"}
    assert pulsar.range_topics(table("p", topic="t; tenant/ns/u", **PULSAR)) == {
        "persistent://public/default/t",
        "persistent://tenant/ns/u",
    }
