"""The `filesystem` connector on local Spark: bounded and watched reads, bad lines kept aside, partitioned and
idempotent writes, and Flink's options checked at CREATE TABLE."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from decimal import Decimal
from pathlib import Path

import pytest

from shell.errors import OptionError
from shell.results import JobStarted, Rows
from tests.spark.helpers import changes, run, take

ALL_TYPES = """
CREATE TEMPORARY TABLE t (
  ti TINYINT, si SMALLINT, i INT, b BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(10, 2), flag BOOLEAN,
  s STRING, day DATE, ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), raw BYTES,
  r ROW<x INT, y STRING>, tags ARRAY<INT>, attrs MAP<STRING, BIGINT>
) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json');
"""


def write(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def rows_of(stream) -> list[tuple]:
    got = changes(stream)
    assert {op for op, _ in got} <= {"+I"}
    return sorted((row for _, row in got), key=repr)


def gather(stream, count: int, timeout: float = 90) -> list:
    """The first column of the next `count` rows of a running (unbounded) result, without cancelling it."""
    deadline = time.monotonic() + timeout
    out: list = []
    for batch in stream.batches():
        out += [change.row[0] for change in batch or ()]
        if len(out) >= count:
            return out
        assert time.monotonic() < deadline, f"only {out} after {timeout} s"
    return out


def data_files(folder: Path) -> dict[str, str]:
    """Every visible file under `folder` (relative path -> content)."""
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(("_", ".")) for part in p.relative_to(folder).parts)
    }


def test_bounded_json_directory_reads_every_type_nulls_and_nested_values(session, tmp_path):
    folder = tmp_path / "in"
    full = {
        "ti": 1, "si": 2, "i": 3, "b": 4_000_000_000, "f": 1.5, "d": 2.25, "dec": 12345678.91, "flag": True,
        "s": "héllo", "day": "2024-02-29", "ts": "2024-01-02 03:04:05.678", "ltz": "2024-01-02 03:04:05.678Z",
        "raw": "AQID", "r": {"x": 7, "y": "why"}, "tags": [1, None, 3], "attrs": {"k": 9, "n": None},
    }  # fmt: skip
    write(folder / "a.json", json.dumps(full))
    write(folder / "sub" / "b.json", json.dumps({k: None for k in full}), "{}")
    run(session, ALL_TYPES.format(path=folder))
    rows = rows_of(run(session, "SELECT * FROM t;"))
    assert len(rows) == 3
    assert rows.count((None,) * 16) == 2, "explicit nulls and missing keys are both NULL"
    (row,) = [r for r in rows if r[0] is not None]
    assert row[:8] == (1, 2, 3, 4_000_000_000, 1.5, 2.25, Decimal("12345678.91"), True)
    assert row[8:12] == (
        "héllo",
        dt.date(2024, 2, 29),
        dt.datetime(2024, 1, 2, 3, 4, 5, 678000),
        dt.datetime(2024, 1, 2, 3, 4, 5, 678000),
    )
    assert bytes(row[12]) == b"\x01\x02\x03"
    assert (row[13].x, row[13].y) == (7, "why")
    assert row[14] == [1, None, 3]
    assert row[15] == {"k": 9, "n": None}


def test_a_single_file_path_and_file_metadata(session, tmp_path):
    file = write(tmp_path / "one.json", '{"id": 1}', '{"id": 2}')
    run(
        session,
        f"""CREATE TEMPORARY TABLE t (id INT, name STRING METADATA FROM 'file.name' VIRTUAL,
              size BIGINT METADATA FROM 'file.size' VIRTUAL)
            WITH ('connector' = 'filesystem', 'path' = 'file://{file}', 'format' = 'json');""",
    )
    assert rows_of(run(session, "SELECT * FROM t;")) == [(1, "one.json", 20), (2, "one.json", 20)]


def test_only_files_matching_the_path_pattern_are_read(session, tmp_path):
    write(tmp_path / "in" / "a.json", '{"id": 1}')
    write(tmp_path / "in" / "skip" / "b.json", '{"id": 2}')
    write(tmp_path / "in" / "c.txt", "not json")
    run(
        session,
        f"""CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "in"}',
              'format' = 'json', 'source.path.regex-pattern' = '.*/in/[^/]*\\.json');""",
    )
    assert rows_of(run(session, "SELECT * FROM t;")) == [(1,)]


def test_headerless_csv_file(session, tmp_path):
    folder = tmp_path / "csv"
    (folder).mkdir()
    (folder / "p.csv").write_bytes(b'1,ada,2.5\r\n2,"b, c",\n\n3,,7\n')
    run(
        session,
        f"""CREATE TEMPORARY TABLE people (id INT, name STRING, score DOUBLE)
            WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'csv');""",
    )
    assert rows_of(run(session, "SELECT * FROM people;")) == [(1, "ada", 2.5), (2, "b, c", None), (3, None, 7.0)]


def test_a_bad_line_is_kept_aside_with_its_file_and_line_number(session, tmp_path):
    folder = tmp_path / "in"
    file = write(folder / "events.json", '{"id": 1}', "{not json", '{"id": "x"}', '{"id": 4}')
    run(session, f"CREATE TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json');")
    assert rows_of(run(session, "SELECT id FROM t;")) == [(1,), (4,)]
    errors = run(session, "SHOW ERRORS FOR t;")
    assert isinstance(errors, Rows)
    found = sorted((position, error, value) for _, position, error, _, value in errors.rows)
    assert found == [
        (f"file:{file}:2", "malformed JSON", "{not json"),
        (f"file:{file}:3", "field 'id': expected INT", '{"id": "x"}'),
    ]


@pytest.mark.parametrize("sink", ["filesystem", "print"])
def test_a_filtering_job_keeps_bad_lines_in_the_same_query(session, tmp_path, sink):
    """A stateless job reads and decodes its input once: no second query for the bad records. A sink that writes
    in one pass (filesystem) counts them on the way; print reads its batch twice, from a cache."""
    folder = tmp_path / "in"
    write(folder / "events.json", '{"id": 1}', "{not json", '{"id": 4}', '{"id": 6}', '{"id": "x"}')
    target = f"'connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'json'" if sink == "filesystem" else "'connector' = 'print'"
    run(session, f"""CREATE TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json');
        CREATE TABLE out (id INT, twice INT) WITH ({target});""")
    started = run(session, "INSERT INTO out SELECT id, id * 2 FROM t WHERE id > 1;")
    job = session.jobs.jobs[started.job_id]
    job.await_end()
    assert job.side_queries == [] and job.status == "FINISHED"
    if sink == "filesystem":
        written = sorted(json.loads(line)["twice"] for f in (tmp_path / "out").rglob("part-*") for line in f.read_text().splitlines())
        assert written == [8, 12]
    assert sorted(e[2] for e in run(session, "SHOW ERRORS FOR t;").rows) == ["field 'id': expected INT", "malformed JSON"]


DATAGEN = """
CREATE TEMPORARY TABLE gen (id BIGINT, name STRING, price DOUBLE, qty INT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '20',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20', 'fields.name.length' = '5'
);
"""


def test_insert_then_select_back_and_a_second_run_appends(session, tmp_path):
    out = tmp_path / "out"
    run(session, DATAGEN)
    run(
        session,
        f"""CREATE TEMPORARY TABLE sink (id BIGINT, name STRING, price DOUBLE, qty INT)
            WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');""",
    )
    assert isinstance(run(session, "INSERT INTO sink SELECT * FROM gen;"), JobStarted)
    assert session.jobs.wait_all() == []
    expected = rows_of(run(session, "SELECT * FROM gen;"))
    assert len(expected) == 20
    assert rows_of(run(session, "SELECT * FROM sink;")) == expected
    first = data_files(out)
    (job,) = session.jobs.jobs.values()
    query_id = json.loads((job.checkpoint / "metadata").read_text())["id"]
    assert first and all(name.startswith(f"part-{query_id}-") for name in first), "named by the job's query id"

    run(session, "INSERT INTO sink SELECT * FROM gen;")
    assert session.jobs.wait_all() == []
    second = data_files(out)
    assert {k: second[k] for k in first} == first, "the first job's files are untouched"
    assert len(second) > len(first)
    assert rows_of(run(session, "SELECT * FROM sink;")) == sorted(expected * 2, key=repr)
    assert not [p for p in out.iterdir() if p.name.startswith("_streamshell")], "no staging folder is left"


