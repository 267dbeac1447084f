"""CREATE TABLE ... LIKE merges the source table feature by feature, with Flink's strategies and defaults."""

import pytest

from shell.catalog.like import apply_like, strategies
from shell.catalog.store import Catalog
from shell.errors import CatalogError, UnsupportedFeatureError
from shell.sql.parse import parse_script

SOURCE = """CREATE TABLE src (
  id BIGINT, ts TIMESTAMP(3), doubled AS id * 2, part INT METADATA FROM 'partition' VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'kafka', 'topic' = 'a', 'properties.bootstrap.servers' = 'localhost:9092')"""


def derived(sql: str):
    catalog = Catalog()
    catalog.add(parse_script(SOURCE)[0].table)
    table = parse_script(sql)[0].table
    return apply_like(table, catalog.table(table.like.source))


def test_default_takes_everything_and_overwrites_options():
    t = derived("CREATE TABLE t (note STRING) WITH ('topic' = 'b') LIKE src")
    assert [c.name for c in t.columns] == ["id", "ts", "doubled", "part", "note"]
    assert t.options["topic"] == "b" and t.options["connector"] == "kafka"
    assert t.primary_key == ["id"] and t.watermark.column == "ts" and t.like is None


def test_excluding_parts():
    t = derived("CREATE TABLE t (note STRING) WITH ('connector' = 'print') LIKE src (EXCLUDING ALL)")
    assert [c.name for c in t.columns] == ["id", "ts", "note"]
    assert t.options == {"connector": "print"}
    assert t.primary_key == [] and t.watermark is None


def test_excluding_all_including_options():
    t = derived("CREATE TABLE t (note STRING) LIKE src (EXCLUDING ALL INCLUDING OPTIONS)")
    assert t.options["topic"] == "a" and t.watermark is None


def test_including_options_refuses_a_clash():
    with pytest.raises(CatalogError, match="option 'topic' is set in the new table and in 'src'"):
        derived("CREATE TABLE t (note STRING) WITH ('topic' = 'b') LIKE src (INCLUDING OPTIONS)")


def test_two_watermarks_need_overwriting():
    sql = "CREATE TABLE t (WATERMARK FOR ts AS ts) LIKE src"
    with pytest.raises(CatalogError, match="define a watermark"):
        derived(sql)
    t = derived("CREATE TABLE t (WATERMARK FOR ts AS ts) LIKE src (OVERWRITING WATERMARKS)")
    assert t.watermark.expression == "ts"


def test_a_column_declared_twice_is_refused():
    with pytest.raises(CatalogError, match="column 'id' is declared in the new table and in 'src'"):
        derived("CREATE TABLE t (id INT) LIKE src")


@pytest.mark.parametrize("options", [["OVERWRITING ALL"], ["INCLUDING EVERYTHING"], ["MERGING OPTIONS"]])
def test_bad_like_options(options):
    with pytest.raises((CatalogError, UnsupportedFeatureError)):
        strategies(options)
