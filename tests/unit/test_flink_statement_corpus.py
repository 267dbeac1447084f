"""Every statement form of Flink's SQL reference is carried out or refused with a named reason; none crashes.

tests/unit/flink_statement_corpus.sql holds one or more statements of each kind (DDL of tables, views, catalogs,
databases and functions, ALTER of each, SHOW and DESCRIBE of each, SET/RESET, modules and jars, statement sets,
INSERT forms, EXPLAIN forms, jobs, queries with hints, time travel, MATCH_RECOGNIZE, OFFSET, ...), each with what
it must do: `expect: ok`, or the start of the one-line error that refuses it. They run in order in one session
(without Spark: a query, an INSERT's query and an EXPLAIN's are planned, the rest executed), so a change that makes
one of them crash, pass silently where it was refused, or fail where it ran, fails here. A statement that would
lose a clause on the way to Spark (FOR SYSTEM_TIME AS OF a time, OFFSET, hints) is among the refused ones.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shell.errors import StreamshellError
from shell.planner.planner import plan_query
from shell.session import Session, SessionOptions, refuse_explain_details, refuse_overwrite
from shell.sql import statements as st
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit
CORPUS = Path(__file__).with_name("flink_statement_corpus.sql")
SETUP = """
CREATE TABLE orders (id INT, cust STRING, amount DECIMAL(10,2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', 'path' = '/tmp/corpus/o',
  'format' = 'json');
CREATE TABLE custs (cid STRING, name STRING, PRIMARY KEY (cid) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '/tmp/corpus/c', 'format' = 'debezium-json');
CREATE TABLE sink (cust STRING, total DECIMAL(10,2), PRIMARY KEY (cust) NOT ENFORCED) WITH ('connector' = 'blackhole');
"""


def cases() -> list[tuple[str, str]]:
    """(statement, expectation) in file order."""
    found, expect = [], None
    for line in CORPUS.read_text().splitlines():
        if line.startswith("-- expect: "):
            expect = line[len("-- expect: "):]
        elif line.strip() and not line.startswith("--"):
            found.append((line, expect))
            expect = None
    return found


def carry_out(session: Session, statement: st.Statement) -> None:
    """What the shell does with the statement, short of starting Spark: plan what would run, execute the rest."""
    if isinstance(statement, st.Explain):
        refuse_explain_details(statement)
        statement = statement.statement
    if isinstance(statement, st.StatementSet):
        for insert in statement.inserts:
            carry_out(session, insert)
    elif isinstance(statement, st.Insert):
        refuse_overwrite(statement)
        if statement.query is not None:
            plan_query(statement.query, session.catalog)
    elif isinstance(statement, st.Select):
        plan_query(statement.query, session.catalog)
    else:
        session.execute(statement)


def test_the_corpus_covers_every_kind_of_statement_the_shell_knows():
    kinds = {type(s).__name__ for sql, _ in cases() for s in _parsed(sql)}
    known = {name for name, value in vars(st).items() if isinstance(value, type) and issubclass(value, st.Statement)
             and value is not st.Statement}  # fmt: skip
    shell_only = {"Help", "Quit", "Clear", "ShowErrors", "PrintTopic", "DescribeTopic", "ResumeJob"}  # no Flink form
    assert known - shell_only - kinds == set()
    assert len(cases()) >= 120


def _parsed(sql: str) -> list[st.Statement]:
    try:
        return parse_script(sql)
    except StreamshellError:
        return []


def test_each_statement_is_carried_out_or_refused_with_its_reason(tmp_path):
    session = Session(SessionOptions(home=tmp_path / "home"))
    try:
        for statement in parse_script(SETUP):
            session.execute(statement)
        wrong = []
        for sql, expect in cases():
            assert expect is not None, f"no expectation for {sql}"
            try:
                for statement in parse_script(sql):
                    carry_out(session, statement)
                got = "ok"
            except StreamshellError as error:
                got = re.sub(r"^\d+:\d+: ", "", error.message.splitlines()[0])
            # anything else escapes: a crash fails the test with its traceback
            if not (got == expect if expect == "ok" else got.startswith(expect)):
                wrong.append(f"{sql}\n    expected: {expect}\n    got:      {got}")
        assert not wrong, "\n".join(wrong)
    finally:
        session.close()