def test_a_replayed_batch_replaces_its_own_files(session, tmp_path, spark_runtime):
    from shell.catalog.model import Column, TableDef
    from shell.connectors.base import ConnectorContext
    from shell.connectors.filesystem import FilesystemConnector

    spark = spark_runtime.get()
    table = TableDef("t", [Column("id", "INT")], {"connector": "filesystem", "path": str(tmp_path / "o"), "format": "json"})
    connector, ctx = FilesystemConnector(), ConnectorContext(spark, tmp_path)
    spark.sparkContext.setLocalProperty("sql.streaming.queryId", "q1")  # what Spark sets inside foreachBatch
    try:
        connector.write_batch(ctx, table, spark.range(3).selectExpr("CAST(id AS INT) AS id"), 5)
        connector.write_batch(ctx, table, spark.range(1).selectExpr("CAST(id + 10 AS INT) AS id"), 5)  # the replay
        connector.write_batch(ctx, table, spark.range(1).selectExpr("CAST(id + 20 AS INT) AS id"), 6)
    finally:
        spark.sparkContext.setLocalProperty("sql.streaming.queryId", None)
    files = data_files(tmp_path / "o")
    assert sorted(json.loads(line)["id"] for text in files.values() for line in text.splitlines()) == [10, 20]
    assert all(name.startswith(("part-q1-00000005-", "part-q1-00000006-")) for name in files)


