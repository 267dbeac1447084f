"""Front-end benchmark: split and parse a ~1 MB script of varied statements.

Why it exists: the issue asks that splitting and parsing a 1 MB script be measured by a command
(not by a timed test), with a target of under one second. Run `python -m benchmarks.frontend` to
print a markdown table, and `--write` to replace the section between the frontend markers in
docs/benchmarks.md (the rest of that file belongs to other benchmarks and is left alone).

The script is generated from a fixed seed: DDL, window aggregations, top-N and lookup-join
queries, views, SET, statement sets and plain queries, with random names, column lists, types,
expressions, literals, comments and line breaks. No two statements are equal and few share a
shape (the table reports how many distinct token-type sequences there are), so no cache of
statements or of statement shapes could make the parse cheaper than it is.

Timings are the best of 3 runs (`--runs N`), wall clock and the process's CPU time, for the pure-Python
front end and for the compiled one (`make compile-sql`, shell/compiled_sql.py), each in a fresh interpreter;
the machine is shared, so the 1-minute load average is printed for each.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable

from shell.sql import parse_script, split_statements

from benchmarks.report import DOC
from benchmarks.report import write_section as write_section_text

SEED = 20261121
NAMES = ["orders", "users", "clicks", "payments", "rates", "sessions", "devices", "events", "shipments", "ledger"]
COLUMNS = ["id", "name", "price", "amount", "qty", "city", "country", "status", "payload", "score", "cur", "kind"]
TYPES = [
    "BIGINT", "INT", "STRING", "DOUBLE", "BOOLEAN", "DATE", "BYTES", "DECIMAL(10, 2)", "DECIMAL(38, 18)",
    "VARCHAR(64)", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", "ARRAY<STRING>", "MAP<STRING, INT>", "ROW<a INT, b STRING>",
]  # fmt: skip
AGGREGATES = ["COUNT(*)", "SUM({c})", "MIN({c})", "MAX({c})", "AVG({c})", "COUNT(DISTINCT {c})"]
FUNCTIONS = [
    "UPPER({c})", "LOWER({c})", "CHAR_LENGTH({c})", "COALESCE({c}, {lit})", "ABS({c})", "ROUND({c}, 2)",
    "CAST({c} AS STRING)", "CAST({c} AS DECIMAL(12, 4))", "CONCAT({c}, '-', {c2})", "SUBSTRING({c} FROM 2 FOR 3)",
    "IF({c} > {n}, 'hi', 'lo')", "CASE WHEN {c} IS NULL THEN {lit} ELSE {c2} END", "DATE_FORMAT({c}, 'yyyy-MM-dd')",
    "REGEXP_EXTRACT({c}, '([a-z]+);', 1)", "{c} * {n} + {c2}", "({c} - {n}) / 2",
]  # fmt: skip
PREDICATES = [
    "{c} > {n}", "{c} <> {lit}", "{c} IS NOT NULL", "{c} LIKE '%{word};%'", "{c} BETWEEN {n} AND {n2}",
    "{c} IN ({n}, {n2}, {lit})", "NOT {c} = {lit}", "{c} >= {n}.{n2}",
]  # fmt: skip
UNITS = ["SECOND", "MINUTE", "HOUR", "DAY"]
WORDS = ["alpha", "beta", "gamma", "delta", "semi;colon", "it''s", "quote`d", "x--y", "a/*b*/c"]
OPTION_KEYS = ["format", "key.format", "scan.startup.mode", "properties.group.id"]
CONNECTORS = ["kafka", "upsert-kafka", "pulsar", "datagen", "print", "blackhole"]
COMMENTS = ["-- note; {word}\n", "/* {word}; */ ", "/* outer /* nested; */ */ ", ""]


class Script:
    """One deterministic random script; `statement(i)` writes the i-th statement."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)

    def pick(self, items: list[str]) -> str:
        return self.rnd.choice(items)

    def name(self, i: int) -> str:
        return f"{self.pick(NAMES)}_{i}"

    def column(self) -> str:
        column = self.pick(COLUMNS)
        return f"`{column} x`" if self.rnd.random() < 0.05 else column

    def literal(self) -> str:
        kind = self.rnd.randrange(4)
        if kind == 0:
            return f"'{self.pick(WORDS)}'"
        if kind == 1:
            return str(self.rnd.randrange(1000))
        if kind == 2:
            return f"{self.rnd.randrange(100)}.{self.rnd.randrange(100)}"
        return "NULL"

    def fill(self, template: str) -> str:
        return template.format(
            c=self.column(), c2=self.column(), lit=self.literal(), n=self.rnd.randrange(100),
            n2=self.rnd.randrange(100, 1000), word=self.pick(WORDS),
        )

    def expression(self) -> str:
        return self.fill(self.pick(FUNCTIONS)) if self.rnd.random() < 0.6 else self.column()

    def where(self) -> str:
        count = self.rnd.randrange(1, 4)
        return " AND ".join(self.fill(self.pick(PREDICATES)) for _ in range(count))

    def gap(self) -> str:
        return self.pick([" ", " ", " ", "\n  ", "\n"])

    def comment(self) -> str:
        return self.fill(self.pick(COMMENTS)) if self.rnd.random() < 0.3 else ""

    def create_table(self, i: int) -> str:
        names = self.rnd.sample(COLUMNS, self.rnd.randrange(3, 9))
        columns = [f"{c}_{k} {self.pick(TYPES)}" for k, c in enumerate(names)]
        columns.append("ts TIMESTAMP(3)")
        if self.rnd.random() < 0.5:
            columns.append(f"total AS {self.expression()}")
        if self.rnd.random() < 0.4:
            columns.append("meta TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL")
        columns.append(f"WATERMARK FOR ts AS ts - INTERVAL '{self.rnd.randrange(1, 60)}' {self.pick(UNITS)}")
        if self.rnd.random() < 0.5:
            columns.append(f"PRIMARY KEY ({columns[0].split()[0]}) NOT ENFORCED")
        options = [f"'connector' = '{self.pick(CONNECTORS)}'", f"'topic' = 't{i}'"]
        keys = self.rnd.sample(OPTION_KEYS, self.rnd.randrange(1, 4))
        options += [f"'{k}' = '{self.pick(WORDS)}'" for k in keys]
        temporary = "TEMPORARY " if self.rnd.random() < 0.3 else ""
        sep = "," + self.gap()
        return f"CREATE {temporary}TABLE {self.name(i)} ({sep.join(columns)}) WITH ({', '.join(options)})"

    def window_insert(self, i: int) -> str:
        kind = self.pick(["TUMBLE", "HOP", "CUMULATE"])
        sizes = [
            f"INTERVAL '{self.rnd.randrange(1, 30)}' {self.pick(UNITS)}" for _ in range(1 if kind == "TUMBLE" else 2)
        ]
        keys = self.rnd.sample(COLUMNS, self.rnd.randrange(1, 3))
        aggregates = [f"{self.fill(self.pick(AGGREGATES))} AS a{k}" for k in range(self.rnd.randrange(1, 4))]
        return (
            f"INSERT INTO {self.name(i)} SELECT window_start, window_end, {', '.join(keys)}, {', '.join(aggregates)}"
            f"{self.gap()}{self.comment()}"
            f"FROM TABLE({kind}(TABLE {self.name(i)}, DESCRIPTOR(ts), {', '.join(sizes)})){self.gap()}"
            f"WHERE {self.where()} GROUP BY window_start, window_end, {', '.join(keys)}"
        )

    def top_n(self, i: int) -> str:
        order = f"{self.column()} {self.pick(['DESC', 'ASC', ''])}".strip()
        return (
            f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {self.column()} ORDER BY {order}) AS rn"
            f" FROM {self.name(i)}{self.gap()}WHERE {self.where()}) WHERE rn <= {self.rnd.randrange(1, 10)}"
        )

    def lookup_join(self, i: int) -> str:
        returning = self.pick(["INT", "STRING", "DOUBLE", "BIGINT"])
        return (
            f"{self.comment()}SELECT o.id, r.rate, {self.expression()}, "
            f"JSON_VALUE(o.payload, '$.{self.pick(COLUMNS)}' RETURNING {returning})"
            f"{self.gap()}FROM {self.name(i)} AS o JOIN {self.name(i)} FOR SYSTEM_TIME AS OF o.pt AS r ON o.cur = r.cur"
            f" AND o.{self.pick(COLUMNS)} = r.{self.pick(COLUMNS)}"
        )

    def query(self, i: int) -> str:
        projection = ", ".join(f"{self.expression()} AS e{k}" for k in range(self.rnd.randrange(1, 6)))
        tail = f" ORDER BY e0 LIMIT {self.rnd.randrange(1, 100)}" if self.rnd.random() < 0.3 else ""
        return f"SELECT {projection} FROM {self.name(i)} WHERE {self.where()}{tail}"

    def view(self, i: int) -> str:
        return f"CREATE TEMPORARY VIEW v_{i} AS{self.gap()}{self.query(i)}"

    def setting(self, i: int) -> str:
        key = self.pick(["pipeline.name", "table.exec.state.ttl", "sql-client.execution.result-mode"])
        return f"SET '{key}' = '{self.pick(WORDS)} {i}'"

    def statement_set(self, i: int) -> str:
        inserts = [
            f"INSERT INTO {self.name(i)} SELECT {self.expression()}, {self.column()} "
            f"FROM {self.name(i)} WHERE {self.where()};",
            f"INSERT INTO {self.name(i)} VALUES ({self.literal()}, {self.literal()}), "
            f"({self.literal()}, {self.literal()});",
        ]
        return f"EXECUTE STATEMENT SET{self.gap()}BEGIN{self.gap()}{self.gap().join(inserts)}{self.gap()}END"

    def statement(self, i: int) -> str:
        kinds: list[Callable[[int], str]] = [
            self.create_table, self.window_insert, self.top_n, self.lookup_join, self.query, self.view,
            self.setting, self.statement_set,
        ]
        return self.rnd.choice(kinds)(i) + ";\n"


