"""Unknown and ungrouped columns of the simplest queries, and window time columns, found before Spark is asked:
pointed at the name.

Why it exists: a query that takes the native path is checked by Spark, which reports an unknown column
without a position (`SELECT nme FROM t` answered at the start of the statement, `bad.sql:3:1` for a typo at
4:8), and only once a streaming query is being started. For the shapes whose columns can be told without
Spark's analyzer, this check answers at once, with the caret under the name: every outermost SELECT (and each
branch of an outermost UNION) that reads one catalog table, without joins, whose columns are that table's
columns or the SELECT's own aliases. Anything else (joins, subqueries in FROM, views, WITH, window table
functions, names qualified by something other than the table) is left to the planner's other rules and Spark:
this check never refuses a query it cannot fully read.

In the same shapes, a column of the table that an aggregating SELECT (GROUP BY, or an aggregate in SELECT or
HAVING) uses outside any aggregate, although no GROUP BY expression names it, is refused as Flink refuses it
("Expression 'x' is not being grouped"); Spark would say so only when the job starts. And a window table
function's DESCRIPTOR must name a time column of its table.
"""

from __future__ import annotations

from collections import Counter

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.catalog.store import Catalog
from shell.errors import CatalogError
from shell.planner.relations import written_name
from shell.sql.functions import AGGREGATES_AS_CALLS, FUNCTION_MAP, SAME_IN_SPARK
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
            _check_grouped(select, found[0])
    _check_window_times(query, catalog, ctes)


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


# Aggregates sqlglot does not parse as AggFunc (Flink's names): their arguments are not checked either.
_OTHER_AGGREGATES = {"LISTAGG", "COLLECT", "JSON_ARRAYAGG", "JSON_OBJECTAGG", "ARRAY_AGG", "STRING_AGG",
                     "FIRST_VALUE", "LAST_VALUE", *AGGREGATES_AS_CALLS}
# The calls the parser leaves as plain calls that are known scalar functions: their arguments are checked; any
# other call's (a user's function may aggregate) are not.
_SCALAR_CALLS = {n.upper() for n in (*FUNCTION_MAP, *SAME_IN_SPARK)} - _OTHER_AGGREGATES - {"PERCENT_RANK"}


def _check_grouped(select: exp.Select, table: TableDef) -> None:
    """A column of `table` used outside aggregates by an aggregating SELECT and named by no GROUP BY expression."""
    group = select.args.get("group")
    if group is not None and any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup", "all")):
        return
    keys = list(group.expressions) if group is not None else []
    having = select.args.get("having")
    parts = [*select.expressions, *([having.this] if having is not None else [])]
    if not keys and not any(_aggregates_in(part) for part in parts):
        return
    if any(isinstance(k, exp.Literal) for k in keys):
        return  # GROUP BY 1: by position
    columns = {name.lower() for name in table.column_names()}
    aliases = {i.alias.lower(): i.this for i in select.expressions if isinstance(i, exp.Alias)}
    grouped = set()
    for key in keys:
        named = key.name.lower() if isinstance(key, exp.Column) and not key.table else ""
        if named in aliases and named not in columns:  # GROUP BY a SELECT alias: its expression's columns
            grouped |= {c.name.lower() for c in aliases[named].find_all(exp.Column)}
        grouped |= {c.name.lower() for c in key.find_all(exp.Column)}
    for part in parts:
        for column in _outside_aggregates(part):
            name = column.name.lower()
            if isinstance(column.this, exp.Star) or name not in columns or name in grouped or name in aliases:
                continue
            raise at_name(CatalogError(
                f"column '{column.name}' is neither in GROUP BY nor inside an aggregate",
                hint=f"add {column.name} to GROUP BY, or aggregate it (MAX({column.name}), say)"), column)


def _is_aggregate(node: exp.Expr) -> bool:
    return isinstance(node, exp.AggFunc) and not isinstance(node.parent, exp.Window) or (
        isinstance(node, exp.Func) and node.sql_name().upper() in _OTHER_AGGREGATES)


def _aggregates_in(node: exp.Expr) -> bool:
    """Whether `node` holds an aggregate of its own SELECT (not a window's, not a subquery's)."""
    pending = [node]
    while pending:
        current = pending.pop()
        if _is_aggregate(current):
            return True
        if not isinstance(current, (exp.Window, exp.Query, exp.Subquery)):
            pending.extend(current.iter_expressions())
    return False


def _outside_aggregates(node: exp.Expr) -> list[exp.Column]:
    """The columns in `node` outside aggregates, windows, calls that are not known scalar functions (a user's
    may aggregate) and subqueries."""
    found: list[exp.Column] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, exp.Column):
            found.append(current)
        elif isinstance(current, (exp.Window, exp.Filter, exp.Query, exp.Subquery)) or _is_aggregate(current) or \
                isinstance(current, exp.Anonymous) and current.name.upper() not in _SCALAR_CALLS:
            continue
        else:
            pending.extend(current.iter_expressions())
    return found


def _check_window_times(query: exp.Expr, catalog: Catalog, ctes: set[str]) -> None:
    """Each window table function over a catalog table names, in DESCRIPTOR, one of its columns that holds a
    time: unknown names and other types are refused at the name."""
    from shell.sql.nodes import Descriptor, TableArg

    for call in query.find_all(exp.Anonymous):
        if call.name.upper() not in ("TUMBLE", "HOP", "CUMULATE", "SESSION") or \
                not isinstance(call.parent, exp.TableFromRows):
            continue
        data = next((a for a in call.expressions if isinstance(a, TableArg)), None)
        descriptor = next((a for a in call.expressions if isinstance(a, Descriptor)), None)
        if data is None or descriptor is None or not isinstance(data.this, exp.Table):
            continue
        if written_name(data.this).lower() in ctes:
            continue
        table = catalog.find(written_name(data.this))
        if not isinstance(table, TableDef):
            continue
        for named in descriptor.expressions:
            if not isinstance(named, exp.Column):
                continue
            column = table.column(named.name)
            if column is None:
                hint = suggest(named.name, table.column_names()) or f"DESCRIBE {table.name} lists its columns"
                raise at_name(CatalogError(f"unknown column '{named.name}' in DESCRIPTOR", hint=hint), named)
            kind = (column.data_type or "").upper()
            if kind and not kind.startswith("TIMESTAMP"):
                times = [c.name for c in table.columns if (c.data_type or "").upper().startswith("TIMESTAMP")
                         or c.is_processing_time]
                raise at_name(CatalogError(
                    f"the window's time column '{column.name}' is {column.data_type}, not a time",
                    hint=f"name a time attribute of '{table.name}' in DESCRIPTOR"
                         + (f": {', '.join(times)}" if times else " (a TIMESTAMP(3) column with a WATERMARK)")),
                    named)
