"""Windows over a PROCTIME() column (processing-time windows): found, checked, and pointed at the engine's input.

Why it exists: Spark closes windows by an event-time watermark only. A window over a processing-time column (a
table's computed column `p AS PROCTIME()`, or `PROCTIME() AS p` in a view or the query) runs as a window over that
column made the event time: the engine registers the window's input relation once more, as `ProcessingTimeInput.view`,
with a watermark on the column and a heartbeat that moves it with the wall clock (engine/processing_time.py), and
the window table function reads that view. The query's tables are then opened without their own event-time
watermarks, so only the wall clock closes its windows: a query cannot window by both.

Only window aggregations of the window table functions are run (`GROUP BY window_start, window_end`), as in
Flink, which has no processing-time window join, Top-N or deduplication either; the legacy `GROUP BY TUMBLE(p, ...)`
over such a column is refused with the table function to write instead.
"""

from __future__ import annotations

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.errors import UnsupportedFeatureError
from shell.planner.plan import ProcessingTimeInput
from shell.sql.census import Census
from shell.sql.nodes import TableArg
from shell.sql.windows import GROUP_WINDOWS, WindowTvf, find_window_tvfs, groups_by_window

Views = list[tuple[str, exp.Expr]]  # (view name, its parsed query)


def processing_time_columns(query: exp.Expr, tables: list[TableDef], views: Views) -> set[str]:
    """Lower-cased names of the PROCTIME() columns the query can see: the tables' computed ones and the aliases
    of PROCTIME() in the query and in the views it reads."""
    names = {c.name.lower() for t in tables for c in t.columns if c.is_processing_time}
    for body in [query, *(q for _, q in views)]:
        names |= {a.alias.lower() for a in body.find_all(exp.Alias)
                  if isinstance(a.this, exp.Anonymous) and a.this.name.upper() == "PROCTIME"}
    return names


def processing_time_windows(query: exp.Expr, tables: list[TableDef], views: Views,
                            census: Census | None = None) -> list[WindowTvf]:
    """The query's window table functions over a processing-time column, checked: each must be a window
    aggregation, none may hide in a view, and the query has no event-time window beside them. `views` are the
    (name, parsed query) of the views the query reads, through views too (planner.resolve); `census`, the
    query's own (sql/census.py), saves the walks that could find nothing."""
    windows = find_window_tvfs(query) if census is None or census.has(exp.TableFromRows) else []
    groups = query.find_all(exp.Group) if census is None or census.has(exp.Anonymous) else ()
    group_windows = [f for g in groups for f in g.expressions
                     if isinstance(f, exp.Anonymous) and f.name.upper() in GROUP_WINDOWS and f.expressions]
    if not windows and not group_windows and not any(find_window_tvfs(body) for _, body in views):
        return []
    columns = processing_time_columns(query, tables, views)
    for call in group_windows:
        time_col = call.expressions[0]
        if isinstance(time_col, exp.Column) and time_col.name.lower() in columns:
            raise UnsupportedFeatureError(
                f"GROUP BY {call.name.upper()}({time_col.name}, ...) over a processing-time column is not supported",
                hint=f"use the table function: TABLE({call.name.upper()}(TABLE t, DESCRIPTOR({time_col.name}), ...))")
    for name, body in views:
        for window in find_window_tvfs(body):
            if window.time_col.lower() in columns:
                raise UnsupportedFeatureError(
                    f"{window.kind} over the processing-time column '{window.time_col}' inside view '{name}' is not "
                    "supported", hint="write the window aggregation in the query that reads the view")
    found = [w for w in windows if w.time_col.lower() in columns]
    for window in found:
        select = window.node.parent.parent if isinstance(window.node.parent, exp.From) else None
        if not (isinstance(select, exp.Select) and groups_by_window(select)):
            raise UnsupportedFeatureError(
                f"{window.kind} over the processing-time column '{window.time_col}' outside a window aggregation is "
                "not supported", hint="GROUP BY window_start, window_end (Flink has no processing-time window join"
                " or Top-N either)")
    if found and len(found) < len(windows):
        other = next(w for w in windows if w.time_col.lower() not in columns)
        raise UnsupportedFeatureError(
            f"{other.kind} over the event-time column '{other.time_col}' in a query with processing-time windows is "
            "not supported", hint="run the event-time and the processing-time windows as two queries")
    return found


def refuse_processing_time_windows(query: exp.Expr, tables: list[TableDef], views: Views, reason: str,
                                   census: Census | None = None) -> None:
    """The changelog path has no processing-time windows: such a window is named as not supported, with the reason
    the query takes that path."""
    for window in processing_time_windows(query, tables, views, census):
        raise UnsupportedFeatureError(
            f"{window.kind} over the processing-time column '{window.time_col}' in a query that {reason.split(':')[0]}"
            " is not supported", hint="window over an event-time column with a WATERMARK")


def read_processing_time(query: exp.Expr, columns: set[str], census: Census | None = None) -> list[ProcessingTimeInput]:
    """Make each window of `query` (already reading its relations' views: relations.renamed) over one of the
    processing-time `columns` read its relation's processing-time view instead (in place); returns those views.
    `census`: the query's own (sql/census.py)."""
    inputs: dict[str, ProcessingTimeInput] = {}
    if not columns or (census is not None and not census.has(exp.TableFromRows)):
        return []
    for window in find_window_tvfs(query):
        if window.time_col.lower() not in columns:
            continue
        table = _table_of(window)
        relation = table.name
        view = f"{relation}__proctime_{''.join(c if c.isalnum() else '_' for c in window.time_col.lower())}"
        inputs.setdefault(view, ProcessingTimeInput(view=view, relation=relation, column=window.time_col))
        table.set("this", exp.to_identifier(view))
    return list(inputs.values())


def _table_of(window: WindowTvf) -> exp.Table:
    for arg in window.node.this.expressions:
        table_arg = arg.expression if isinstance(arg, exp.Kwarg) else arg
        if isinstance(table_arg, TableArg):
            return table_arg.this
    raise UnsupportedFeatureError(f"{window.kind} over anything but TABLE name")
