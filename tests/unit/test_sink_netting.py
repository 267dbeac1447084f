"""When the changelog path's keyed join may net its changes per key of the upsert sink it writes to: the rows go
to the sink column for column, keyed by columns that hold the stage's key, with no filter after the stage and no
join that can leave the first input's key NULL."""

from __future__ import annotations

import pytest

from shell.catalog.store import Catalog
from shell.connectors.registry import connector_for
from shell.engine.path_parts import ChangelogParts, NativeParts
from shell.planner.planner import plan_query
from shell.sql.parse import parse_query
from tests.sessions import catalog_after

pytestmark = pytest.mark.unit

KAFKA = "'properties.bootstrap.servers' = 'localhost:9092', 'key.format' = 'raw', 'value.format' = 'json'"
DDL = f"""
CREATE TABLE users (uid STRING, acct STRING, PRIMARY KEY (uid) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'users', {KAFKA});
CREATE TABLE colors (uid STRING, color STRING, PRIMARY KEY (uid) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'colors', {KAFKA});
CREATE TABLE by_uid (uid STRING, acct STRING, color STRING, PRIMARY KEY (uid) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'by_uid', {KAFKA});
CREATE TABLE by_acct (uid STRING, acct STRING, color STRING, PRIMARY KEY (acct) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'by_acct', {KAFKA});
CREATE TABLE events (uid STRING, acct STRING, color STRING, PRIMARY KEY (uid) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '/tmp/e', 'format' = 'debezium-json');
CREATE TABLE appended (uid STRING, acct STRING, color STRING)
  WITH ('connector' = 'kafka', 'topic' = 'appended', 'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'json');
"""


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Catalog:
    return catalog_after(DDL, tmp_path_factory.mktemp("home"))


def net(catalog: Catalog, query: str, sink: str = "by_uid") -> tuple[str, ...]:
    plan = plan_query(parse_query(query), catalog)
    target = catalog.table(sink)
    parts = ChangelogParts(plan) if plan.changelog is not None else NativeParts(plan)
    return parts.sink_net(target, None, connector_for(target))


JOIN = "SELECT u.uid, u.acct, c.color FROM users u LEFT JOIN colors c ON u.uid = c.uid"


def test_a_left_join_into_a_sink_keyed_by_the_join_key_is_netted_by_it(catalog):
    assert net(catalog, JOIN) == ("u__uid",)


@pytest.mark.parametrize(("query", "sink"), [
    (JOIN + " WHERE c.color IS NOT NULL", "by_uid"),  # a filter after the stage could drop a key's new row only
    (JOIN, "by_acct"),  # the sink's key is not the stage's: one sink key's rows are in several stage keys
    ("SELECT c.uid, u.acct, c.color FROM users u RIGHT JOIN colors c ON u.uid = c.uid", "by_uid"),
    ("SELECT u.uid, u.acct, UPPER(c.color) AS color FROM users u JOIN colors c ON u.uid = c.uid", "by_acct"),
    (JOIN, "appended"),  # not an upsert sink
    # one to many: a sink key (c.uid) is several joined rows, whose changes the stage could not net to one
    ("SELECT c.uid, u.acct, c.color FROM colors c JOIN users u ON c.uid = u.acct", "by_uid"),
    ("SELECT e.uid, e.acct, e.color FROM events e JOIN users u ON e.uid = u.uid", "by_uid"),  # e: no primary key
])
def test_otherwise_the_batch_is_netted_before_the_sink(catalog, query, sink):
    assert net(catalog, query, sink) == ()


def test_an_expression_beside_the_key_columns_does_not_stop_it(catalog):
    assert net(catalog, "SELECT u.uid, u.acct, UPPER(c.color) AS color FROM users u JOIN colors c ON u.uid = c.uid") \
        == ("u__uid",)