def test_partitioned_write_and_read_back(session, tmp_path):
    out = tmp_path / "parts"
    run(
        session,
        f"""CREATE TEMPORARY TABLE logs (msg STRING, n INT, dt STRING, h INT) PARTITIONED BY (dt, h)
            WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');""",
    )
    run(
        session,
        """INSERT INTO logs VALUES ('a', 1, '2024-01-01', 0), ('b', 2, '2024-01-01', 1),
                                  ('c', 3, '2024-01-02', 0), ('d', 4, NULL, 0), ('e', 5, 'x/y: z', 2);""",
    )
    files = data_files(out)
    folders = sorted(str(Path(name).parent) for name in files)
    assert folders == [
        "dt=2024-01-01/h=0", "dt=2024-01-01/h=1", "dt=2024-01-02/h=0", "dt=__DEFAULT_PARTITION__/h=0", "dt=x%2Fy%3A z/h=2",
    ]  # fmt: skip
    assert all("dt" not in json.loads(text) for text in files.values()), "partition columns are folders, not data"
    assert rows_of(run(session, "SELECT * FROM logs;")) == [
        ("a", 1, "2024-01-01", 0), ("b", 2, "2024-01-01", 1), ("c", 3, "2024-01-02", 0), ("d", 4, None, 0),
        ("e", 5, "x/y: z", 2),
    ]  # fmt: skip
    assert rows_of(run(session, "SELECT msg FROM logs WHERE dt = '2024-01-01' AND h = 1;")) == [("b",)]


def test_a_watched_directory_delivers_files_added_later(session, tmp_path):
    folder = tmp_path / "watched"
    write(folder / "first.json", '{"id": 1}')
    run(
        session,
        f"""CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}',
              'format' = 'json', 'source.monitor-interval' = '1 s');""",
    )
    stream = run(session, "SELECT id FROM t;")
    assert not stream.bounded
    try:
        assert gather(stream, 1) == [1]
        hidden = write(folder / ".second.json.tmp", '{"id": 2}', '{"id": 3}')
        os.rename(hidden, folder / "second.json")  # a file appears whole
        assert sorted(gather(stream, 2)) == [2, 3]
    finally:
        stream.cancel()


def test_a_watched_directory_that_does_not_exist_yet_is_created(session, tmp_path):
    folder = tmp_path / "later"
    run(
        session,
        f"""CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}',
              'format' = 'json', 'source.monitor-interval' = '1 s');""",
    )
    stream = run(session, "SELECT id FROM t;")
    write(folder / "a.json", '{"id": 5}')
    assert take(stream, 1, timeout=90) == [("+I", (5,))]


