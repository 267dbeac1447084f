"""Flink's windows, found in a query and rewritten into Spark's window()/session_window().

Why it exists: Flink writes windows as table functions, `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts),
INTERVAL '1' MINUTE))`, or as legacy group windows, `GROUP BY TUMBLE(ts, INTERVAL '1' HOUR)`.
Spark groups by a `window(ts, '1 minute')` struct instead. `find_window_tvfs` describes every
window TVF for the planner; `rewrite_windows` turns TUMBLE/HOP/SESSION/CUMULATE into Spark SQL
(CUMULATE has no Spark form and is built from window() and a step number, see `_rewrite_cumulate`):

* a SELECT that groups by window_start and window_end groups by the window struct instead,
  and window_start/window_end/window_time become `window.start`, `window.end`,
  `window_time(window)` (`session_window...` for SESSION), which keeps Spark's event-time
  watermark semantics;
* any other use of TUMBLE/HOP becomes a subquery adding window_start, window_end and
  window_time columns (plus Spark's `window` struct column) to the source table; a join of two
  such subqueries on their windows (Flink's window join) also joins on the struct (window_chains.py).

A HOP aggregation whose aggregates combine exactly is then aggregated slice by slice (window_slicing.py).
Then window_chains.py lets a query group or join window results by their window.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from shell.errors import UnsupportedFeatureError
from shell.sql import nodes
from shell.sql.operand_types import ColumnTypes
from shell.sql.window_chains import carry_window_time, mark_window_rows
from shell.sql.window_slicing import slice_hop
from shell.units import parse_duration_ms

WINDOW_KINDS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")
# Positional parameters of each window TVF after DATA and TIMECOL.
TVF_PARAMETERS = {
    "TUMBLE": ("size", "offset"),
    "HOP": ("slide", "size", "offset"),
    "CUMULATE": ("step", "size", "offset"),
    "SESSION": ("gap",),
}
# Legacy group-window functions: name -> (parameters after the time column).
GROUP_WINDOWS = {"TUMBLE": ("size",), "HOP": ("slide", "size"), "SESSION": ("gap",)}
# Legacy auxiliary functions -> field of the window struct.
AUXILIARY = {"START": "start", "END": "end", "ROWTIME": "rowtime"}
WINDOW_COLUMNS = ("window_start", "window_end", "window_time")


@dataclass(frozen=True)
class WindowTvf:
    """A window table function. Durations are Spark duration strings ('10 minutes')."""

    kind: str
    table: str | None
    time_col: str
    size: str | None = None
    slide: str | None = None
    step: str | None = None
    gap: str | None = None
    offset: str | None = None
    partition_by: list[str] = field(default_factory=list)
    alias: str | None = None
    node: exp.Expr | None = field(default=None, compare=False, repr=False)


def interval_to_duration(node: exp.Expr | None) -> str:
    """'10 minutes' for INTERVAL '10' MINUTE(S); Spark's window() takes such strings."""
    if isinstance(node, exp.Interval) and node.this is not None:
        unit = node.args.get("unit")
        unit_name = unit.name if isinstance(unit, exp.Var) else unit.key if unit is not None else ""
        amount = node.this.name.strip()
        unit_name = unit_name.lower()
        if unit_name and amount and amount.replace(".", "", 1).lstrip("-").isdigit():
            unit_name = unit_name if unit_name.endswith("s") else f"{unit_name}s"
            return f"{amount} {unit_name}"
        if not unit_name and amount:
            return amount
    text = node.sql() if node is not None else "nothing"
    raise UnsupportedFeatureError(f"window size {text}: use INTERVAL 'n' UNIT")


def _arguments(call: exp.Expr) -> tuple[list[exp.Expr], dict[str, exp.Expr]]:
    positional, named = [], {}
    for arg in call.expressions:
        if isinstance(arg, exp.Kwarg):
            named[arg.this.name.lower()] = arg.expression
        else:
            positional.append(arg)
    return positional, named


def describe_tvf(node: exp.TableFromRows) -> WindowTvf | None:
    """The WindowTvf of a `TABLE(kind(...))` node, or None if it is not a window function."""
    call = node.this
    if not isinstance(call, exp.Anonymous) or call.name.upper() not in WINDOW_KINDS:
        return None
    kind = call.name.upper()
    positional, named = _arguments(call)
    data = named.get("data", positional[0] if positional else None)
    timecol = named.get("timecol", positional[1] if len(positional) > 1 else None)
    if not isinstance(data, nodes.TableArg):
        raise UnsupportedFeatureError(f"{kind} over anything but TABLE name")
    if not isinstance(timecol, nodes.Descriptor) or len(timecol.expressions) != 1:
        raise UnsupportedFeatureError(f"{kind} without DESCRIPTOR(time_column)")
    params = dict(zip(TVF_PARAMETERS[kind], positional[2:]))
    params.update({k: v for k, v in named.items() if k in TVF_PARAMETERS[kind]})
    durations = {k: interval_to_duration(v) for k, v in params.items()}
    alias = node.args.get("alias")
    return WindowTvf(
        kind=kind,
        table=".".join(p.name for p in data.this.parts) if isinstance(data.this, exp.Table) else None,
        time_col=timecol.expressions[0].name,
        partition_by=[c.name for c in data.args.get("partition_by") or []],
        alias=alias.name if alias is not None else None,
        node=node,
        **durations,
    )