def build_script(size: int = 1_000_000, seed: int = SEED) -> str:
    script, parts, total, i = Script(seed), [], 0, 0
    while total < size:
        text = script.statement(i)
        parts.append(text)
        total += len(text)
        i += 1
    return "".join(parts)


def shapes(statements) -> int:  # noqa: ANN001 - SourceStatements
    """How many distinct token-type sequences the statements have (the variety of the script)."""
    from shell.sql.dialect import DIALECT

    return len({tuple(t.token_type for t in DIALECT.tokenize(s.text)) for s in statements})


def best_of(runs: int, fn: Callable, *args) -> tuple[float, float, object]:
    """Best wall-clock and best CPU seconds of `runs` calls, and the last result."""
    wall, cpu, result = float("inf"), float("inf"), None
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn(*args)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu, result


FRONT_ENDS = (("pure Python", "off"), ("compiled (mypyc)", "require"))


def measure_here(runs: int) -> dict:
    """This process's figures, with the front end it runs (shell/compiled_sql.py)."""
    from shell import compiled_sql

    script = build_script()
    load_before = os.getloadavg()[0]
    split_s, split_cpu, statements = best_of(runs, split_statements, script)
    total_s, total_cpu, parsed = best_of(runs, parse_script, script)
    return {
        "front_end": compiled_sql.describe(),
        "chars": len(script), "statements": len(statements), "parsed": len(parsed),
        "distinct": len({s.text for s in statements}), "shapes": shapes(statements),
        "split": [split_s, split_cpu], "total": [total_s, total_cpu],
        "load": [load_before, os.getloadavg()[0]],
    }


