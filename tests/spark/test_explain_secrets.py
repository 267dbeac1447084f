"""EXPLAIN shows Spark's plan, and Spark's plan shows a source's options: no secret of the table may be in it.

The unit tier's tests/unit/test_secrets_nowhere.py plants a secret in every kind of secret-bearing option and
runs every statement that can show it; EXPLAIN is the one that needs Spark, so it is checked here. The Kafka
source is planned, not read (EXPLAIN starts no query), so no broker is needed: only the shell's reachability
check is told that the broker answers.
"""

from __future__ import annotations

import secrets as random_secrets

from shell.connectors import reachability
from shell.results import Text
from shell.secrets import REDACTED
from tests.spark.helpers import run


class Answering:
    """A connection that opened: the shell's reachability check passes."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def test_explain_shows_no_secret_of_the_table(session, monkeypatch):
    monkeypatch.setattr(reachability.socket, "create_connection", lambda *args, **kwargs: Answering())
    planted = {label: f"S{random_secrets.token_hex(8)}" for label in
               ("jaas", "keystore key", "truststore password", "api key", "url password", "env")}  # fmt: skip
    monkeypatch.setenv("STREAMSHELL_TEST_EXPLAIN_SECRET", planted["env"])
    run(session, f"""
        CREATE TABLE orders (id INT, customer STRING) WITH (
          'connector' = 'kafka', 'topic' = 'orders', 'format' = 'json',
          'properties.bootstrap.servers' = 'SASL_SSL://someone:{planted["url password"]}@localhost:9092',
          'properties.sasl.jaas.config' =
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{planted["jaas"]}";',
          'properties.ssl.keystore.key' = '{planted["keystore key"]}',
          'properties.ssl.truststore.password' = '{planted["truststore password"]}',
          'properties.api-key' = '{planted["api key"]}',
          'properties.ssl.key.password' = '${{env:STREAMSHELL_TEST_EXPLAIN_SECRET}}'
        );
    """)  # fmt: skip
    result = run(session, "EXPLAIN SELECT customer, COUNT(*) AS n FROM orders WHERE id > 0 GROUP BY customer;")
    assert isinstance(result, Text)
    plan = result.text
    assert "== streamshell plan ==" in plan and "orders" in plan, plan
    leaked = [label for label, value in planted.items() if value in plan]
    assert not leaked, f"{leaked} in\n{plan}"
    assert "StreamingRelation kafka" in plan, plan  # Spark's plan of the Kafka source is there
    assert "upsertKey=[customer]" in plan, plan  # and what is no secret is not hidden (`upsertKey` is no credential)
    assert f"={REDACTED}" not in plan, plan
