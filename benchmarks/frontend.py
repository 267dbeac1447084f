"""Front-end benchmark: split and parse a ~1 MB script of mixed statements.

Why it exists: the issue asks that splitting and parsing a 1 MB script be measured by a command
(not by a timed test). Run `python -m benchmarks.frontend` to print a markdown table, and
`--write` to replace the section between the frontend markers in docs/benchmarks.md (the rest of
that file belongs to other benchmarks and is left alone).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

from shell.sql import parse_script, split_statements

from benchmarks.report import DOC
from benchmarks.report import write_section as write_section_text


STATEMENTS = [
    "CREATE TABLE t{i} (id BIGINT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), "
    "meta TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL, total AS price * 2, "
    "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) "
    "WITH ('connector' = 'upsert-kafka', 'topic' = 't{i}', 'key.format' = 'json', 'value.format' = 'json');",
    "INSERT INTO s{i} SELECT window_start, window_end, name, COUNT(*) AS c -- per window; counted\n"
    "FROM TABLE(TUMBLE(TABLE t{i}, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) WHERE name <> 'a;b' "
    "GROUP BY window_start, window_end, name;",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts DESC) AS rn FROM t{i}) WHERE rn = 1;",
    "/* lookup join; enrich */ SELECT o.id, r.rate, JSON_VALUE(o.payload, '$.x' RETURNING INT) "
    "FROM o{i} AS o JOIN r FOR SYSTEM_TIME AS OF o.pt AS r ON o.cur = r.cur;",
    "SET 'pipeline.name' = 'job {i}';",
    "EXECUTE STATEMENT SET BEGIN INSERT INTO a{i} SELECT * FROM t{i}; INSERT INTO b{i} VALUES (1, 'x'), (2, 'y'); END;",
]


def build_script(size: int = 1_000_000) -> str:
    parts, total, i = [], 0, 0
    while total < size:
        text = STATEMENTS[i % len(STATEMENTS)].format(i=i) + "\n"
        parts.append(text)
        total += len(text)
        i += 1
    return "".join(parts)


def best_of(runs: int, fn, *args) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def measure() -> str:
    script = build_script()
    split_s, statements = best_of(3, split_statements, script)
    total_s, parsed = best_of(3, parse_script, script)
    mb = len(script) / 1_000_000
    rows = [
        ("split (one tokenizer pass)", split_s),
        ("parse (split + parse every statement)", total_s),
        ("parse alone (difference)", total_s - split_s),
    ]
    lines = [
        f"Script: {len(script):,} characters, {len(statements):,} statements "
        f"({len(parsed):,} parsed); best of 3; Python {platform.python_version()}, sqlglot "
        f"{__import__('sqlglot').__version__} (pure Python), {platform.machine()}.",
        "",
        "| step | seconds | MB/s |",
        "| --- | ---: | ---: |",
        *(f"| {name} | {secs:.3f} | {mb / secs:.2f} |" for name, secs in rows),
    ]
    return "\n".join(lines)


def write_section(table: str) -> None:
    note = (
        "Target: split + parse of 1 MB under 1 s. Not met: sqlglot's pure-Python tokenizer alone\n"
        "takes about 1 s per MB of dense SQL, and parsing costs about 0.5 ms per statement. Splitting is one\n"
        "tokenizer pass and parse_script reuses its tokens (no second tokenization). The compiled\n"
        "`sqlglotc` build cannot be used: our dialect subclasses sqlglot's classes, which mypyc-compiled\n"
        "classes refuse (\"interpreted classes cannot inherit from compiled\").\n"
    )
    section = f"## SQL front end\n\nMeasured with `python -m benchmarks.frontend --write`.\n\n{table}\n\n{note}"
    write_section_text("frontend", section)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    table = measure()
    print(table)
    if args.write:
        write_section(table)
        print(f"\nwrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
