"""Python user functions on local Spark: scalar (row by row and vectorised), table and aggregate functions in
queries, views and an INSERT job; a function failing inside a job; and Nexmark q14 with a Python count_char."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from differential.nexmark_events import write_events
from shell.errors import StreamshellError
from shell.jobs.record import FAILED
from shell.results import JobStarted
from tests.spark.helpers import changes, run
from tests.spark.nexmark import BID_DDL

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "functions" / "text_functions.py"
FUNCTIONS = f"""
SET 'python.files' = '{EXAMPLE}';
CREATE TEMPORARY FUNCTION count_char AS 'text_functions.count_char' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION shout AS 'text_functions.shout' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION split_words AS 'text_functions.split_words' LANGUAGE PYTHON;
CREATE TEMPORARY FUNCTION median AS 'text_functions.median' LANGUAGE PYTHON;
"""
LINES = ["a cat", "", None, "the cool cats", "c"]


@pytest.fixture
def lines(session, tmp_path):
    """A bounded table of lines (one NULL, one empty) with a key, a number and an event time."""
    path = tmp_path / "lines.json"
    rows = [{"id": i, "k": i % 2, "x": float(i * 10), "line": line, "ts": f"2024-01-01 00:00:0{i}.000"}
            for i, line in enumerate(LINES)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run(session, FUNCTIONS + f"""
        CREATE TEMPORARY TABLE lines (id INT, k INT, x DOUBLE, line STRING, ts TIMESTAMP(3),
                                      WATERMARK FOR ts AS ts)
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json');""")
    return rows


def rows(session, sql: str) -> list[tuple]:
    out = changes(run(session, sql))
    assert {op for op, _ in out} <= {"+I"}, out
    return sorted((r for _, r in out), key=repr)


def test_scalar_functions_row_by_row_and_vectorised(session, lines):
    got = rows(session, "SELECT id, count_char(line, 'ca') AS c, shout(line) AS s FROM lines;")
    expected = [(r["id"], (r["line"] or "").count("c"), None if r["line"] is None else r["line"].upper() + "!")
                for r in lines]
    assert got == sorted(expected, key=repr)


def test_a_function_in_a_view_and_in_where(session, lines):
    run(session, "CREATE TEMPORARY VIEW counted AS SELECT id, count_char(line, 'c') AS c FROM lines;")
    assert rows(session, "SELECT id FROM counted WHERE c >= 2;") == [(3,)]


def test_table_function_with_lateral_table_and_left_join(session, lines):
    got = rows(session, "SELECT l.id, w.word, w.n FROM lines AS l, LATERAL TABLE(split_words(l.line)) AS w(word, n);")
    expected = [(r["id"], word, len(word)) for r in lines for word in (r["line"] or "").split()]
    assert got == sorted(expected, key=repr)
    outer = rows(session, "SELECT l.id, w.word FROM lines AS l "
                          "LEFT JOIN LATERAL TABLE(split_words(l.line)) AS w(word, n) ON TRUE;")
    padded = [(r["id"], word) for r in lines for word in ((r["line"] or "").split() or [None])]
    assert outer == sorted(padded, key=repr)


def test_aggregate_function_grouped_windowed_and_global(session, lines):
    def median(values):
        values = sorted(values)
        middle = len(values) // 2
        return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2

    by_key = changes(run(session, "SELECT k, median(x) AS m FROM lines GROUP BY k;"))
    final = {}
    for op, (k, m) in by_key:  # an updating result: the last value of each key counts
        if op in ("+I", "+U"):
            final[k] = m
    assert final == {k: median([r["x"] for r in lines if r["k"] == k]) for k in (0, 1)}
    windowed = rows(session, "SELECT window_start, median(x) AS m FROM TABLE(TUMBLE(TABLE lines, DESCRIPTOR(ts), "
                             "INTERVAL '1' HOUR)) GROUP BY window_start, window_end;")
    assert windowed == [(dt.datetime(2024, 1, 1), median([r["x"] for r in lines]))]


