"""The Pulsar catalog against the real broker: namespaces as databases, topics as tables, the schema registry's
JSON and AVRO schemas as columns, and its tables read through a session give back what was produced."""

from __future__ import annotations

import logging
import uuid

import pulsar
import pytest
from pulsar.schema import Array, AvroSchema, Boolean, Double, JsonSchema, Long, Map, Record, String

from shell.catalogs.pulsar_catalog import PulsarCatalog
from shell.sql.ddl import create_table_sql
from shell.errors import CatalogError
from tests.spark.helpers import run, take

QUIET = logging.getLogger("tests.pulsar")
QUIET.setLevel(logging.CRITICAL)


class Person(Record):
    id = Long(required=True)
    name = String()
    score = Double()
    ok = Boolean()
    tags = Array(String())
    attrs = Map(String())


PEOPLE = [
    Person(id=1, name="ada", score=1.5, ok=True, tags=["a", "b"], attrs={"k": "v"}),
    Person(id=2, name=None, score=None, ok=None, tags=None, attrs=None),
    Person(id=3, name="bob", score=-0.25, ok=False, tags=[], attrs={}),
]
EXPECTED_COLUMNS = [
    ("id", "BIGINT", False), ("name", "STRING", True), ("score", "DOUBLE", True), ("ok", "BOOLEAN", True),
    ("tags", "ARRAY<STRING>", True), ("attrs", "MAP<STRING, STRING>", True),
]  # fmt: skip


@pytest.fixture(scope="module")
def topics(brokers):
    """Two new topics of public/default holding PEOPLE: one with a JSON schema, one (partitioned) with AVRO."""
    suffix = uuid.uuid4().hex[:8]
    names = {"json": f"people_json_{suffix}", "avro": f"people_avro_{suffix}"}
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        for kind, schema in (("json", JsonSchema(Person)), ("avro", AvroSchema(Person))):
            producer = client.create_producer(f"persistent://public/default/{names[kind]}", schema=schema)
            for person in PEOPLE:
                producer.send(person)
            producer.close()
    finally:
        client.close()
    return names


def catalog_of(brokers) -> PulsarCatalog:
    return PulsarCatalog.from_options(
        {"type": "pulsar", "service-url": brokers.pulsar_service_url, "admin-url": brokers.pulsar_admin_url}
    )


def test_namespaces_are_databases_and_topics_are_tables(brokers, topics):
    catalog = catalog_of(brokers)
    assert "public/default" in catalog.databases()
    assert all(d.count("/") == 1 for d in catalog.databases())
    tables = catalog.tables("public/default")
    assert {topics["json"], topics["avro"]} <= set(tables)
    assert not [t for t in tables if "-partition-" in t or t.startswith("__")]


def test_a_partitioned_topic_is_one_table(brokers):
    import urllib.request

    name = f"parts_{uuid.uuid4().hex[:8]}"
    request = urllib.request.Request(
        f"{brokers.pulsar_admin_url}/admin/v2/persistent/public/default/{name}/partitions", data=b"3", method="PUT",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=30).close()
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:  # the partitions exist as topics of their own once written to
        producer = client.create_producer(f"persistent://public/default/{name}")
        for i in range(6):
            producer.send(f"{i}".encode(), partition_key=str(i))
        producer.close()
    finally:
        client.close()
    catalog = catalog_of(brokers)
    assert [t for t in catalog.tables("public/default") if name in t] == [name]
    table = catalog.table("public/default", name)
    assert [(c.name, c.data_type) for c in table.columns] == [("value", "BYTES")]
    assert table.options["format"] == "raw"