def find_window_tvfs(query: exp.Expr) -> list[WindowTvf]:
    """Every window table function in `query`, outermost first."""
    found = []
    for node in query.find_all(exp.TableFromRows):
        tvf = describe_tvf(node)
        if tvf is not None:
            found.append(tvf)
    return found


# --- rewriting --------------------------------------------------------------------------------


def _window_call(kind: str, time_col: exp.Expr, d: dict[str, str | None]) -> tuple[exp.Expr, str]:
    """Spark's window()/session_window() call and the name of the struct it makes."""
    lit = exp.Literal.string
    if kind == "SESSION":
        return exp.Anonymous(this="session_window", expressions=[time_col, lit(d["gap"] or "")]), "session_window"
    size = lit(d["size"] or "")
    args = [time_col, size]
    if kind == "HOP" or d.get("offset"):
        args.append(lit(d.get("slide") or d["size"] or ""))
    if d.get("offset"):
        args.append(lit(d["offset"] or ""))
    return exp.Anonymous(this="window", expressions=args), "window"


def _field(struct: str, column: str) -> exp.Expr:
    if column == "window_time" or column == "rowtime":
        return exp.Anonymous(this="window_time", expressions=[exp.column(struct)])
    return exp.Column(this=exp.to_identifier(column.split("_")[-1]), table=exp.to_identifier(struct))


def _is_window_column(node: exp.Expr, name: str | None = None) -> bool:
    return (
        isinstance(node, exp.Column)
        and node.name.lower() in WINDOW_COLUMNS
        and (name is None or node.name.lower() == name)
    )


def _replace_columns(select: exp.Select, value_of: Callable[[str], exp.Expr]) -> None:
    """window_start/_end/_time in the select list, HAVING and ORDER BY -> `value_of(name)` (e.g. struct fields)."""
    for index, projection in enumerate(select.expressions):
        if _is_window_column(projection):
            select.expressions[index] = exp.alias_(value_of(projection.name.lower()), projection.name)
    for key in ("expressions", "having", "order", "qualify"):
        value = select.args.get(key)
        for part in value if isinstance(value, list) else [value] if value is not None else []:
            for column in list(part.find_all(exp.Column)):
                if _is_window_column(column):
                    column.replace(value_of(column.name.lower()))


def groups_by_window(select: exp.Select) -> bool:
    """The SELECT groups by window_start and window_end: a window aggregation, whose rows are final once the
    watermark passes the window's end."""
    group = select.args.get("group")
    if group is None:
        return False
    names = {e.name.lower() for e in group.expressions if _is_window_column(e)}
    return {"window_start", "window_end"} <= names


def _source_of(tvf: WindowTvf) -> exp.Table:
    data = next(a for a in tvf.node.this.expressions if isinstance(a, nodes.TableArg) or (
        isinstance(a, exp.Kwarg) and isinstance(a.expression, nodes.TableArg)))
    table_arg = data if isinstance(data, nodes.TableArg) else data.expression
    return table_arg.this.copy()


def _rewrite_tvf(tvf: WindowTvf, types: ColumnTypes) -> None:
    node = tvf.node
    assert node is not None
    durations = {"size": tvf.size, "slide": tvf.slide, "gap": tvf.gap, "offset": tvf.offset}
    time_col = exp.column(tvf.time_col)
    window, struct = _window_call(tvf.kind, time_col, durations)
    source = _source_of(tvf)
    select = node.parent.parent if isinstance(node.parent, exp.From) else None
    if tvf.kind == "CUMULATE":
        _rewrite_cumulate(tvf, source, select)
        return
    if isinstance(select, exp.Select) and groups_by_window(select):
        if tvf.alias:
            source.set("alias", exp.TableAlias(this=exp.to_identifier(tvf.alias)))
        node.replace(source)
        group = select.args["group"]
        kept: list[exp.Expr] = []
        for expression in group.expressions:
            if _is_window_column(expression):
                if window not in kept:
                    kept.append(window)
            else:
                kept.append(expression)
        group.set("expressions", kept)
        _replace_columns(select, lambda name: _field(struct, name))
        if tvf.kind == "HOP":
            slice_hop(select, tvf.size or "", tvf.slide or "", tvf.offset, types)
        return
    if tvf.kind == "SESSION":
        raise UnsupportedFeatureError("SESSION windows without GROUP BY window_start, window_end")
    inner = exp.select(exp.Star(), exp.alias_(window, "window")).from_(source)
    outer = exp.select(
        exp.Star(),
        exp.alias_(_field("window", "window_start"), "window_start"),
        exp.alias_(_field("window", "window_end"), "window_end"),
        exp.alias_(_field("window", "window_time"), "window_time"),
    ).from_(inner.subquery())
    mark_window_rows(outer)
    node.replace(outer.subquery(tvf.alias) if tvf.alias else outer.subquery())