def test_insert_job_with_functions(session, lines, tmp_path):
    out = tmp_path / "out"
    run(session, f"""CREATE TEMPORARY TABLE words (id INT, word STRING, c BIGINT)
                     WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');""")
    started = run(session, "INSERT INTO words SELECT l.id, shout(w.word), count_char(w.word, 'c') "
                           "FROM lines AS l, LATERAL TABLE(split_words(l.line)) AS w(word, n);")
    assert isinstance(started, JobStarted)
    assert session.jobs.wait_all() == []
    written = sorted((json.loads(x)["id"], json.loads(x)["word"], json.loads(x)["c"])
                     for f in out.rglob("part-*") for x in f.read_text().splitlines())
    expected = sorted((r["id"], w.upper() + "!", w.count("c")) for r in lines for w in (r["line"] or "").split())
    assert written == expected


def test_a_failing_function_fails_the_job_with_one_line(session, lines, tmp_path):
    module = tmp_path / "broken_functions.py"
    module.write_text("from shell.udf import udf\n\n@udf(result_type='INT')\ndef inverse(x):\n    return 1 // x\n")
    run(session, f"""SET 'python.files' = '{EXAMPLE},{module}';
        CREATE TEMPORARY FUNCTION inverse AS 'broken_functions.inverse' LANGUAGE PYTHON;
        CREATE TEMPORARY TABLE sink (v INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "o"}',
                                                  'format' = 'json');
        SET 'restart-strategy.type' = 'none';""")
    run(session, "INSERT INTO sink SELECT inverse(id) FROM lines;")  # id 0 divides by zero
    (failed,) = session.jobs.wait_all()
    assert failed.status == FAILED
    assert failed.failure.startswith("Python function inverse ('broken_functions.inverse') failed: "
                                     "ZeroDivisionError"), failed.failure
    assert "\n" not in failed.failure and "Traceback" not in failed.failure
    with pytest.raises(StreamshellError, match="Python function inverse .* ZeroDivisionError"):
        rows(session, "SELECT inverse(id) FROM lines;")


# --- Nexmark q14 --------------------------------------------------------------------------------------------------

NEXMARK_Q14 = BID_DDL + """
CREATE TEMPORARY FUNCTION count_char AS 'text_functions.count_char' LANGUAGE PYTHON;
"""
# Nexmark's q14.sql (nexmark-flink/src/main/resources/queries), its INSERT INTO discard_sink made the bare query.
Q14 = """
SELECT
    auction,
    bidder,
    0.908 * price as price,
    CASE
        WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
        WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    `dateTime`,
    extra,
    count_char(extra, 'c') AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
"""


def expected_q14(path: Path) -> list[tuple]:
    """q14 computed from the file in plain Python: Nexmark's CountChar counts the first character of its
    second argument."""
    out = []
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["event_type"] != 2:
            continue
        bid = event["bid"]
        price = Decimal("0.908") * bid["price"]
        if not Decimal(1000000) < price < Decimal(50000000):
            continue
        when = dt.datetime.strptime(bid["dateTime"], "%Y-%m-%d %H:%M:%S.%f")
        kind = "dayTime" if 8 <= when.hour <= 18 else "nightTime" if when.hour <= 6 or when.hour >= 20 else "otherTime"
        out.append((bid["auction"], bid["bidder"], price, kind, when, bid["extra"], bid["extra"].count("c")))
    return out


def test_nexmark_q14_with_a_python_count_char(session, tmp_path):
    path = tmp_path / "nexmark.json"
    # 07:59:30 to about 08:01: bids of the hour before 8 ('otherTime') and after ('dayTime')
    write_events(path, 3000, seed=14, start=dt.datetime(2024, 1, 1, 7, 59, 30), gap_ms=40)
    expected = expected_q14(path)
    assert len(expected) > 50 and {e[3] for e in expected} == {"otherTime", "dayTime"}
    assert sum(e[6] for e in expected) > 0, "some extra strings hold a 'c'"
    run(session, f"SET 'python.files' = '{EXAMPLE}';" + NEXMARK_Q14.format(path=path))
    got = [(a, b, Decimal(str(p)), k, t, e, c) for a, b, p, k, t, e, c in rows(session, Q14)]
    assert Counter(got) == Counter(expected)