@pytest.mark.parametrize("kind", ["json", "avro"])
def test_a_topic_schema_gives_the_columns_and_the_table_reads_what_was_produced(session, brokers, topics, kind):
    catalog = catalog_of(brokers)
    table = catalog.table("public/default", topics[kind])
    assert table is not None
    assert [(c.name, c.data_type, c.nullable) for c in table.columns] == EXPECTED_COLUMNS
    assert table.options["format"] == kind
    assert table.options["topic"] == f"persistent://public/default/{topics[kind]}"
    run(session, create_table_sql(table))
    got = take(run(session, f"SELECT * FROM `{topics[kind]}`;"), len(PEOPLE))
    rows = sorted((op, (r[0], r[1], r[2], r[3], None if r[4] is None else list(r[4]), None if r[5] is None else dict(r[5])))
                  for op, r in got)  # fmt: skip
    assert rows == [
        ("+I", (1, "ada", 1.5, True, ["a", "b"], {"k": "v"})),
        ("+I", (2, None, None, False, None, None)),  # pulsar-client sends a Boolean() field's None as false
        ("+I", (3, "bob", -0.25, False, [], {})),
    ]
    assert run(session, f"SHOW ERRORS FOR `{topics[kind]}`;").rows == []


def test_a_topic_without_a_schema_is_one_bytes_column_and_an_unknown_one_is_none(brokers):
    name = f"plain_{uuid.uuid4().hex[:8]}"
    client = pulsar.Client(brokers.pulsar_service_url, logger=QUIET)
    try:
        client.create_producer(f"persistent://public/default/{name}").send(b"x")
    finally:
        client.close()
    catalog = catalog_of(brokers)
    table = catalog.table("public/default", name)
    assert [(c.name, c.data_type) for c in table.columns] == [("value", "BYTES")]
    assert catalog.table("public/default", f"missing_{name}") is None


def test_an_unknown_namespace_and_an_unreachable_admin_are_one_line_errors(brokers):
    with pytest.raises(CatalogError, match="no database \\(namespace\\) 'public/nosuch'") as found:
        catalog_of(brokers).tables("public/nosuch")
    assert "public/default" in found.value.hint
    unreachable = PulsarCatalog(brokers.pulsar_service_url, "http://127.0.0.1:9")
    with pytest.raises(CatalogError, match="cannot list the tenants: cannot reach the Pulsar admin API") as found:
        unreachable.databases()
    assert "\n" not in found.value.message and "admin-url" in found.value.hint


def test_create_catalog_reads_topics_with_no_create_table_and_one_query_joins_two_catalogs(session, brokers, topics):
    run(session, f"""CREATE CATALOG pulsar WITH ('type' = 'pulsar', 'service-url' = '{brokers.pulsar_service_url}',
        'admin-url' = '{brokers.pulsar_admin_url}');""")
    assert topics["avro"] in [r[0] for r in run(session, "SHOW TABLES FROM pulsar.`public/default`;").rows]
    assert "public/default" in [r[0] for r in run(session, "SHOW DATABASES FROM pulsar;").rows]
    described = run(session, f"DESCRIBE pulsar.`public/default`.{topics['avro']};")
    assert [(r[0], r[1]) for r in described.rows][:3] == [("id", "BIGINT"), ("name", "STRING"), ("score", "DOUBLE")]

    run(session, """CREATE TEMPORARY TABLE labels (id BIGINT, label AS CONCAT('person-', CAST(id AS STRING)))
        WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.id.kind' = 'sequence',
              'fields.id.start' = '1', 'fields.id.end' = '3');""")
    joined = take(run(session, f"""SELECT p.id, p.name, l.label FROM pulsar.`public/default`.{topics['avro']} AS p
        JOIN default_catalog.default_database.labels AS l ON p.id = l.id;"""), len(PEOPLE))
    assert sorted(r for op, r in joined if op == "+I") == [(1, "ada", "person-1"), (2, None, "person-2"),
                                                           (3, "bob", "person-3")]  # fmt: skip

    run(session, "USE CATALOG pulsar; USE `public/default`;")
    run(session, f"INSERT INTO {topics['avro']} (id, name, score, ok) VALUES (4, 'cy', 2.0, TRUE);")  # no CREATE TABLE
    got = take(run(session, f"SELECT id, name FROM {topics['avro']};"), len(PEOPLE) + 1)
    assert sorted(r for _, r in got) == [(1, "ada"), (2, None), (3, "bob"), (4, "cy")]
    got = take(run(session, f"SELECT id, name FROM {topics['json']};"), len(PEOPLE))
    assert sorted(r for _, r in got) == [(1, "ada"), (2, None), (3, "bob")]
    with pytest.raises(CatalogError, match="read-only"):
        run(session, "CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen');")
