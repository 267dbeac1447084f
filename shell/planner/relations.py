"""The relations a query reads: their names, the temporary views they are registered as, and which FROM
subqueries Spark can run as written.

Why it exists: the planner (planner/planner.py) and the changelog path's rules both need these, and neither should
import the other for them.
"""

from __future__ import annotations

from sqlglot import exp

from shell.planner.model import APPEND, Sources
from shell.sql.census import Census
from shell.sql.fragments import object_name
from shell.sql.nodes import TableArg
from shell.sql.windows import find_window_tvfs, groups_by_window


def referenced_names(query: exp.Expr, census: Census | None = None) -> list[str]:
    """Names of the tables and views a query reads, in order of appearance, without its own CTE names.
    `census`: the query's own (census.py), whose lists save the walks."""
    ctes = {cte.alias_or_name.lower() for cte in (census.ctes if census else query.find_all(exp.CTE))}
    names: list[str] = []
    seen: set[str] = set()
    for table in census.tables if census else query.find_all(exp.Table):
        name = written_name(table)
        if name and name.lower() not in ctes and name.lower() not in seen:
            seen.add(name.lower())
            names.append(name)
    return names


def first_table(query: exp.Expr, name: str) -> exp.Table | None:
    """The first place `query` reads the table or view `name` (to point an error at it), or None."""
    key = name.lower()
    return next((t for t in query.find_all(exp.Table) if written_name(t).lower() == key), None)


def written_name(table: exp.Table) -> str:
    """The name a query reads a relation by, with its database and catalog parts: `t`, `db.t`, `cat.db.t`."""
    if not table.args.get("db") and not table.args.get("catalog"):
        return table.name
    return object_name(table)


def spark_name(name: str, tag: str) -> str:
    """The temporary view a relation is registered as for one query: unique, so queries never collide."""
    return f"__{tag}_" + "".join(c if c.isalnum() else "_" for c in name.lower())


def renamed(query: exp.Expr, names: dict[str, str], census: Census | None = None) -> exp.Expr:
    """A copy of `query` reading each relation from its view in `names`, still answering to its own name.

    With `census` (the query's own, census.py), `query` is the caller's own copy: it is changed in place, not
    copied again, and the census stays true (the tables it lists are the ones renamed)."""
    copy = query.copy() if census is None else query
    ctes = {cte.alias_or_name.lower() for cte in (census.ctes if census else copy.find_all(exp.CTE))}
    if census is not None:
        census.note(exp.TableAlias, exp.Identifier)
    for table in list(census.tables if census else copy.find_all(exp.Table)):
        key = written_name(table).lower()
        if key not in names or key in ctes:
            continue
        if not table.alias and not isinstance(table.parent, TableArg):
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
        table.set("this", exp.to_identifier(names[key]))
        table.set("db", None)
        table.set("catalog", None)
    return copy


def derivable(query: exp.Expr, sources: Sources) -> bool:
    """A FROM subquery Spark can run as it is: it filters, projects or UNION ALLs append-only tables, or reads a
    window table function of one, or aggregates per window (Spark emits a window's rows once, when the watermark
    passes its end, as Flink does)."""
    if not isinstance(query, (exp.Select, exp.Union)) or query.find(exp.Window, exp.Intersect, exp.Except):
        return False
    for select in query.find_all(exp.Select):
        if select.args.get("joins"):
            return False
        aggregating = select.args.get("group") or any(e.find(exp.AggFunc) for e in select.expressions)
        if aggregating and not (groups_by_window(select) and find_window_tvfs(select)):
            return False
    if isinstance(query, exp.Union) and query.args.get("distinct"):
        return False
    names = [n.lower() for n in referenced_names(query)]
    return bool(names) and all(n in sources.tables and sources.kinds.get(n) == APPEND for n in names)


def output_types(query: exp.Expr, sources: Sources) -> dict[str, str | None]:
    """The declared (Flink) type of each output column of a FROM subquery, where it is surely known: a column of a
    table or of a subquery, a field of a ROW column (`bid.price`), a CAST, MIN/MAX/SUM of one, a COUNT. Others are
    None. So an expression over a subquery's column keeps Flink's meaning (`AVG` of integers is an integer)."""
    while isinstance(query, exp.Union):
        query = query.this
    if not isinstance(query, exp.Select) or query.args.get("from_") is None:
        return {}
    relations: dict[str, dict[str, str | None]] = {}
    for relation in [query.args["from_"].this] + [j.this for j in query.args.get("joins") or []]:
        if isinstance(relation, exp.Table) and relation.name.lower() in sources.tables:
            table = sources.tables[relation.name.lower()]
            relations[relation.alias_or_name.lower()] = {c.name.lower(): c.data_type for c in table.columns}
        elif isinstance(relation, exp.Subquery):
            inner = output_types(relation.this, sources)
            relations[relation.alias_or_name.lower()] = {k.lower(): v for k, v in inner.items()}
    return {item.alias_or_name: _declared(item.this if isinstance(item, exp.Alias) else item, relations)
            for item in query.expressions if not isinstance(item, exp.Star)}


def _declared(node: exp.Expr, relations: dict[str, dict[str, str | None]]) -> str | None:
    if isinstance(node, exp.Paren):
        return _declared(node.this, relations)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.sql()
    if isinstance(node, exp.Count):
        return "BIGINT"
    if isinstance(node, (exp.Min, exp.Max, exp.Sum)) and not isinstance(node.this, exp.Distinct):
        return _declared(node.this, relations)
    if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
        return None
    name, qualifier = node.name.lower(), node.table.lower()
    if qualifier in relations:
        return relations[qualifier].get(name)
    owners = [r for r in relations.values() if name in r]
    if not qualifier:
        return owners[0][name] if len(owners) == 1 else None
    rows = [r[qualifier] for r in relations.values() if r.get(qualifier)]  # `bid.price`: a field of ROW column bid
    return _field_type(rows[0], name) if len(rows) == 1 else None


def _field_type(row_type: str, field: str) -> str | None:
    from shell.errors import SqlSyntaxError
    from shell.sql.fragments import parse_type

    try:
        parsed = parse_type(row_type)
    except SqlSyntaxError:
        return None
    for member in parsed.expressions:
        if member.name.lower() == field and member.args.get("kind") is not None:
            return member.args["kind"].sql()
    return None
