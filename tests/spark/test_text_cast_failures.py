"""CAST of text fails the query where Flink's fails, with a message naming the text and the type, and gives Flink's
value where Flink reads the text (shell/sql/text_casts.py). Which text Flink 2.3 fails on was taken from Flink
itself (a CAST per text over a filesystem table); TRY_CAST's NULLs for the same text are compared with Flink's by
the `cast_text_*` differential cases."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from shell.errors import StreamshellError
from tests.spark.helpers import changes, run

# Text Flink's CAST fails on (java.lang.NumberFormatException, TableException "Cannot parse", DateTimeException, ...)
FAILS = {
    "INT": ["\t42", "1e3", "2147483648", "", "abc", "- 5"],
    "BIGINT": ["9223372036854775808", "1e3", " "],
    "DECIMAL(5, 2)": ["1000", "00001.50", "1,5", "NaN", ""],
    "DOUBLE": ["nan", "inf", "", "1,5"],
    "BOOLEAN": [" true ", "on", "2", ""],
    "DATE": ["2024-01-05T10:00:00", "2024-02-30", "10000-01-01", ""],
    "TIMESTAMP(3)": [" 2024-01-05 10:00:00 ", "2024-01-05T10:00:00", "2024-01-05 10:00", "2024-01-05 10:00:60", ""],
}

# Text Flink's CAST reads, and what it reads it as
READS = {
    "INT": [(" 42 ", 42), ("+5", 5), ("-1.9", -1), (".", 0), (None, None)],
    "BIGINT": (("-9223372036854775808", -9223372036854775808), ("9223372036854775807.5", 9223372036854775807)),
    "DECIMAL(5, 2)": [("1.005", Decimal("1.01")), ("-1.005", Decimal("-1.01")), ("\t1.5\n", Decimal("1.50")), ("1e2", Decimal("100.00"))],
    "DOUBLE": [(" 1.5 ", 1.5), ("1e3", 1000.0), ("0x1p3", 8.0)],
    "BOOLEAN": [("TRUE", True), ("y", True), ("0", False), ("No", False)],
    "DATE": [("2024-1-5", dt.date(2024, 1, 5)), (" 2024-01-05", dt.date(2024, 1, 5)), ("2024-01-05 10:00:00", dt.date(2024, 1, 5)),
             ("2024", dt.date(2024, 1, 1))],
    "TIMESTAMP(3)": [("2024-1-5 1:2:3", dt.datetime(2024, 1, 5, 1, 2, 3)),
                     ("2024-01-05 10:00:00.1239", dt.datetime(2024, 1, 5, 10, 0, 0, 123000)),
                     ("2024-02-30 10:00:00", dt.datetime(2024, 2, 29, 10)), ("2024-01-05 24:00:00", dt.datetime(2024, 1, 6))],
}


def texts_table(session, tmp_path: Path, values) -> None:
    path = tmp_path / "texts.json"
    path.write_text("".join(json.dumps({"id": i, "s": v}) + "\n" for i, v in enumerate(values)), encoding="utf-8")
    run(session, f"CREATE TEMPORARY TABLE texts (id INT, s STRING) WITH "
                 f"('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json');")  # fmt: skip


@pytest.mark.parametrize("target, text", [(t, v) for t, values in FAILS.items() for v in values])
def test_cast_fails_the_query_where_flink_fails(session, tmp_path, target, text):
    texts_table(session, tmp_path, ["1", text])
    with pytest.raises(StreamshellError) as info:
        changes(run(session, f"SELECT id, CAST(s AS {target}) AS v FROM texts WHERE id = 1;"))
    message = str(info.value)
    assert f"CAST of '{text}' to " in message and "Flink cannot read this text as" in message, message


@pytest.mark.parametrize("target", READS)
def test_cast_gives_flinks_value_where_flink_reads_the_text(session, tmp_path, target):
    texts = READS[target]
    texts_table(session, tmp_path, [text for text, _ in texts])
    got = dict(row for _, row in changes(run(session, f"SELECT id, CAST(s AS {target}) AS v FROM texts;")))
    assert [got[i] for i in range(len(texts))] == [value for _, value in texts]