def test_a_missing_bounded_path_is_a_clear_error(session, tmp_path):
    run(
        session,
        f"CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'nope'}', 'format' = 'json');",
    )
    with pytest.raises(OptionError, match="does not exist"):
        run(session, "SELECT * FROM t;")


def test_raw_format_reads_one_line_per_record_and_round_trips(session, tmp_path):
    folder = tmp_path / "raw"
    (folder).mkdir()
    (folder / "log.txt").write_bytes("first line\r\nsecond, with ünïcode\nlast without newline".encode())
    run(session, f"CREATE TEMPORARY TABLE lines (line STRING) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'raw');")
    expected = [("first line",), ("last without newline",), ("second, with ünïcode",)]
    assert rows_of(run(session, "SELECT * FROM lines;")) == expected
    run(session, f"CREATE TEMPORARY TABLE copy (line STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'c'}', 'format' = 'raw');")
    run(session, "INSERT INTO copy SELECT * FROM lines;")
    assert session.jobs.wait_all() == []
    assert rows_of(run(session, "SELECT * FROM copy;")) == expected


def test_a_changelog_format_passes_the_row_kind_through(session, tmp_path, spark_runtime):
    from shell.catalog.model import Column, TableDef
    from shell.connectors.base import ConnectorContext
    from shell.connectors.filesystem import FilesystemConnector

    folder = tmp_path / "cdc"
    write(
        folder / "c.json",
        '{"before": null, "after": {"id": 1, "v": "a"}, "op": "c"}',
        '{"before": {"id": 1, "v": "a"}, "after": {"id": 1, "v": "b"}, "op": "u"}',
    )
    table = TableDef(
        "cdc", [Column("id", "INT"), Column("v", "STRING")],
        {"connector": "filesystem", "path": str(folder), "format": "debezium-json"},
    )  # fmt: skip
    spark = spark_runtime.get()
    frame = FilesystemConnector().source(ConnectorContext(spark, tmp_path), table).frame
    got: list = []
    query = (
        frame.writeStream.foreachBatch(lambda batch, _: got.extend(batch.select("__op", "id", "v").collect()))
        .trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    query.awaitTermination()
    assert [tuple(r) for r in got] == [("+I", 1, "a"), ("-U", 1, "a"), ("+U", 1, "b")]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ("'format' = 'json'", "'path'"),
        ("'path' = '/tmp/x', 'format' = 'xml'", "'format'"),
        ("'path' = '/tmp/x'", "'format'"),
        ("'path' = '/tmp/x', 'format' = 'json', 'source.monitor-interval' = 'soon'", "'source.monitor-interval'"),
        ("'path' = '/tmp/x', 'format' = 'json', 'sink.rolling-policy.rollover-interval' = 'x'", "'sink.rolling-policy.rollover-interval'"),
        ("'path' = '/tmp/x', 'format' = 'json', 'source.monitor-intervall' = '1 s'", "'source.monitor-intervall'"),
        ("'path' = '/tmp/x', 'format' = 'json', 'errors.mode' = 'drop'", "'errors.mode'"),
    ],
)
def test_bad_options_are_refused_at_create_table(session, options, named):
    with pytest.raises(OptionError) as info:
        run(session, f"CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', {options});")
    assert named in info.value.message


def test_flink_options_are_accepted(session):
    run(
        session,
        """CREATE TEMPORARY TABLE t (id INT, dt STRING) PARTITIONED BY (dt) WITH (
             'connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'csv', 'csv.field-delimiter' = ';',
             'sink.rolling-policy.file-size' = '128MB', 'sink.rolling-policy.rollover-interval' = '30 min',
             'sink.partition-commit.trigger' = 'process-time', 'sink.partition-commit.policy.kind' = 'success-file',
             'partition.default-name' = 'none', 'partition.time-extractor.timestamp-pattern' = '$dt',
             'auto-compaction' = 'true', 'errors.mode' = 'ignore');""",
    )