# CUMULATE has no Spark form. Each row joins the size-long tumbling window of its time (Spark's window(), which
# carries the watermark) and, in it, every cumulative window ending at or after the row: step numbers k from the
# row's own step to size/step, exploded; window_end = window.start + k * step. Grouping by (window, k) keeps
# Spark's event-time semantics, so the results are Flink's; they are emitted when the whole window closes.
CUMULATE_STEP = "__cumulate_step"


def _duration_micros(duration: str) -> int:
    try:
        return parse_duration_ms(duration) * 1000
    except ValueError:
        raise UnsupportedFeatureError(
            f"CUMULATE with a step or size of {duration}: use INTERVAL 'n' SECOND/MINUTE/HOUR/DAY") from None


def _cumulate_end(step_us: int, offset: int = 0) -> exp.Expr:
    """window.start + k * step (- offset micros): the end of cumulative window k."""
    micros = exp.Mul(this=exp.column(CUMULATE_STEP), expression=exp.Literal.number(step_us))
    if offset:
        micros = exp.Sub(this=micros, expression=exp.Literal.number(offset))
    return exp.Anonymous(this="timestampadd", expressions=[exp.var("MICROSECOND"), micros, _field("window", "window_start")])


def _rewrite_cumulate(tvf: WindowTvf, source: exp.Table, select: exp.Expr | None) -> None:
    step_us, size_us = _duration_micros(tvf.step or ""), _duration_micros(tvf.size or "")
    if step_us <= 0 or size_us % step_us:
        raise UnsupportedFeatureError(f"CUMULATE with a size ({tvf.size}) that is not a multiple of its step ({tvf.step})")
    node = tvf.node
    assert node is not None
    window, _ = _window_call("TUMBLE", exp.column(tvf.time_col), {"size": tvf.size, "offset": tvf.offset})
    elapsed = exp.Anonymous(this="timestampdiff", expressions=[exp.var("MICROSECOND"), _field("window", "window_start"),
                                                               exp.column(tvf.time_col)])
    first = exp.Add(this=exp.Cast(this=exp.Floor(this=exp.Div(this=elapsed, expression=exp.Literal.number(step_us))),
                                  to=exp.DataType.build("INT")), expression=exp.Literal.number(1))
    steps = exp.Anonymous(this="sequence", expressions=[first, exp.Literal.number(size_us // step_us)])
    inner = exp.select(exp.Star(), exp.alias_(window, "window")).from_(source)
    exploded = exp.select(exp.Star(), exp.alias_(exp.Explode(this=steps), CUMULATE_STEP)).from_(inner.subquery())
    columns = {"window_start": _field("window", "window_start"), "window_end": _cumulate_end(step_us),
               "window_time": _cumulate_end(step_us, 1)}
    if isinstance(select, exp.Select) and groups_by_window(select):
        node.replace(exploded.subquery(tvf.alias) if tvf.alias else exploded.subquery())
        group = select.args["group"]
        kept = [e for e in group.expressions if not _is_window_column(e)]
        group.set("expressions", [exp.column("window"), exp.column(CUMULATE_STEP), *kept])
        _replace_columns(select, lambda name: columns[name].copy())
        return
    outer = exp.select(exp.Star(), *(exp.alias_(e, name) for name, e in columns.items())).from_(exploded.subquery())
    mark_window_rows(outer)
    node.replace(outer.subquery(tvf.alias) if tvf.alias else outer.subquery())


def _rewrite_group_windows(select: exp.Select) -> None:
    """Legacy `GROUP BY TUMBLE(ts, size)` and its TUMBLE_START/END/ROWTIME helpers."""
    group = select.args.get("group")
    if group is None:
        return
    for index, expression in enumerate(group.expressions):
        if not isinstance(expression, exp.Anonymous):
            continue
        kind = expression.name.upper()
        if kind not in GROUP_WINDOWS:
            continue
        args = expression.expressions
        params = dict(zip(GROUP_WINDOWS[kind], args[1:]))
        durations = {k: interval_to_duration(v) for k, v in params.items()}
        window, struct = _window_call(kind, args[0].copy(), durations)
        group.expressions[index] = window
        for call in list(select.find_all(exp.Anonymous)):
            name = call.name.upper()
            prefix, _, suffix = name.partition("_")
            if prefix == kind and suffix in AUXILIARY:
                call.replace(_field(struct, AUXILIARY[suffix] if suffix != "ROWTIME" else "window_time"))
            elif prefix == kind and suffix == "PROCTIME":
                raise UnsupportedFeatureError(f"{name} (processing-time group windows)")


def rewrite_windows(query: exp.Expr, types: ColumnTypes | None = None) -> exp.Expr:
    """Rewrite every Flink window in `query` (in place) into Spark's form; returns `query`. `types`: the declared
    column types of the tables it reads (operand_types.py), by which a HOP's integer SUM and AVG are sliced."""
    for tvf in find_window_tvfs(query):
        _rewrite_tvf(tvf, types or {})
    for select in list(query.find_all(exp.Select)):
        _rewrite_group_windows(select)
    return carry_window_time(query)
