"""The changelog planner's rules, each shown by the tree before and after it (tests/unit/rules/<rule>.sql: blocks
of a `--` title, the query, and the query the rule makes of it, or no second query where the rule does not apply;
the second is read as sqlglot's own SQL, since the rules write joins a user cannot, SEMI and ANTI),
and the driver that applies them until none does."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from shell.catalog.model import Column, TableDef
from shell.planner import rules
from shell.planner.model import APPEND, Sources
from shell.sql.parse import parse_query

FIXTURES = Path(__file__).parent / "rules"
TABLES = {
    "o": TableDef("o", [Column("id", "INT"), Column("k", "INT"), Column("v", "INT")]),
    "t": TableDef("t", [Column("k", "INT"), Column("x", "INT"), Column("c", "STRING")]),
    "a": TableDef("a", [Column("id", "INT"), Column("tags", "ARRAY<STRING>")]),
}
CONTEXT = rules.Context(Sources(TABLES, dict.fromkeys(TABLES, APPEND)))


def cases() -> list:
    found = []
    for path in sorted(FIXTURES.glob("*.sql")):
        for block in path.read_text().strip().split("\n\n"):
            lines = block.strip().splitlines()
            title = lines[0].removeprefix("--").strip()
            statements = [s.strip() for s in "\n".join(lines[1:]).split(";") if s.strip()]
            found.append(pytest.param(path.stem, *statements, *([None] * (2 - len(statements))),
                                      id=f"{path.stem}: {title}"))
    return found


@pytest.mark.parametrize("rule_name, before, after", cases())
def test_each_rule_rewrites_the_tree_it_applies_to_and_leaves_the_others(rule_name, before, after):
    rule = importlib.import_module(f"shell.planner.rules.{rule_name}").rule
    query = parse_query(before)
    given = query.sql()
    rewritten = rule(query, CONTEXT)
    assert query.sql() == given, "a rule does not change the tree it is given"
    if after is None:
        assert rewritten is None
    else:
        assert rewritten is not None and rewritten.sql() == sqlglot.parse_one(after).sql()
        assert rule(rewritten, CONTEXT) is None, "its own output is not rewritten again"


def test_every_rule_module_has_fixtures_and_is_in_the_drivers_order():
    modules = {p.stem for p in Path(rules.__file__).parent.glob("*.py") if p.stem not in ("__init__", "using_joins")}
    assert modules == {p.stem for p in FIXTURES.glob("*.sql")}
    assert {r.__module__.rsplit(".", 1)[1] for r in rules.ORDER} == modules


def test_the_driver_applies_rules_until_none_applies_starting_again_after_each():
    calls = []

    def strip_limit(query, context):  # applies once
        calls.append("limit")
        if not query.args.get("limit"):
            return None
        stripped = query.copy()
        stripped.set("limit", None)
        return stripped

    def add_where(query, context):  # applies only once the limit has gone
        calls.append("where")
        if query.args.get("limit") or query.args.get("where"):
            return None
        return query.where("k > 0", copy=True)

    query = parse_query("SELECT id FROM o LIMIT 3")
    result = rules.normalized(query, CONTEXT, [add_where, strip_limit])
    assert result.sql() == "SELECT id FROM o WHERE k > 0"
    assert calls == ["where", "limit", "where", "where", "limit"]


def test_a_rule_that_never_settles_is_an_error_not_a_hang(monkeypatch):
    def forever(query, context):
        return exp.select("1").from_(query.subquery("s"))

    monkeypatch.setattr(rules, "MAX_STEPS", 25)  # the driver's bound, small: 1,000 nested copies take half a minute
    with pytest.raises(RuntimeError, match="did not settle"):
        rules.normalized(parse_query("SELECT id FROM o"), CONTEXT, [forever])


def test_the_driver_applies_every_rule_that_applies_not_only_the_first():
    query = parse_query("SELECT id, (SELECT MAX(x) FROM t WHERE t.k = o.k) AS m FROM o WHERE k IN (SELECT k FROM t)")
    result = rules.normalized(query, CONTEXT).sql()
    assert "SEMI JOIN t AS __in1" in result and "LEFT JOIN (SELECT k AS __key0, MAX(x) AS __value" in result
