"""A WATERMARK that cannot run is refused by CREATE TABLE and ALTER TABLE, not later by every query of the table."""

from __future__ import annotations

import pytest

from shell.errors import CatalogError, UnsupportedFeatureError
from shell.session import Session, SessionOptions
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit
WITH = "WITH ('connector' = 'filesystem', 'path' = '/tmp/nowhere', 'format' = 'json')"


@pytest.fixture
def session(tmp_path):
    session = Session(SessionOptions(home=tmp_path / "home"))
    yield session
    session.close()


def run(session: Session, sql: str) -> None:
    for statement in parse_script(sql):
        session.execute(statement)


@pytest.mark.parametrize(("watermark", "error", "said"), [
    ("ts - INTERVAL 'x' SECOND", UnsupportedFeatureError, "watermark expression 'ts - INTERVAL 'x' SECOND'"),
    ("nosuchfn(ts)", UnsupportedFeatureError, "watermark expression 'NOSUCHFN(ts)'"),
    ("id", UnsupportedFeatureError, "watermark expression 'id'"),
])  # fmt: skip
def test_a_watermark_expression_spark_cannot_keep_is_refused_at_create_table(session, watermark, error, said):
    with pytest.raises(error, match=said.replace("(", r"\(").replace(")", r"\)")) as refused:
        run(session, f"CREATE TABLE w (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS {watermark}) {WITH};")
    assert "INTERVAL 'n' SECOND" in refused.value.hint
    with pytest.raises(CatalogError):  # nothing was created
        session.catalog.table("w")


def test_a_watermark_on_a_column_that_is_no_time_or_no_column_is_refused(session):
    with pytest.raises(CatalogError, match="'id' of table 'w' is INT, not a time"):
        run(session, f"CREATE TABLE w (id INT, ts TIMESTAMP(3), WATERMARK FOR id AS id) {WITH};")
    with pytest.raises(CatalogError, match="'tss' is not a column of table 'w'") as refused:
        run(session, f"CREATE TABLE w (id INT, ts TIMESTAMP(3), WATERMARK FOR tss AS tss) {WITH};")
    assert "ts" in (refused.value.hint or "")


def test_a_watermark_that_runs_is_kept_and_alter_table_cannot_break_it(session):
    run(session, f"CREATE TABLE w (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) {WITH};")
    assert session.catalog.table("w").watermark.expression == "ts - INTERVAL '5' SECOND"
    with pytest.raises(CatalogError, match="not a time"):
        run(session, "ALTER TABLE w MODIFY ts STRING;")
    assert session.catalog.table("w").column("ts").data_type.upper().startswith("TIMESTAMP")
