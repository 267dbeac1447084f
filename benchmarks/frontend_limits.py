"""Front-end limits benchmark: seconds to answer 1 MB inputs of each hostile shape.

Why it exists: issue 25 asks that the front end be bounded (a nesting depth limit, a statement size limit, no
quadratic paths on large inputs) and that 1 MB inputs of each shape be measured by a command, not by a timed
test. Run `python -m benchmarks.frontend_limits` to print a markdown table, `--write` to replace the section
between the frontend-limits markers in docs/benchmarks.md, `--shape NAME` to run some shapes only.

Each shape is about 1,000,000 characters (deep nesting, a long flat expression, a long IN list, a SELECT of
many columns, a long chain of AND, a long string literal, many statements in one script, one very long
identifier, a long comment, and one statement of twice the size limit; plus the flat expression at the token
limit, the worst shape that is planned, and 18 nested `ARRAY[...]`, a small input that took 16 s), each run in
a fresh interpreter (a shape that recurses or takes minutes cannot spoil the others), with a timeout.
Two steps are timed (CPU seconds of the child), as the shell runs them before Spark is asked anything:

- parse: `parse_script` (split, tokenize, parse, trees to statements);
- plan: `plan_query` of every query parsed, against an in-memory catalog holding `t (x INT, s STRING)`
  (datagen): resolving tables, choosing the path, translating to Spark SQL. Script mode parses the whole
  script first and plans each statement when it runs it, so for "many statements" this is the sum of 23,000
  plans, each met just before its statement runs.

The answer column says what the user gets: `ok` or the error's `line:col: message`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable

from benchmarks.report import DOC, machine
from benchmarks.report import write_section as write_section_text

SIZE = 1_000_000


def deep_nesting(size: int) -> str:
    depth = (size - 10) // 2
    return "SELECT " + "(" * depth + "1" + ")" * depth + ";\n"


def flat_expression(size: int) -> str:
    return "SELECT 1" + "+1" * ((size - 10) // 2) + ";\n"


def in_list(size: int) -> str:
    head, items, total = "SELECT s FROM t WHERE x IN (", [], 0
    i = 0
    while total < size - len(head) - 4:
        item = str(i % 100_000)
        items.append(item)
        total += len(item) + 1
        i += 1
    return head + ",".join(items) + ");\n"


def and_chain(size: int) -> str:
    """The slowest shape of the fuzz suite's long run: `WHERE x <> 0 AND x <> 1 AND ...`."""
    head, parts, total, i = "SELECT s FROM t WHERE ", [], 0, 0
    while total < size - len(head) - 4:
        part = f"x <> {i}"
        parts.append(part)
        total += len(part) + 5
        i += 1
    return head + " AND ".join(parts) + ";\n"


