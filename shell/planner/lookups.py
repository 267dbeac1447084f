"""Which tables a query joins FOR SYSTEM_TIME AS OF a processing-time column: lookup joins.

Why it exists: `JOIN customers FOR SYSTEM_TIME AS OF o.proc_time` (`proc_time AS PROCTIME()`) asks for the
table's rows as they are when each row is processed. Spark SQL drops the clause (sql/translate.py) and joins the
two inputs; for a connector that can be looked up (`Connector.has_lookup`: jdbc) the engine opens such a table
as the static side of a stream-static join, read again (or from its cache) every micro-batch, instead of as a
stream of its own. The plan names those tables; the engine decides by the connector.
"""

from __future__ import annotations

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.planner.processing_time import Views, processing_time_columns
from shell.planner.relations import written_name


def lookup_tables(query: exp.Expr, tables: list[TableDef], views: Views) -> tuple[str, ...]:
    """Lower-cased names of the tables the query reads FOR SYSTEM_TIME AS OF a PROCTIME() column."""
    proctime = processing_time_columns(query, tables, views)
    known = {t.name.lower() for t in tables}
    found: list[str] = []
    for relation in query.find_all(exp.Table):
        version = relation.args.get("version")
        time = version.expression if version is not None else None
        if not isinstance(time, exp.Column) or time.name.lower() not in proctime:
            continue
        name = written_name(relation).lower()  # `t`, `db.t` or `cat.db.t`: the name the catalog gave it under
        if name in known and name not in found:
            found.append(name)
    return tuple(found)
