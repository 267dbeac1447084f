"""JdbcCatalog against a real PostgreSQL (tests/postgres.py): schemas as databases, their tables, and a table as a
jdbc TableDef typed from information_schema that the connector then reads."""

from __future__ import annotations

import uuid

import pytest

from shell.catalogs.jdbc_catalog import JdbcCatalog
from shell.connectors.base import ConnectorContext
from shell.connectors.registry import connector_for, validate_table


def test_schemas_tables_and_a_typed_table_that_reads(spark_runtime, postgres, tmp_path):
    schema = f"shop_{uuid.uuid4().hex[:6]}"
    postgres.sql(f"""CREATE SCHEMA {schema};
        CREATE TABLE {schema}.items (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL, price NUMERIC(8, 2),
                                     added TIMESTAMP(3), zoned TIMESTAMPTZ, ok BOOLEAN, d DATE, raw BYTEA, score REAL);
        CREATE TABLE {schema}."Mixed" (k INT);
        INSERT INTO {schema}.items VALUES (1, 'pen', 1.50, TIMESTAMP '2024-01-02 03:04:05.678', NULL, TRUE,
                                           DATE '2024-01-02', NULL, 0.5)""")
    spark = spark_runtime.get()
    catalog = JdbcCatalog(spark, postgres.url, postgres.user, postgres.password)
    assert schema in catalog.databases() and "pg_catalog" not in catalog.databases()
    assert catalog.tables(schema) == ["Mixed", "items"]
    assert catalog.table(schema, "nothing") is None
    items = catalog.table(schema, "items")
    assert [(c.name, c.data_type) for c in items.columns] == [
        ("id", "BIGINT"), ("name", "STRING"), ("price", "DECIMAL(8, 2)"), ("added", "TIMESTAMP(3)"),
        ("zoned", "TIMESTAMP(6) WITH LOCAL TIME ZONE"), ("ok", "BOOLEAN"), ("d", "DATE"), ("raw", "BYTES"),
        ("score", "FLOAT")]
    assert items.primary_key == ["id"]
    assert items.options["table-name"] == f"{schema}.items" and items.options["password"] == postgres.password
    assert catalog.table(schema, "Mixed").options["table-name"] == f'{schema}."Mixed"'
    validate_table(items)
    rows = connector_for(items).rows(ConnectorContext(spark, tmp_path), items).collect()
    assert [(r["id"], r["name"], float(r["price"]), r["ok"]) for r in rows] == [(1, "pen", 1.5, True)]


def test_create_catalog_of_type_jdbc_lists_databases_and_enriches_a_stream_with_no_create_table(session, postgres):
    from tests.spark.helpers import changes, run

    schema = f"crm_{uuid.uuid4().hex[:6]}"
    postgres.sql(f"""CREATE SCHEMA {schema};
        CREATE TABLE {schema}.customers (id BIGINT PRIMARY KEY, name TEXT);
        INSERT INTO {schema}.customers VALUES (1, 'ada'), (2, 'bob')""")
    base = postgres.url.rsplit("/", 1)[0]
    run(session, f"""CREATE CATALOG pg WITH ('type' = 'jdbc', 'base-url' = '{base}',
        'default-database' = '{postgres.database}', 'username' = '{postgres.user}', 'password' = '{postgres.password}');""")
    assert postgres.database in [r[0] for r in run(session, "SHOW DATABASES FROM pg;").rows]
    assert f"{schema}.customers" in [r[0] for r in run(session, f"SHOW TABLES FROM pg.{postgres.database};").rows]
    described = dict(run(session, "DESCRIBE CATALOG EXTENDED pg;").rows)
    assert described["option:password"] == "****" and postgres.password not in str(described)

    scanned = changes(run(session, f"SELECT id, name FROM pg.{postgres.database}.`{schema}.customers`;"))
    assert sorted(r for _, r in scanned) == [(1, "ada"), (2, "bob")]

    run(session, """CREATE TEMPORARY TABLE orders (order_id BIGINT, customer BIGINT, proc AS PROCTIME())
        WITH ('connector' = 'datagen', 'number-of-rows' = '4', 'fields.order_id.kind' = 'sequence',
              'fields.order_id.start' = '1', 'fields.order_id.end' = '4',
              'fields.customer.min' = '1', 'fields.customer.max' = '2');""")
    lookup = f"""SELECT o.order_id, o.customer, c.name FROM orders AS o
        JOIN pg.{postgres.database}.`{schema}.customers` FOR SYSTEM_TIME AS OF o.proc AS c ON o.customer = c.id;"""
    explained = run(session, "EXPLAIN " + lookup).text
    assert f"lookup join: pg.{postgres.database}.`{schema}.customers`".lower() in explained.lower(), explained
    enriched = changes(run(session, lookup))
    assert sorted(r[0] for _, r in enriched) == [1, 2, 3, 4]
    assert all(name == {1: "ada", 2: "bob"}[customer] for _, (_, customer, name) in enriched)
    with pytest.raises(Exception, match="read-only"):
        run(session, f"CREATE TABLE pg.{postgres.database}.x (id BIGINT) WITH ('connector' = 'datagen');")