def measure_in_child(mode: str, runs: int) -> dict | str:
    """The figures of a fresh interpreter with STREAMSHELL_COMPILED_SQL=mode, or why it could not run."""
    env = {**os.environ, "STREAMSHELL_COMPILED_SQL": mode}
    child = subprocess.run(
        [sys.executable, "-m", "benchmarks.frontend", "--runs", str(runs), "--child"],
        env=env, capture_output=True, text=True,
    )
    if child.returncode != 0:
        lines = child.stderr.strip().splitlines()
        return lines[-1].split(": ", 1)[-1] if lines else f"exit code {child.returncode}"
    return json.loads(child.stdout)


def measure(runs: int = 3) -> str:
    results = [(label, measure_in_child(mode, runs)) for label, mode in FRONT_ENDS]
    measured = [r for _, r in results if isinstance(r, dict)]
    if not measured:
        raise SystemExit("no front end could be measured: " + "; ".join(f"{label}: {r}" for label, r in results))
    first = measured[0]
    loads = [f"{r['load'][0]:.2f}-{r['load'][1]:.2f}" for r in measured]
    lines = [
        f"Script: {first['chars']:,} characters, {first['statements']:,} statements ({first['parsed']:,} parsed, "
        f"{first['distinct']:,} distinct, {first['shapes']:,} distinct token-type sequences); "
        f"best of {runs}, each front end in a fresh interpreter; Python {platform.python_version()}, "
        f"sqlglot {importlib.metadata.version('sqlglot')}, {platform.machine()}, {os.cpu_count()} CPUs; "
        f"1-minute load average {', then '.join(loads)}.",
        "",
        "| front end | step | wall s | CPU s | MB/s (wall) |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    mb = first["chars"] / 1_000_000
    for label, result in results:
        if not isinstance(result, dict):
            lines.append(f"| {label} | not measured: {result} | | | |")
            continue
        (split_s, split_cpu), (total_s, total_cpu) = result["split"], result["total"]
        for step, secs, cpu in (
            ("split (one tokenizer pass)", split_s, split_cpu),
            ("split + parse every statement (`parse_script`)", total_s, total_cpu),
            ("parse alone (difference)", total_s - split_s, total_cpu - split_cpu),
        ):
            lines.append(f"| {label} | {step} | {secs:.3f} | {cpu:.3f} | {mb / secs:.2f} |")
    return "\n".join(lines)


NOTE = """\
Target: split + parse of 1 MB under 1 s. The pure-Python front end does not meet it (about 2 s of
CPU per MB); the compiled one (`make compile-sql`) does: 0.67-0.95 s wall for split + parse in three runs
of this benchmark on 2026-11-22 (load 0.9-1.4), against 1.73-1.90 s pure Python in the same runs.

What was done for the pure-Python front end (shell/sql/split.py, scanner.py; exactness checked by
hypothesis properties in tests/unit/test_split.py and test_split_scanner.py):

- One tokenizer pass: splitting keeps each statement's tokens and `parse_script` parses them, so
  nothing is tokenized twice.
- Python's cyclic garbage collector is paused while a script is split and parsed: those passes
  allocate millions of small objects (tokens, tree nodes), and the collector ran thousands of times
  over a growing heap: about a third of the time of both steps (peak memory +15 MB for 1 MB).
- Our tokenizer core scans the common tokens itself (regular expressions, local variables) and hands
  every other token to sqlglot's own methods, with exactly sqlglot's tokens, positions and errors:
  about 2x faster than sqlglot's pure-Python core.
- The splitter jumps from semicolon to semicolon instead of visiting every token; two sets the
  grammar rebuilt for every name it read are built once; one parser per thread is reused instead of
  one made per statement.

What is left in pure Python is sqlglot's recursive-descent parser, about 0.3 ms per statement of this
script, spread over sqlglot's own functions (no hot spot in our grammar; a fast path for operands
without operators was measured and gained nothing).

The compiled front end: sqlglot's compiled wheel (`sqlglotc`) cannot be used, since its classes
refuse interpreted subclasses ("interpreted classes cannot inherit from compiled") and our grammar,
printer, tree nodes and tokenizer core are such subclasses (upstream declined to allow them).
`scripts/compile-sql` therefore compiles, with mypyc in one build, the sqlglot modules that sqlglotc
compiles and our front end's parsing modules (the grammar is one class chain for this: a compiled
class has one base class). The build goes to `.build/compiled-sql/` and is used only while every
source it was compiled from is unchanged (shell/compiled_sql.py); the same unit tests pass against it
(`make test-compiled-sql`). The price: a build of 116 modules that took 8.7-9.0 min on
these 2 cores (`/usr/bin/time -v scripts/compile-sql`: 8 min 55 s wall the first time, creating `.venv-compile`
too, and 9 min 9 s again; 970 s of CPU, peak memory 2.6 GiB; 66 MB in `.build/compiled-sql`, 92 MB in `.venv-compile`),
on every new machine and after every edit of the
front end, so it is optional and not part of `make setup`. With it, the tokenizer gains little (its
time is in regular expressions and token objects) and the parse about 2.5x.
"""


def write_section(table: str) -> None:
    how = "Measured with `make compile-sql` and then `python -m benchmarks.frontend --write` (`make bench-frontend`)."
    section = f"## SQL front end\n\n{how}\n\n{table}\n\n{NOTE}"
    write_section_text("frontend", section)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--runs", type=int, default=3, help="runs of each step; the best is shown (default 3)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure_here(args.runs)))
        return 0
    table = measure(args.runs)
    print(table)
    if args.write:
        write_section(table)
        print(f"\nwrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
