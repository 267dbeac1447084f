"""The relations a query reads: their names, the temporary views they are registered as, and which FROM
subqueries Spark can run as written.

Why it exists: the planner (planner/planner.py) and the changelog path's rules both need these, and neither should
import the other for them.
"""

from __future__ import annotations

from sqlglot import exp

from shell.planner.model import APPEND, Sources
from shell.sql.nodes import TableArg


def referenced_names(query: exp.Expr) -> list[str]:
    """Names of the tables and views a query reads, in order of appearance, without its own CTE names."""
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    names: list[str] = []
    for table in query.find_all(exp.Table):
        name = table.name
        if name and name.lower() not in ctes and name.lower() not in (n.lower() for n in names):
            names.append(name)
    return names


def spark_name(name: str, tag: str) -> str:
    """The temporary view a relation is registered as for one query: unique, so queries never collide."""
    return f"__{tag}_" + "".join(c if c.isalnum() else "_" for c in name.lower())


def renamed(query: exp.Expr, names: dict[str, str]) -> exp.Expr:
    """A copy of `query` reading each relation from its view in `names`, still answering to its own name."""
    copy = query.copy()
    ctes = {cte.alias_or_name.lower() for cte in copy.find_all(exp.CTE)}
    for table in list(copy.find_all(exp.Table)):
        key = table.name.lower()
        if key not in names or key in ctes:
            continue
        if not table.alias and not isinstance(table.parent, TableArg):
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
        table.set("this", exp.to_identifier(names[key]))
        table.set("db", None)
        table.set("catalog", None)
    return copy


def derivable(query: exp.Expr, sources: Sources) -> bool:
    """A FROM subquery Spark can run as it is: it filters, projects or UNION ALLs append-only tables."""
    if not isinstance(query, (exp.Select, exp.Union)) or query.find(exp.AggFunc) or query.find(exp.Window):
        return False
    if any(s.args.get("group") or s.args.get("joins") for s in query.find_all(exp.Select)):
        return False
    if isinstance(query, exp.Union) and query.args.get("distinct"):
        return False
    names = [n.lower() for n in referenced_names(query)]
    return bool(names) and all(n in sources.tables and sources.kinds.get(n) == APPEND for n in names)
