"""Run differential cases in Apache Flink (PyFlink) and print their final results as JSON.

Why it exists: Flink is the reference for what a query over changing tables means. This script runs each case's
DDL and query in a streaming TableEnvironment (parallelism 1, UTC session time zone) over the case's bounded
files, collects the changelog with row kinds, applies it as a multiset (+I/+U add a row, -U/-D take one equal
row away) and prints the final rows.

It runs under .venv-flink/bin/python (scripts/flink-venv), so it imports PyFlink and the standard-library module
differential/cases.py, never the `shell` package:

    .venv-flink/bin/python differential/flink_runner.py [--out FILE] [--lines] CASE_DIR_OR_NAME...

Output (stdout, or FILE): one JSON object {case_name: rows}, rows a sorted list of {column: value}; a case that
Flink could not run has {"error": "first lines of the Java exception"} instead of a list. `--lines` with a
single case prints its rows one JSON object per line. Exit code 0 when every case ran, 1 otherwise.
One JVM serves every case of a run; each case gets a fresh TableEnvironment and its own local job.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from differential.cases import (  # noqa: E402  (after the path is set)
    CASES_DIR,
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    Case,
    dumps_results,
    load_case,
    materialize,
    normalize_value,
)

ROW_KINDS = {"INSERT": INSERT, "UPDATE_BEFORE": UPDATE_BEFORE, "UPDATE_AFTER": UPDATE_AFTER, "DELETE": DELETE}


def table_environment():
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("parallelism.default", "1")
    config.set("table.local-time-zone", "UTC")
    config.set("python.executable", sys.executable)  # a case's Python functions run in this (PyFlink's) Python
    return env


SET_STATEMENT = re.compile(r"^\s*SET\s+'([^']+)'\s*=\s*'([^']*)'\s*$", re.I | re.S)


def execute(env, statement: str) -> None:
    """One DDL statement; `SET 'k' = 'v'` (which only Flink's SQL client runs) goes to the configuration."""
    setting = SET_STATEMENT.match(statement)
    if setting and setting.group(1) == "python.files":  # the workers get the files; this process imports them too
        for path in filter(None, setting.group(2).split(",")):
            env.add_python_file(path)
            sys.path.insert(0, str(Path(path).parent if Path(path).suffix == ".py" else Path(path)))
    elif setting:
        env.get_config().set(setting.group(1), setting.group(2))
    else:
        env.execute_sql(statement)


def run_case(case: Case) -> dict:
    """{"rows": [...], "columns": [...], "changes": n, "seconds": s} for one case, or raise."""
    started = time.monotonic()
    env = table_environment()
    for statement in case.ddl:
        execute(env, case.filled(statement))
    result = env.execute_sql(case.filled(case.query))
    columns = list(result.get_resolved_schema().get_column_names())
    if len(set(columns)) != len(columns):
        raise ValueError(f"the query's column names are not unique: {columns}")
    changes = []
    with result.collect() as rows:
        for row in rows:
            op = ROW_KINDS[row.get_row_kind().name]
            changes.append((op, {c: json_value(v) for c, v in zip(columns, row)}))
    # collect() gives a retract stream, applied as a multiset; but where Flink's optimizer makes an upsert stream
    # (+U with no -U before it: Nexmark q9's Top-1 in Flink 2.3), each +U replaces its key's row, as a sink would
    upserts = any(op == "+U" for op, _ in changes) and not any(op == "-U" for op, _ in changes)
    if upserts and not case.key:
        raise ValueError("Flink gives an upsert stream (+U without -U): give the case its result's key in case.json")
    final = materialize(changes, case.key if upserts else ())
    if final.anomalies:
        raise ValueError("Flink's changelog did not apply cleanly: " + "; ".join(final.anomalies[:3]))
    return {
        "columns": columns,
        "rows": final.rows,
        "changes": len(changes),
        "seconds": round(time.monotonic() - started, 2),
    }


def json_value(value):
    """A PyFlink value as JSON (nested rows as objects), normalized the way both sides are compared."""
    from pyflink.common import Row

    if isinstance(value, Row):  # a nested ROW: an object when its fields have names
        names = getattr(value, "_fields", None)
        items = [json_value(v) for v in value]
        return dict(zip(names, items)) if names else items
    if isinstance(value, dict):
        return {str(json_value(k)): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return normalize_value(value)


def error_text(error: BaseException) -> str:
    """The message of a (Java) exception, with its root cause, without the stack traces."""
    java = getattr(error, "java_exception", None)
    if java is None:
        return f"{type(error).__name__}: {error}"
    messages, cause, seen = [], java, 0
    while cause is not None and seen < 20:
        messages.append(f"{cause.getClass().getName()}: {cause.getMessage()}")
        cause, seen = cause.getCause(), seen + 1
    if len(messages) > 2:
        messages = [messages[0], "...", messages[-1]]
    return "\n".join(messages)


def resolve(arg: str) -> Path:
    path = Path(arg)
    if (path / "case.sql").is_file():
        return path
    if (CASES_DIR / arg / "case.sql").is_file():
        return CASES_DIR / arg
    raise SystemExit(f"flink_runner: no case at {arg}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="+", help="case folders or names under tests/differential/cases")
    parser.add_argument("--out", help="write the JSON here instead of stdout")
    parser.add_argument("--lines", action="store_true", help="one case: print its rows one per line")
    parser.add_argument("--details", action="store_true", help="per case: columns, number of changes, seconds")
    args = parser.parse_args(argv)
    cases = [load_case(resolve(a)) for a in args.cases]
    if args.lines and len(cases) != 1:
        parser.error("--lines takes exactly one case")

    # Whatever the JVM or PyFlink print goes to stderr; only our JSON goes to the real stdout.
    sys.stdout.flush()
    stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    results, failed = {}, 0
    for case in cases:
        try:
            detail = run_case(case)
            results[case.name] = detail if args.details else detail["rows"]
            print(f"flink_runner: {case.name}: {len(detail['rows'])} rows, {detail['seconds']} s", file=sys.stderr)
        except Exception as error:  # noqa: BLE001 - one case's failure must not hide the others' results
            failed += 1
            results[case.name] = {"error": error_text(error)}
            print(f"flink_runner: {case.name}: FAILED: {error_text(error)}", file=sys.stderr)

    if args.lines:
        value = results[cases[0].name]
        rows = value["rows"] if args.details and "rows" in value else value
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) if isinstance(rows, list) else ""
        if not text and isinstance(rows, dict):
            text = json.dumps(rows, ensure_ascii=False) + "\n"
    else:
        text = dumps_results(results) if not args.details else json.dumps(results, ensure_ascii=False) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        stdout.write(text)
    stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
