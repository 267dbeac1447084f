"""Queries one keyed stage cannot run, split into FROM subqueries that each become a keyed stage of their own.

Why it exists: one keyed stage joins inputs that all meet on one key, and keeps an upsert table's rows by its
primary key. Everyday SQL goes past that: orders joined to users on the user id and then to items on the item id
(the Pulsar article's store enrichment), an upsert table joined or grouped on a column outside its key, MIN or
MAX over a join. Each such query is rewritten here, before the changelog planner sees it, so that the part a
stage can run is a FROM subquery; the planner plans that subquery as a stage of its own, and its weighted rows
enter the next stage as a changelog input (engine/changelog.py chains the stages in one Spark query).

Joins on another key: the joins before the key changes move into a subquery, whose columns are the ones the rest
of the query reads, named `<alias>__<column>`:

    SELECT o.id, u.name, i.title
    FROM orders AS o JOIN users AS u ON o.uid = u.uid JOIN items AS i ON o.item = i.id
->
    SELECT __s1.o__id AS id, __s1.u__name AS name, i.title AS title
    FROM (SELECT o.id AS o__id, o.item AS o__item, u.name AS u__name
          FROM orders AS o JOIN users AS u ON o.uid = u.uid) AS __s1
    JOIN items AS i ON __s1.o__item = i.id

An upsert table joined or grouped outside its primary key is first made a changelog of its own (a stage keyed by
the primary key: each update is the old row taken back and the new one added):

    SELECT u.name, o.total FROM orders AS o JOIN users AS u ON o.uid = u.uid      -- orders: upsert by id
->
    SELECT u.name, o.total FROM (SELECT o.total AS total, o.uid AS uid FROM orders AS o) AS o
    JOIN users AS u ON o.uid = u.uid

An aggregate that needs every row of its groups (MIN, MAX, COUNT DISTINCT over rows that can be taken back)
over a join reads the join as one subquery: `SELECT k, MAX(x) FROM a JOIN b .. GROUP BY k` becomes
`SELECT __s1.a__k AS k, MAX(__s1.b__x) FROM (SELECT .. FROM a JOIN b ..) AS __s1 GROUP BY __s1.a__k`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.errors import CatalogError
from shell.planner.model import CONSTANT_KEY, SCALAR_ALIAS
from shell.planner.sql_parts import subquery_join
from shell.sql.positions import at_name

STAGE_ALIAS = "__s"  # + n: the alias of a subquery made here, which the user's query cannot name
CLAUSES = ("expressions", "where", "group", "having", "order", "joins")


@dataclass(frozen=True)
class Relation:
    """One relation of a FROM clause, by its alias: its columns, whether `*` shows them, and its table if any."""

    alias: str
    columns: list[str]
    shown: bool
    table: TableDef | None


def relations(select: exp.Select, tables: dict[str, TableDef]) -> list[Relation]:
    """The FROM clause's relations in order; those of a semi or anti join (an IN / EXISTS subquery) are not
    shown: `*` does not expand to their columns."""
    found = []
    items = [(select.args["from_"].this, None)] + [(j.this, j) for j in select.args.get("joins") or []]
    for relation, join in items:
        shown = subquery_join(join) is None and not relation.alias_or_name.startswith(SCALAR_ALIAS)
        if isinstance(relation, exp.Table) and relation.name.lower() in tables:
            table = tables[relation.name.lower()]
            found.append(Relation(relation.alias_or_name, table.column_names(), shown, table))
        elif isinstance(relation, exp.Subquery):
            found.append(Relation(relation.alias_or_name, list(relation.this.named_selects), shown, None))
        else:
            return []  # a relation the planner will name as unsupported
    return found


def qualified(select: exp.Select, known: list[Relation]) -> exp.Select:
    """A copy of `select` with `*` expanded into named columns and every column of its own clauses qualified by
    the alias of its relation. A name no relation has (a SELECT alias, or a typo the planner names) stays as it is;
    a name two relations have is an error, as it is in the planner."""
    query = select.copy()
    by_alias = {r.alias.lower(): r for r in known}

    def qualify(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star) or node.table:
            return node
        owners = [r for r in known if r.shown and any(c.lower() == node.name.lower() for c in r.columns)]
        if len(owners) > 1:
            raise at_name(CatalogError(f"column '{node.name}' is ambiguous", hint=f"write {owners[0].alias}.{node.name}"),
                          node)
        if not owners:
            return node
        return exp.column(node.name, table=owners[0].alias, quoted=True)

    items = []
    for item in query.expressions:
        star = isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star))
        if not star:
            items.append(exp.alias_(item, item.name, quoted=True) if isinstance(item, exp.Column) else item)
            continue
        qualifier = item.table.lower() if isinstance(item, exp.Column) else ""
        if qualifier and qualifier not in by_alias:
            return query  # the planner names the unknown alias
        for relation in [by_alias[qualifier]] if qualifier else [r for r in known if r.shown]:
            items += [exp.alias_(exp.column(c, table=relation.alias, quoted=True), c, quoted=True)
                      for c in relation.columns if c != CONSTANT_KEY]
    query.set("expressions", items)
    for key in CLAUSES:
        _transform_clause(query, key, qualify)
    return query


def split_before(select: exp.Select, count: int, known: list[Relation], number: int) -> exp.Select:
    """`select` (qualified) with its first `count` relations and the joins between them moved into one FROM
    subquery aliased `__s<number>`, projecting the columns the rest of the query reads."""
    alias = f"{STAGE_ALIAS}{number}"
    joins = select.args.get("joins") or []
    inner_aliases = {r.alias.lower() for r in known[:count]}
    outer = select.copy()
    outer.set("from_", None)
    outer.set("joins", [j.copy() for j in joins[count - 1:]])
    needed: dict[tuple[str, str], str] = {}  # (relation alias, column) -> its name in the subquery

    def moved(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star) and node.table.lower() in inner_aliases:
            relation = next(r for r in known[:count] if r.alias.lower() == node.table.lower())
            column = next((c for c in relation.columns if c.lower() == node.name.lower()), node.name)
            name = needed.setdefault((relation.alias, column), f"{relation.alias}__{column}")
            return exp.column(name, table=alias, quoted=True)
        return node

    for key in CLAUSES:
        _transform_clause(outer, key, moved)
    inner = exp.select(*(exp.alias_(exp.column(c, table=a, quoted=True), n, quoted=True)
                         for (a, c), n in needed.items()) or [exp.Literal.number(1)])
    inner.set("from_", select.args["from_"].copy())
    if count > 1:
        inner.set("joins", [j.copy() for j in joins[:count - 1]])
    outer.set("from_", exp.From(this=inner.subquery(alias)))
    return outer


def alone(select: exp.Select, index: int, known: list[Relation], where: exp.Expr | None = None) -> exp.Select:
    """`select` (qualified) with relation `index` (a table) read through a subquery of its own under the same alias,
    projecting the columns the query reads of it (and keeping only the rows `where` holds for, if given), so that
    the planner makes it a stage of its own."""
    relation = known[index]
    used = {c.name.lower() for key in CLAUSES for c in _clause_columns(select, key) if c.table.lower() == relation.alias.lower()}
    columns = [c for c in relation.columns if c.lower() in used] or relation.columns[:1]
    table = exp.to_table(relation.table.name).as_(relation.alias)
    inner = exp.select(*(exp.alias_(exp.column(c, table=relation.alias, quoted=True), c, quoted=True) for c in columns))
    inner = inner.from_(table)
    if where is not None:
        inner = inner.where(where.copy())
    query = select.copy()
    subquery = inner.subquery(relation.alias)
    if index == 0:
        query.set("from_", exp.From(this=subquery))
    else:
        query.args["joins"][index - 1].set("this", subquery)
    return query


def _transform_clause(query: exp.Select, key: str, function) -> None:  # noqa: ANN001 - a node -> node function
    """Apply `function` to the columns of one clause of `query`, never inside a FROM subquery of its joins."""
    value = query.args.get(key)
    if value is None:
        return
    if key == "joins":
        for join in value:
            if join.args.get("on") is not None:
                join.set("on", join.args["on"].transform(function))
        return
    if isinstance(value, list):
        query.set(key, [v.transform(function) for v in value])
    else:
        query.set(key, value.transform(function))


def _clause_columns(query: exp.Select, key: str) -> list[exp.Column]:
    value = query.args.get(key)
    if value is None:
        return []
    if key == "joins":
        return [c for j in value if j.args.get("on") is not None for c in j.args["on"].find_all(exp.Column)]
    parts = value if isinstance(value, list) else [value]
    return [c for p in parts for c in p.find_all(exp.Column)]
