"""Unknown columns of the simplest queries, found before Spark is asked: pointed at the name.

Why it exists: a query that takes the native path is checked by Spark, which reports an unknown column
without a position (`SELECT nme FROM t` answered at the start of the statement, `bad.sql:3:1` for a typo at
4:8), and only once a streaming query is being started. For the shapes whose columns can be told without
Spark's analyzer, this check answers at once, with the caret under the name: every outermost SELECT (and each
branch of an outermost UNION) that reads one catalog table, without joins, whose columns are that table's
columns or the SELECT's own aliases. Anything else (joins, subqueries in FROM, views, WITH, window table
functions, names qualified by something other than the table) is left to the planner's other rules and Spark:
this check never refuses a query it cannot fully read.
"""

from __future__ import annotations

from collections import Counter

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.catalog.store import Catalog
from shell.errors import CatalogError
from shell.planner.relations import written_name
from shell.sql.hints import suggest
from shell.sql.positions import at_name

# The clauses of a SELECT whose columns are its FROM table's (or its own aliases).
_CLAUSES = ("expressions", "where", "group", "having", "qualify", "order")


def check_columns(query: exp.Expr, catalog: Catalog) -> None:
    """Raise CatalogError ("unknown column 'x'", positioned at x) for the first column of an outermost SELECT of
    one catalog table that the table does not have."""
    with_ = query.args.get("with_")
    ctes = {cte.alias_or_name.lower() for cte in with_.expressions} if with_ is not None else set()
    for select in _outermost_selects(query):
        found = _single_table(select, catalog, ctes)
        if found is not None:
            _check_select(select, *found)


def _outermost_selects(query: exp.Expr) -> list[exp.Select]:
    found: list[exp.Select] = []
    pending = [query]
    while pending:
        node = pending.pop()
        if isinstance(node, exp.Union):
            pending.extend((node.expression, node.this))
        elif isinstance(node, exp.Select):
            found.append(node)
    return found


def _single_table(select: exp.Select, catalog: Catalog, ctes: set[str]) -> tuple[TableDef, str] | None:
    """The catalog table a SELECT reads alone, and the name it goes by there (its alias or name), or None."""
    source = select.args.get("from_")
    if source is None or select.args.get("joins") or select.args.get("laterals"):
        return None
    table = source.this
    if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
        return None
    if written_name(table).lower() in ctes or table.args.get("joins"):
        return None
    found = catalog.find(written_name(table))
    return (found, table.alias_or_name) if isinstance(found, TableDef) else None


def _check_select(select: exp.Select, table: TableDef, called: str) -> None:
    columns = {name.lower() for name in table.column_names()}
    qualifiers = {called.lower(), table.name.lower()}
    # A SELECT's aliases name its other items (Spark reads `x AS a, a + 1`), never the item itself.
    aliases = Counter(i.alias.lower() for i in select.expressions if isinstance(i, exp.Alias))
    for key in _CLAUSES:
        value = select.args.get(key)
        for part in value if isinstance(value, list) else [value] if value is not None else []:
            own = part.alias.lower() if key == "expressions" and isinstance(part, exp.Alias) else None
            for column in _own_columns(part):
                name, qualifier = column.name, column.table.lower()
                if isinstance(column.this, exp.Star) or column.args.get("db") or not name:
                    continue
                if qualifier and (qualifier not in qualifiers or qualifier in columns):
                    continue  # another relation's column, or a field of a ROW column
                lowered = name.lower()
                if lowered in columns or (not qualifier and aliases[lowered] > (lowered == own)):
                    continue
                hint = suggest(name, table.column_names()) or f"DESCRIBE {table.name} lists its columns"
                raise at_name(CatalogError(f"unknown column '{name}'", hint=hint), column)


def _own_columns(node: exp.Expr) -> list[exp.Column]:
    """The columns in `node` outside any subquery (whose columns may be another table's)."""
    found: list[exp.Column] = []
    pending = [node]
    pop, push, extend = pending.pop, pending.append, pending.extend
    column, nested, expr = exp.Column, (exp.Query, exp.Subquery), exp.Expr
    while pending:
        current = pop()
        if isinstance(current, column):
            found.append(current)
            continue
        if isinstance(current, nested):
            continue
        # the children, last first, so they are met in the order they are written (as iter_expressions gives them)
        for value in reversed(current.args.values()):
            if type(value) is list:
                extend([child for child in reversed(value) if isinstance(child, expr)])
            elif isinstance(value, expr):
                push(value)
    return found
