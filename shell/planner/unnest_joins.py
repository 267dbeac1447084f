"""CROSS JOIN UNNEST over rows that change: each input row's elements, added and taken back with the row.

Why it exists: UNNEST expands one row into one row per element of its array or map, a function of that row alone.
Over weighted rows it is exact row by row: a row added (+1) adds its elements, a row taken back (-1) takes them
back, so an aggregate or a join downstream sees every change. The changelog path therefore computes it after the
stage that gives its input's weighted rows, in Spark SQL (the generator the translator writes: sql/unnest.py):

    SELECT o.id, t.tag FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag)
->  the rows of `SELECT o.id, o.tags FROM orders AS o` (a stage, as any query over a changelog), then
    WITH __unnest_rows AS (<those rows>) SELECT o.id, t.tag, o.__w FROM __unnest_rows AS o, LATERAL explode(o.tags) ..

A query that does more with the unnested rows (aggregates, DISTINCT, an OVER window, a join with another input)
first reads each relation with its UNNESTs as a FROM subquery of its own, which is then planned as above:

    SELECT t.tag, COUNT(*) FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag) GROUP BY t.tag
->  SELECT o.tag, COUNT(*) FROM (SELECT o.id, o.tags, .., t.tag FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag))
    AS o GROUP BY o.tag
"""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from shell.planner.model import RETRACT, WEIGHT, ChangelogPlan, Sources
from shell.planner.over_windows import over_calls
from shell.planner.relations import output_types
from shell.planner.sql_parts import unsupported
from shell.planner.weighted_aggregates import aggregates
from shell.sql.translate import to_spark_sql

ROWS = "__unnest_rows"  # the rows before their UNNESTs, as the rest of the query reads them


def unnest_joins(select: exp.Select) -> list[exp.Join]:
    return [j for j in select.args.get("joins") or [] if isinstance(j.this, exp.Unnest)]


def in_subqueries(select: exp.Select, sources: Sources) -> exp.Select | None:
    """`select` with each relation and the UNNESTs of its columns read as a FROM subquery, when the query does more
    than project and filter the unnested rows of one relation; None when it does not."""
    joins = select.args.get("joins") or []
    if all(isinstance(j.this, exp.Unnest) for j in joins) and not aggregates(select) \
            and not select.args.get("distinct") and not over_calls(select):
        return None
    query = select.copy()
    relations = [query.args["from_"].this] + [j.this for j in query.args.get("joins") or []]
    owners: dict[int, list[exp.Join]] = {}  # relation index -> its UNNEST joins
    for join in unnest_joins(query):
        owners.setdefault(_owner(join.this, relations, sources), []).append(join)
    renamed: dict[str, str] = {}  # UNNEST alias -> the subquery's alias
    for index, own in owners.items():
        relation = relations[index]
        alias = relation.alias_or_name
        columns = _columns(relation, sources)
        inner = _rows(relation, columns)
        for join in own:
            names = _unnest_names(join.this)
            clash = sorted({n.lower() for n in names} & {c.lower() for c in columns})
            if clash:
                raise unsupported(f"UNNEST columns named as columns of '{alias}' ({', '.join(clash)})",
                                  hint="name the unnested columns apart: UNNEST(..) AS t (other_name)")
            unnest_alias = join.this.args["alias"].name
            inner = inner.select(*(exp.column(n, table=unnest_alias, quoted=True) for n in names), copy=False)
            inner.append("joins", join.copy())
            renamed[unnest_alias.lower()] = alias
            join.pop()
        relation.replace(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias))))
    for column in list(query.find_all(exp.Column)):
        if column.table and column.table.lower() in renamed and column.find_ancestor(exp.Subquery) is None:
            column.set("table", exp.to_identifier(renamed[column.table.lower()]))
    return query


