"""Golden output of the result printers (tableau, changelog, json) that script mode and pipes use.

Users diff this output and feed it to other programs, so any change to it must be deliberate: these tests compare
whole outputs, byte for byte.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal

import pytest

from shell.render.printers import PRINTERS, PrinterOptions
from shell.results import Change, ChangeStream, Message, Rows, Text

TS = dt.datetime(2024, 5, 1, 10, 0, 0, 123456)


def stream() -> ChangeStream:
    s = ChangeStream(columns=["id", "name", "amount", "ts"], types=["bigint", "string", "decimal(10,2)", "timestamp"])
    s.publish([Change("+I", (1, "alice", Decimal("2.50"), TS))])
    s.publish(
        [
            Change("-U", (1, "alice", Decimal("2.50"), TS)),
            Change("+U", (1, "alice", Decimal("3.75"), None)),
            Change("-D", (2, None, None, None)),
        ]
    )
    s.publish([])  # an empty micro-batch prints nothing
    s.finish()
    return s


def run(mode: str, width: int = 40) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    printer = PRINTERS[mode](out, err, PrinterOptions(width))
    printer.message(Message("Table has been created."))
    printer.rows(Rows(["name", "value"], [("a-very-long-setting-name", None), ("b", 2)]))
    printer.text(Text("CREATE TABLE t (\n  id BIGINT\n)\n"))
    printer.changes(stream())
    return out.getvalue(), err.getvalue()


TABLEAU = """\
[INFO] Table has been created.
+--------------------------+--------+
|                     name |  value |
+--------------------------+--------+
| a-very-long-setting-name | <NULL> |
|                        b |      2 |
+--------------------------+--------+
2 rows in set
CREATE TABLE t (
  id BIGINT
)
+----+----------------------+------------------------------------------+--------------+-------------------------+
| op |                   id |                                     name |       amount |                      ts |
+----+----------------------+------------------------------------------+--------------+-------------------------+
| +I |                    1 |                                    alice |         2.50 | 2024-05-01 10:00:00.123 |
| -U |                    1 |                                    alice |         2.50 | 2024-05-01 10:00:00.123 |
| +U |                    1 |                                    alice |         3.75 |                  <NULL> |
| -D |                    2 |                                   <NULL> |       <NULL> |                  <NULL> |
+----+----------------------+------------------------------------------+--------------+-------------------------+
Received a total of 4 rows
"""

CHANGELOG = """\
[INFO] Table has been created.
+--------------------------+--------+
|                     name |  value |
+--------------------------+--------+
| a-very-long-setting-name | <NULL> |
|                        b |      2 |
+--------------------------+--------+
2 rows in set
CREATE TABLE t (
  id BIGINT
)
+I[1, alice, 2.50, 2024-05-01 10:00:00.123]
-U[1, alice, 2.50, 2024-05-01 10:00:00.123]
+U[1, alice, 3.75, <NULL>]
-D[2, <NULL>, <NULL>, <NULL>]
"""

JSON_OUT = """\
{"op": "+I", "row": {"name": "a-very-long-setting-name", "value": null}}
{"op": "+I", "row": {"name": "b", "value": 2}}
{"op": "+I", "row": {"id": 1, "name": "alice", "amount": 2.5, "ts": "2024-05-01 10:00:00.123"}}
{"op": "-U", "row": {"id": 1, "name": "alice", "amount": 2.5, "ts": "2024-05-01 10:00:00.123"}}
{"op": "+U", "row": {"id": 1, "name": "alice", "amount": 3.75, "ts": null}}
{"op": "-D", "row": {"id": 2, "name": null, "amount": null, "ts": null}}
"""

JSON_ERR = """\
[INFO] Table has been created.
CREATE TABLE t (
  id BIGINT
)
"""


def test_tableau_golden():
    assert run("tableau") == (TABLEAU, "")


def test_changelog_golden():
    assert run("changelog") == (CHANGELOG, "")


def test_json_golden_only_objects_on_stdout():
    out, err = run("json")
    assert (out, err) == (JSON_OUT, JSON_ERR)
    for line in out.splitlines():
        record = json.loads(line)
        assert set(record) == {"op", "row"}


def test_tableau_cuts_wide_values_at_the_column_cap():
    out, _ = run("tableau", width=12)
    assert "| a-very-lo... | <NULL> |" in out
    assert "| +I |            1 |        alice |         2.50 | 2024-05-0... |" in out


def test_tableau_empty_results():
    out, err = io.StringIO(), io.StringIO()
    printer = PRINTERS["tableau"](out, err, PrinterOptions())
    printer.rows(Rows(["table name"], []))
    empty = ChangeStream(columns=["x"], types=["int"])
    empty.finish()
    printer.changes(empty)
    assert out.getvalue() == "Empty set\n+----+-------------+\n| op |           x |\n+----+-------------+\nReceived a total of 0 rows\n"


@pytest.mark.parametrize("mode", sorted(PRINTERS))
def test_a_failing_query_raises_after_what_it_printed(mode):
    failing = ChangeStream(columns=["x"], types=["int"])
    failing.publish([Change("+I", (1,))])
    failing.finish(RuntimeError("broker down"))
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(RuntimeError, match="broker down"):
        PRINTERS[mode](out, err, PrinterOptions()).changes(failing)
    assert "1" in out.getvalue()


CSV_OUT = (
    "name,value\r\n"
    "a-very-long-setting-name,\r\n"
    "b,2\r\n"
    "op,id,name,amount,ts\r\n"
    "+I,1,alice,2.50,2024-05-01 10:00:00.123\r\n"
    "-U,1,alice,2.50,2024-05-01 10:00:00.123\r\n"
    "+U,1,alice,3.75,\r\n"
    "-D,2,,,\r\n"
)


def test_csv_golden_an_unbounded_result_is_its_changelog_with_an_op_column():
    out, err = run("csv")
    assert (out, err) == (CSV_OUT, JSON_ERR), "messages go to stderr, only CSV on stdout"


def test_csv_a_bounded_result_is_its_final_rows_once_complete():
    bounded = ChangeStream(columns=["account", "orders"], types=["string", "bigint"], key=["account"], bounded=True)
    bounded.publish([Change("+I", ("a", 1)), Change("+I", ("b", 1))])
    bounded.publish([Change("-U", ("a", 1)), Change("+U", ("a", 2)), Change("-D", ("b", 1)), Change("+I", ("c", 5))])
    bounded.finish()
    out, err = io.StringIO(), io.StringIO()
    PRINTERS["csv"](out, err, PrinterOptions()).changes(bounded)
    assert out.getvalue() == "account,orders\r\na,2\r\nc,5\r\n"


def test_csv_quotes_what_needs_it_and_reads_back_with_pythons_csv_module():
    import csv

    awkward = ["plain", "with, comma", 'with "quotes"', "two\nlines", "", None, " padded "]
    out, err = io.StringIO(), io.StringIO()
    PRINTERS["csv"](out, err, PrinterOptions()).rows(Rows([f"c{i}" for i in range(len(awkward))], [tuple(awkward)]))
    assert '"with, comma","with ""quotes""","two\nlines"' in out.getvalue()
    header, row = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    assert header == [f"c{i}" for i in range(len(awkward))]
    assert row == ["plain", "with, comma", 'with "quotes"', "two\nlines", "", "", " padded "], "NULL is an empty field"
