"""Case folders, and the rules both sides of a differential test share. Standard library only.

Why it exists: the Flink runner (in .venv-flink) and the comparison (in streamshell's .venv) must read a case
the same way and turn a changelog into final rows the same way, or a difference would be ours, not the
engines'. So both import this module, and it imports nothing outside the standard library.

A case is a folder `tests/differential/cases/<name>/` with

* `case.sql`: the DDL, written once in Flink's syntax (`'connector' = 'filesystem'`, `'path' = '${data}/x.json'`,
  `'format' = 'json' | 'debezium-json'`), then the query as the last statement. `${data}` is the case folder.
* `case.json`: `{"description": ..., "covers": [...], "key": [...], "default": true}`. `key` (optional) names
  the result's unique key, the GROUP BY columns for an aggregation: streamshell may emit an upsert stream
  (`+U` without `-U`), which is materialized by that key. `default` puts the case in the default test run.
  `known_difference` (optional) says why streamshell's result is known to differ from Flink's: the case still
  runs and is expected to fail (pytest's strict xfail, so it is reported when it starts to pass).
  `wall_clock` (optional) says, for a query over the wall clock (PROCTIME()), which part of Flink's result depends
  on when it runs and why the result compared does not.
* data files, one JSON object per line; for changelog tables Debezium envelopes
  `{"before": ..., "after": ..., "op": "c|u|d"}`.

Rows are compared after `normalize_row`: numbers as int when integral, else float rounded to 10 significant
digits (so DECIMAL 12.50, 12.5 and 12.500000001 agree), timestamps as `yyyy-MM-dd HH:mm:ss.SSS`, NULL as None.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parent.parent
CASES_DIR = REPO / "tests" / "differential" / "cases"
DATA_PLACEHOLDER = "${data}"

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = "+I", "-U", "+U", "-D"
OPS = (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE)


class CaseError(Exception):
    """A case folder that cannot be used as it is."""


@dataclass(frozen=True)
class Case:
    name: str
    folder: Path
    sql: str  # case.sql as written, with the ${data} placeholder
    statements: tuple[str, ...]  # all statements, the query last
    description: str = ""
    covers: tuple[str, ...] = ()
    key: tuple[str, ...] = ()
    default: bool = False
    known_difference: str = ""  # why the result differs from Flink's (the case is then an expected failure)
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def ddl(self) -> tuple[str, ...]:
        return self.statements[:-1]

    @property
    def query(self) -> str:
        return self.statements[-1]

    def filled(self, text: str, data_dir: Path | None = None) -> str:
        """`text` with ${data} replaced by the case folder (or `data_dir`)."""
        return text.replace(DATA_PLACEHOLDER, str((data_dir or self.folder).resolve()))

    def script(self, data_dir: Path | None = None) -> str:
        """The whole case as one script: every statement, placeholders filled, each ended by ';'."""
        return "".join(self.filled(s, data_dir) + ";\n" for s in self.statements)

    def script_keeping_lines(self, data_dir: Path | None = None) -> str:
        """case.sql itself with placeholders filled, so an error's line:col points into case.sql."""
        text = self.filled(self.sql, data_dir).rstrip()
        return text + ("\n" if text.endswith(";") else ";\n")

    def files(self) -> list[Path]:
        return sorted(p for p in self.folder.rglob("*") if p.is_file() and not p.name.startswith("."))

    def digest(self, *extra: bytes) -> str:
        """A hash of every file of the case (names and bytes), and of `extra`."""
        h = hashlib.sha256()
        for p in self.files():
            h.update(str(p.relative_to(self.folder)).encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
        for e in extra:
            h.update(e + b"\0")
        return h.hexdigest()


def load_case(folder: Path) -> Case:
    folder = Path(folder)
    sql_file, meta_file = folder / "case.sql", folder / "case.json"
    if not sql_file.is_file():
        raise CaseError(f"{folder}: no case.sql")
    sql = sql_file.read_text()
    statements = tuple(split_statements(sql))
    if not statements:
        raise CaseError(f"{sql_file}: no statement")
    if not re.match(r"(?is)^\s*(SELECT|WITH)\b", statements[-1]):
        raise CaseError(f"{sql_file}: the last statement must be the query (SELECT ...)")
    meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
    unknown = set(meta) - {"description", "covers", "key", "default", "known_difference", "wall_clock"}
    if unknown:
        raise CaseError(f"{meta_file}: unknown keys {sorted(unknown)}")
    return Case(
        name=folder.name,
        folder=folder,
        sql=sql,
        statements=statements,
        description=meta.get("description", ""),
        covers=tuple(meta.get("covers", ())),
        key=tuple(meta.get("key", ())),
        default=bool(meta.get("default", False)),
        known_difference=str(meta.get("known_difference", "")),
        meta=meta,
    )


def load_cases(names: Iterable[str] | None = None, root: Path = CASES_DIR) -> list[Case]:
    """Every case under `root` (sorted by name), or the named ones (an unknown name is an error)."""
    folders = {p.name: p for p in sorted(root.iterdir()) if (p / "case.sql").is_file()}
    if names is None:
        return [load_case(p) for p in folders.values()]
    missing = [n for n in names if n not in folders]
    if missing:
        raise CaseError(f"no such case: {', '.join(missing)} (known: {', '.join(folders)})")
    return [load_case(folders[n]) for n in names]


# --- statements -----------------------------------------------------------------------------------------------


def split_statements(sql: str) -> list[str]:
    """Statements split on top-level ';' (not inside '...', "...", `...`, -- or /* */ comments), stripped; comments
    are dropped but for hints (`/*+ ... */`)."""
    out, buf, i, n = [], [], 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:  # doubled quote inside
                        j += 2
                        continue
                    break
                j += 1
            buf.append(sql[i : j + 1])
            i = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j  # comments are dropped, the newline kept
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            end = n if j < 0 else j + 2
            buf.append(sql[i:end] if sql.startswith("/*+", i) else " ")  # a hint is kept: it is part of the query
            i = end
        elif c == ";":
            out.append("".join(buf))
            buf = []
            i += 1
        else:
            buf.append(c)
            i += 1
    out.append("".join(buf))
    return [s.strip() for s in out if s.strip()]


# --- values and rows ------------------------------------------------------------------------------------------

_TS = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?$")


def format_timestamp(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") + f".{value.microsecond // 1000:03d}"


def normalize_value(value: Any) -> Any:
    """A value in the form both sides are compared in (see the module docstring)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return _number(value)
    if isinstance(value, dt.datetime):
        return format_timestamp(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.strftime("%H:%M:%S")
    if isinstance(value, str):
        m = _TS.match(value)
        if m:
            return f"{m.group(1)} {m.group(2)}.{(m.group(3) or '').ljust(3, '0')[:3]}"
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): normalize_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize_value(v) for v in value]
    return str(value)


def _number(value: int | float | decimal.Decimal) -> Any:
    if isinstance(value, int):
        return value
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    d = decimal.Decimal(value) if isinstance(value, float) else value
    if d == d.to_integral_value():
        return int(d)
    return float(f"{float(d):.10g}")


def normalize_row(row: dict) -> dict:
    return {str(k): normalize_value(v) for k, v in row.items()}


def row_text(row: dict) -> str:
    """A row as canonical text: what equality and sorting use."""
    return json.dumps(row, sort_keys=True, ensure_ascii=False)


def sort_rows(rows: Iterable[dict]) -> list[dict]:
    return sorted(rows, key=row_text)


def dumps_results(results: dict) -> str:
    """{case: rows or {"error": ...}} as JSON text with one row a line (readable, and diffable by line)."""
    parts = []
    for name, value in results.items():
        if isinstance(value, list):
            body = "[\n" + ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in value) + "\n ]" if value else "[]"
        else:
            body = json.dumps(value, ensure_ascii=False)
        parts.append(f" {json.dumps(name)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


# --- changelogs -----------------------------------------------------------------------------------------------


@dataclass
class Materialized:
    rows: list[dict]  # final rows, normalized and sorted
    anomalies: list[str]  # changes that did not fit (a retraction of a row that is not there, ...)


def materialize(changes: Iterable[tuple[str, dict]], key: Iterable[str] = ()) -> Materialized:
    """Apply a changelog to an empty result.

    Without `key`: a multiset; +I/+U add the row, -U/-D remove one equal row.
    With `key` (the result's unique key): +I/+U put the row at its key (replacing what was there, which is what
    an upsert sink does), -D removes the row with that key, -U removes it too (a +U normally follows).
    """
    key = tuple(key)
    anomalies: list[str] = []
    if not key:
        bag: Counter[str] = Counter()
        first: dict[str, dict] = {}  # text -> the row with its columns in the query's order
        for op, row in changes:
            row = normalize_row(row)
            text = row_text(row)
            if op in (INSERT, UPDATE_AFTER):
                bag[text] += 1
                first.setdefault(text, row)
            elif op in (UPDATE_BEFORE, DELETE):
                if bag[text] > 0:
                    bag[text] -= 1
                else:
                    anomalies.append(f"{op} of a row that is not in the result: {text}")
            else:
                anomalies.append(f"unknown op {op!r}: {text}")
        rows = [dict(first[t]) for t, n in bag.items() for _ in range(n)]
        return Materialized(sort_rows(rows), anomalies)

    table: dict[str, dict] = {}
    for op, row in changes:
        row = normalize_row(row)
        missing = [k for k in key if k not in row]
        if missing:
            raise CaseError(f"key column(s) {missing} not in the result's columns {list(row)}")
        k = row_text({c: row[c] for c in key})
        if op in (INSERT, UPDATE_AFTER):
            table[k] = row
        elif op in (UPDATE_BEFORE, DELETE):
            if k not in table:
                anomalies.append(f"{op} of key {k}, which is not in the result")
            else:
                if op == UPDATE_BEFORE and table[k] != row:
                    anomalies.append(f"-U {row_text(row)} does not match the current row {row_text(table[k])}")
                del table[k]
        else:
            anomalies.append(f"unknown op {op!r}: {row_text(row)}")
    return Materialized(sort_rows(table.values()), anomalies)


def duplicate_keys(rows: Iterable[dict], key: Iterable[str]) -> list[str]:
    """Keys that more than one row has: a case whose `key` is not the result's key."""
    key = tuple(key)
    if not key:
        return []
    seen = Counter(row_text({c: r.get(c) for c in key}) for r in rows)
    return [k for k, n in seen.items() if n > 1]