def string_literal(size: int) -> str:
    return "SELECT '" + "it''s a long text " * ((size - 12) // 18) + "';\n"


def many_statements(size: int) -> str:
    parts, total, i = [], 0, 0
    while total < size:
        text = f"SELECT s, x + {i} FROM t WHERE x > {i};\n"
        parts.append(text)
        total += len(text)
        i += 1
    return "".join(parts)


def wide_select(size: int) -> str:
    head, items, total, i = "SELECT ", [], 0, 0
    while total < size - len(head) - 10:
        item = f"x + {i} AS c{i}"
        items.append(item)
        total += len(item) + 2
        i += 1
    return head + ", ".join(items) + " FROM t;\n"


def long_identifier(size: int) -> str:
    return "SELECT x AS " + "a" * (size - 22) + " FROM t;\n"


def long_comment(size: int) -> str:
    line = "-- a comment line; with 'quotes' and /* openers\n"
    return "SELECT x\n" + "/* a long comment */\n" + line * ((size - 40) // len(line)) + "FROM t;\n"


def nested_arrays(size: int) -> str:
    """Not 1 MB: 18 nested ARRAY[...] (136 characters), which the parser read 4 times per level before."""
    return "SELECT " + "ARRAY[" * 18 + "1" + "]" * 18 + ";\n"


def over_size_limit(size: int) -> str:
    return flat_expression(2 * size)


def flat_at_token_limit(size: int) -> str:
    """`SELECT 1+1+...` of exactly MAX_STATEMENT_TOKENS tokens (about 0.4 MB): the costliest statement per
    character, as large as the limits let it be."""
    from shell.sql.limits import MAX_STATEMENT_TOKENS

    return "SELECT 1" + "+1" * ((MAX_STATEMENT_TOKENS - 2) // 2) + ";\n"


SHAPES: dict[str, Callable[[int], str]] = {
    "deep nesting": deep_nesting,
    "long flat expression": flat_expression,
    "long IN list": in_list,
    "wide SELECT list": wide_select,
    "long AND chain": and_chain,
    "long string literal": string_literal,
    "many statements": many_statements,
    "long identifier": long_identifier,
    "long comment": long_comment,
    "one 2 MB statement": over_size_limit,
    "flat expression at the token limit": flat_at_token_limit,
    "18 nested ARRAY[...]": nested_arrays,
}


def catalog():  # noqa: ANN201 - a Catalog
    from shell.catalog.store import Catalog
    from shell.sql import parse_script

    store = Catalog()
    create = parse_script("CREATE TABLE t (x INT, s STRING) WITH ('connector' = 'datagen');")[0]
    store.add(create.table, temporary=True)  # type: ignore[attr-defined]
    return store


def measure_here(shape: str) -> dict:
    """Parse and plan one shape in this process (the child)."""
    sys.setrecursionlimit(sys.getrecursionlimit())  # as the shell runs: Python's default limit
    from shell.errors import StreamshellError
    from shell.planner.planner import plan_query
    from shell.sql import parse_script
    from shell.sql import statements as st

    source = SHAPES[shape](SIZE)
    store = catalog()
    answer, parse_s, plan_s, plans = "ok", 0.0, 0.0, 0
    start = time.process_time()
    try:
        parsed = parse_script(source)
        parse_s = time.process_time() - start
        start = time.process_time()
        for statement in parsed:
            if isinstance(statement, st.Select):
                plan_query(statement.query, store)
                plans += 1
        plan_s = time.process_time() - start
    except StreamshellError as error:
        elapsed = time.process_time() - start
        if parse_s:
            plan_s = elapsed
        else:
            parse_s = elapsed
        answer = str(error)
    except RecursionError as error:  # what the shell did before the limits: reported, not measured further
        answer = f"RecursionError: {error}"
        parse_s = time.process_time() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"chars": len(source), "parse": parse_s, "plan": plan_s, "plans": plans, "answer": answer, "peak_mb": peak_mb}


def measure_in_child(shape: str, timeout: float) -> dict:
    try:
        child = subprocess.run(
            [sys.executable, "-m", "benchmarks.frontend_limits", "--child", shape],
            capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"answer": f"no answer within {timeout:.0f} s (killed)"}
    if child.returncode != 0:
        lines = child.stderr.strip().splitlines()
        return {"answer": f"crashed: {lines[-1] if lines else child.returncode}"}
    return json.loads(child.stdout)


def seconds(result: dict, key: str) -> str:
    return f"{result[key]:.2f}" if key in result else "-"


def table(results: dict[str, dict]) -> str:
    lines = [
        "| shape | characters | parse CPU s | plan CPU s | peak MB | answer |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for shape, result in results.items():
        answer = result["answer"].replace("|", "\\|")
        answer = answer if len(answer) <= 110 else answer[:107] + "..."
        chars = f"{result['chars']:,}" if "chars" in result else "-"
        peak = f"{result['peak_mb']:.0f}" if "peak_mb" in result else "-"
        lines.append(f"| {shape} | {chars} | {seconds(result, 'parse')} | {seconds(result, 'plan')} | {peak} | {answer} |")
    return "\n".join(lines)


# Measured with this script on the sources of commit 4bb0d50 (before the limits), same machine, 2026-11-27, load
# average 4.2-4.6 (benchmarks running beside it): `git archive 4bb0d50 | tar -x -C /tmp/head`, then this file
# copied there and run from there.
BEFORE = """\
| shape | characters | parse CPU s | plan CPU s | peak MB | answer |
| --- | ---: | ---: | ---: | ---: | --- |
| deep nesting | 1,000,000 | 1.35 | 0.00 | 298 | 1:1: could not parse this statement (RecursionError: maximum recursion depth exceeded) |
| long flat expression | 1,000,000 | 4.60 | 41.02 | 2411 | ok |
| long IN list | 1,000,000 | 1.64 | 6.70 | 616 | ok |
| wide SELECT list | 1,000,011 | 1.71 | 11.48 | 620 | ok |
| long string literal | 999,983 | 0.34 | 0.08 | 47 | ok |
| many statements | 1,000,032 | 2.91 | 17.26 | 267 | ok |
| long identifier | 999,999 | 0.01 | 0.02 | 44 | ok |
| long comment | 999,974 | 0.22 | 0.05 | 46 | ok |
| one 2 MB statement | 2,000,000 | 9.36 | 82.62 | 4787 | ok |
| 18 nested ARRAY[...] | 136 | 16.48 | 0.01 | 425 | ok |"""

# Measured with this script at the start of the change that made planning one census of the tree: the sources of
# commit 3c31b8b, same machine, 2026-11-27 (after the table above), load average 1.7-5.8; the AND chain and the
# flat expression at the token limit on the same front end (commit 69cf244, `git archive` as above, load 17-18).
BEFORE_CENSUS = """\
| shape | characters | parse CPU s | plan CPU s | peak MB | answer |
| --- | ---: | ---: | ---: | ---: | --- |
| deep nesting | 1,000,000 | 1.30 | 0.00 | 298 | 1:208: nesting deeper than 200 levels (parentheses, brackets, CASE, types or prefix operators) |
| long flat expression | 1,000,000 | 5.60 | 19.87 | 1582 | ok |
| long IN list | 1,000,000 | 2.15 | 3.69 | 428 | ok |
| wide SELECT list | 1,000,011 | 2.20 | 7.88 | 374 | ok |
| long AND chain | 999,999 | 2.58 | 9.09 | 529 | ok |
| long string literal | 999,983 | 0.32 | 0.08 | 49 | ok |
| many statements | 1,000,032 | 3.01 | 14.88 | 267 | ok |
| long identifier | 999,999 | 0.01 | 0.02 | 44 | ok |
| long comment | 999,974 | 0.21 | 0.03 | 46 | ok |
| one 2 MB statement | 2,000,000 | 3.20 | 0.00 | 560 | 1:1048577: statement longer than 1,048,576 characters: it has 1,999,998 |
| flat expression at the token limit | 400,008 | 2.47 | 8.26 | 655 | ok |
| 18 nested ARRAY[...] | 136 | 0.00 | 0.01 | 37 | ok |"""

NOTES = """\
Limits (shell/sql/limits.py, messages in docs/troubleshooting.md): nesting of at most 200 levels, counted on
the tokens before sqlglot recurses; a tree at most 2000 levels deep as the printers recurse into it (a chain of
mixed operators, or of UNIONs); a statement of at most 1,048,576 characters and of at most 400,000 tokens.
Python's recursion limit is raised to 20,000 so that nothing within them meets it.

What changed the figures, from the first table to the second (one census of the tree, and the token limit):

- Planning asked each of its questions by a walk over the whole tree (`find_all`, `find`: some fifteen walks,
  about 1 us per node each) and copied the tree twice. Now one walk, a census (shell/sql/census.py), says which
  kinds of node the tree holds and lists its tables, CTEs and IN lists; a rule looking for a kind the tree does
  not hold (a window table function, OVER, an aggregate, a subquery, EXISTS) is skipped, and one whose kind is
  there walks as before. The tree is copied once, with its census in the same walk, and the native path renames
  and translates that copy in place. The Spark printer skips its own walks for a nested WITH and for ANY when
  the census has none. A 1 MB IN list plans in 0.6 s (was 3.7), a wide SELECT in 2 s (7.9), the AND chain in
  1.9 s (9.1), a flat expression of 400,000 tokens in 1.6 s (8.3).
- A large script's parsed statements go straight to the cyclic collector's oldest generation (gc.freeze and
  unfreeze when parsing ends, shell/sql/split.py): the young collections no longer traverse them twice.
- A statement of more than 400,000 tokens is refused where the limit is crossed. A 1 MB flat arithmetic
  expression is a million tokens and a tree node per token: sqlglot's parser alone takes 3 s of it, so no
  planner could answer it within a few seconds (it took 25 s and 1.6 GB); it is now refused in 1.7 s, after
  the tokenizer's pass. A 1 MB IN list of 5-digit numbers is about 340,000 tokens and still runs.

Still over the few seconds: 1 MB of statements, 23,000 plans of 0.24 ms each (about 40% of it sqlglot's Spark
printer); in script mode each plan comes just before its statement runs in Spark. The figures were measured on
a machine shared with other work (load average in the line above): CPU seconds, which such load inflates too.

Before the limits (the last table), what changed then:

- The 2 MB statement and the deep nesting are refused at once, positioned where the limit is crossed (the
  time left is the tokenizer's pass over the whole script).
- Nested `ARRAY[...]`: sqlglot read each level first as a fixed-size array type, then again as the value: 4
  reads per level, exponential. Our grammar no longer tries the type (shell/sql/grammar.py).
- Planning pauses Python's cyclic garbage collector, as parsing already did.
- Nested ROW types were mapped to Spark once per level (each time the whole type below): now once.
"""


def write_section(text: str, command: str) -> None:
    heading = "## SQL front end limits (1 MB inputs of each shape)"
    when = (
        f"Measured with `{command}` on {dt.date.today().isoformat()}, {machine()}; Python "
        f"{platform.python_version()}, sqlglot {importlib.metadata.version('sqlglot')}, pure-Python front end, each "
        f"shape in a fresh interpreter; 1-minute load average {os.getloadavg()[0]:.2f} at the end (CPU seconds are "
        "shown: the wall clock depends on the benchmarks running beside it)."
    )
    before_census = (
        "Before planning took one census of the tree (shell/sql/census.py) and statements had a token limit: the "
        "same command on the sources of commit 3c31b8b (the AND chain and the flat expression at the token limit on "
        "commit 69cf244, the same front end), on the same machine the same day (1-minute load average 1.7-18):"
    )
    before = (
        "Before the limits: the same command on the sources of commit 4bb0d50, on the same machine, 2026-11-27 "
        "(1-minute load average 4.2-4.6):"
    )
    body = f"{heading}\n\n{when}\n\n{text}\n\n{before_census}\n\n{BEFORE_CENSUS}\n\n{before}\n\n{BEFORE}\n\n{NOTES}"
    write_section_text("frontend-limits", body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="only this shape (repeatable)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds a shape may take (default 300)")
    parser.add_argument("--child", metavar="SHAPE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure_here(args.child)))
        return 0
    results = {}
    for shape in args.shape or SHAPES:
        results[shape] = measure_in_child(shape, args.timeout)
        print(f"{shape}: {json.dumps(results[shape])}", file=sys.stderr, flush=True)
    text = table(results)
    print(text)
    if args.write:
        write_section(text, "python -m benchmarks.frontend_limits --write")
        print(f"\nwrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