def plan_unnest(select: exp.Select, sources: Sources, stage_view: str,
                plan: Callable[..., ChangelogPlan]) -> ChangelogPlan:
    """A projection and filter of one relation's unnested rows: the relation's rows planned by `plan`
    (plan_changelog), then the query, its UNNESTs included, as Spark SQL over them."""
    relation = select.args["from_"].this
    alias = relation.alias_or_name
    columns = _columns(relation, sources)
    rows = _rows(relation, columns)
    below = plan(rows, sources, stage_view, True)
    query = select.copy()
    query.set("from_", exp.From(this=exp.to_table(ROWS).as_(alias)))
    shown: list[exp.Expr] = []
    for item in query.expressions:
        if isinstance(item, exp.Star) or isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
            of = item.table if isinstance(item, exp.Column) else ""
            shown += [exp.column(c, table=alias, quoted=True) for c in columns if of.lower() in ("", alias.lower())]
            for join in unnest_joins(query):
                if of.lower() in ("", join.this.args["alias"].name.lower()):
                    shown += [exp.column(n, table=join.this.args["alias"].name, quoted=True)
                              for n in _unnest_names(join.this)]
        else:
            shown.append(item)
    query.set("expressions", [*shown, exp.column(WEIGHT, table=alias)])
    types = {ROWS: {c.lower(): t for c, t in output_types(rows, sources).items() if t}}
    sql = f"WITH `{ROWS}` AS ({below.sql}) {to_spark_sql(query, types)}"
    return ChangelogPlan(below.inputs, below.stage, stage_view, sql, RETRACT, grows_only=below.grows_only)


def _rows(relation: exp.Expr, columns: list[str]) -> exp.Select:
    """`SELECT r.c1, r.c2, .. FROM r`: a relation's rows, each column named by its alias."""
    alias = relation.alias_or_name
    return exp.select(*(exp.column(c, table=alias, quoted=True) for c in columns)).from_(relation.copy())


def _owner(unnest: exp.Unnest, relations: list[exp.Expr], sources: Sources) -> int:
    """The index of the relation whose columns `unnest` expands (one relation: UNNEST reads one row at a time)."""
    found = set()
    for column in unnest.find_all(exp.Column):
        for n, relation in enumerate(relations):
            if isinstance(relation, exp.Unnest):
                continue
            if column.table:
                if column.table.lower() == relation.alias_or_name.lower():
                    found.add(n)
            elif column.name.lower() in (c.lower() for c in _columns(relation, sources)):
                found.add(n)
    if len(found) != 1:
        raise unsupported(f"UNNEST({', '.join(e.sql() for e in unnest.expressions)}), which reads "
                          f"{'no column of a table' if not found else 'columns of several tables'}",
                          hint="unnest one table's ARRAY or MAP column: CROSS JOIN UNNEST(t.a) AS u (x)")
    return found.pop()


def _columns(relation: exp.Expr, sources: Sources) -> list[str]:
    """The columns a relation of FROM gives: a catalog table's, or a named subquery's."""
    if isinstance(relation, exp.Table) and relation.name.lower() in sources.tables:
        return sources.tables[relation.name.lower()].column_names()
    if isinstance(relation, exp.Subquery) and relation.alias_or_name:
        names = relation.this.named_selects
        if names and "*" not in names and "" not in names:
            return names
    raise unsupported(f"UNNEST beside '{relation.sql()[:60]}'",
                      hint="unnest the columns of a table, or of a FROM subquery whose columns are named")


def _unnest_names(unnest: exp.Unnest) -> list[str]:
    """The columns an UNNEST gives, as its alias names them (WITH ORDINALITY's last)."""
    alias = unnest.args.get("alias")
    names = [c.name for c in alias.columns] if alias is not None else []
    ordinality = unnest.args.get("offset")
    if isinstance(ordinality, exp.Identifier):
        names.append(ordinality.name)
    if not names:
        raise unsupported(f"UNNEST({', '.join(e.sql() for e in unnest.expressions)}) without column names",
                          hint="name its columns: CROSS JOIN UNNEST(t.a) AS u (x)")
    return names
