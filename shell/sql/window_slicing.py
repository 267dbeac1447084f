"""HOP windows aggregated slice by slice: each row counted once, not once per window that covers it.

Why it exists: Spark's `window(ts, size, slide)` copies every row into each of the size/slide windows that cover it
before aggregating (Nexmark q5's 10-second windows every 2 seconds: five copies of every bid). Flink aggregates
each slide-long slice once and combines a window's slices. This module does the same in SQL, for a window
aggregation whose aggregates can be combined exactly:

    SELECT window.start AS window_start, auction, COUNT(*) AS n FROM bid
    GROUP BY window(ts, '10 seconds', '2 seconds'), auction
->
    SELECT window.start AS window_start, __slice_k0 AS auction, SUM(__slice_p0) AS n
    FROM (SELECT window(ts, '2 seconds', '2 seconds') AS __slice, auction AS __slice_k0, COUNT(*) AS __slice_p0
          FROM bid GROUP BY window(ts, '2 seconds', '2 seconds'), auction)
    GROUP BY window(window_time(__slice), '10 seconds', '2 seconds'), __slice_k0

A slice's window_time (its end less a microsecond) lies in exactly the windows that hold the whole slice, and
Spark's chained window aggregations carry the watermark from one to the next, so the windows close as before.
Combined: COUNT and SUM by SUM (of integers only: a DOUBLE's sum depends on its order, a DECIMAL's type widens),
MIN and MAX by themselves, an integer AVG as its slices' SUM over their COUNT (Flink's integer AVG, truncated).
Any other aggregate, DISTINCT, a window function, ORDER BY, a size that is not a multiple of the slide, a window
bound inside an aggregate, or anything but keys, window columns, aggregates, comparisons and literals in the SELECT
list and HAVING (the translation after this one reads operand types from the FROM, which the slices do not have)
leaves the query as it was.
"""

from __future__ import annotations

from sqlglot import exp

from shell.sql.operand_types import ColumnTypes, integral_type
from shell.units import parse_duration_ms

SLICE = "__slice"
_KEY, _PART = "__slice_k", "__slice_p"
_COMBINED = "slice_combined"  # meta flag of an aggregate combined from the slices


def slice_hop(select: exp.Select, size: str, slide: str, offset: str | None, types: ColumnTypes) -> bool:
    """Rewrite `select`, grouped by `window(ts, size, slide[, offset])` and its keys, to aggregate slices (in
    place); False, untouched, where that would not be exact."""
    try:
        size_ms, slide_ms = parse_duration_ms(size), parse_duration_ms(slide)
    except ValueError:
        return False
    if slide_ms <= 0 or size_ms <= slide_ms or size_ms % slide_ms or not _plain(select):
        return False
    windows = [e for e in select.args["group"].expressions if _is_window_call(e)]
    if len(windows) != 1:
        return False
    keys = [e for e in select.args["group"].expressions if not _is_window_call(e)]
    work = select.copy()  # rewritten whole, so that a column's type is still read from its FROM while it is
    parts: list[exp.Expr] = []
    items = [_over_slices(item, keys, parts, types) for item in work.expressions]
    items = [exp.alias_(new, old.name) if isinstance(old, exp.Column) and new is not None else new  # its name kept
             for old, new in zip(select.expressions, items)]
    having = work.args.get("having")
    combined_having = _over_slices(having.this, keys, parts, types) if having is not None else None
    if any(item is None for item in items) or (having is not None and combined_having is None):
        return False
    window = windows[0]
    slicer = exp.Anonymous(this="window", expressions=[
        window.expressions[0].copy(), exp.Literal.string(slide), exp.Literal.string(slide),
        *([exp.Literal.string(offset)] if offset else [])])  # fmt: skip
    inner = exp.select(
        exp.alias_(slicer, SLICE),
        *(exp.alias_(k.copy(), f"{_KEY}{i}") for i, k in enumerate(keys)),
        *(exp.alias_(p, f"{_PART}{i}") for i, p in enumerate(parts)),
    ).from_(select.args["from_"].this.copy())
    if select.args.get("where") is not None:
        inner.set("where", select.args["where"].copy())
    inner.set("group", exp.Group(expressions=[slicer.copy(), *(k.copy() for k in keys)]))
    window_time = exp.Anonymous(this="window_time", expressions=[exp.column(SLICE)])
    outer_window = exp.Anonymous(this="window", expressions=[window_time, *(w.copy() for w in window.expressions[1:])])
    select.set("expressions", items)
    if combined_having is not None:
        select.set("having", exp.Having(this=combined_having))
    select.set("from_", exp.From(this=inner.subquery()))
    select.set("where", None)
    select.args["group"].set("expressions", [outer_window, *(exp.column(f"{_KEY}{i}") for i in range(len(keys)))])
    return True


def _plain(select: exp.Select) -> bool:
    """A single-source aggregation with nothing that combining slices could change."""
    group = select.args.get("group")
    if group is None or any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup", "totals")):
        return False
    if select.args.get("distinct") or select.args.get("joins") or select.args.get("qualify") \
            or select.args.get("order") or select.args.get("limit") \
            or select.args.get("from_") is None or select.find(exp.Window) is not None:
        return False
    return all(isinstance(p, exp.Alias) or isinstance(p, exp.Column) for p in select.expressions)


def _is_window_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.lower() == "window"


def _over_slices(node: exp.Expr, keys: list[exp.Expr], parts: list[exp.Expr],
                 types: ColumnTypes) -> exp.Expr | None:
    """`node` (of the working copy of the SELECT) with its aggregates combined over the slices and its grouping
    keys read from them, or None when something in it cannot be combined exactly."""
    failed = False

    def replace(current: exp.Expr) -> exp.Expr:
        nonlocal failed
        for i, key in enumerate(keys):
            if _same(current, key):
                return exp.column(f"{_KEY}{i}")
        aggregate = current.this if isinstance(current, exp.Filter) else current
        if isinstance(aggregate, exp.AggFunc):
            combined = _combined(current, aggregate, parts, types)
            failed = failed or combined is None
            return combined or current
        return current

    rewritten = _transform_outside_in(node, replace)
    if failed or not _typed_alike(rewritten):
        return None
    return rewritten


# What the outer SELECT may hold around the slices' keys and combined aggregates: the translation after this one
# reads operand types from a SELECT's FROM (operand_types.py), and the slices' columns have none it knows, so an
# operator whose meaning depends on them (`/`, a CAST, `[i]`, a function) would change meaning over them.
_NEUTRAL = (exp.Alias, exp.Paren, exp.And, exp.Or, exp.Not, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Is,
            exp.Literal, exp.Boolean, exp.Null, exp.Identifier)


def _typed_alike(node: exp.Expr) -> bool:
    """Only keys, window columns, combined aggregates (marked by `_combined`), comparisons and literals."""
    if node.meta.get(_COMBINED):
        return True
    if isinstance(node, exp.Column):
        return node.name.lower().startswith(_KEY) or _is_window_column(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "window_time":
        return all(_typed_alike(a) for a in node.expressions)
    if not isinstance(node, _NEUTRAL):
        return False
    return all(_typed_alike(child) for child in node.iter_expressions())


def _transform_outside_in(node: exp.Expr, replace) -> exp.Expr:  # noqa: ANN001
    """Replace from the top down, not descending into what `replace` changed (an aggregate, a key)."""
    if isinstance(node, exp.Alias):
        node.set("this", _transform_outside_in(node.this, replace))
        return node
    new = replace(node)
    if new is not node:
        return new
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expr):
            node.set(key, _transform_outside_in(value, replace))
        elif isinstance(value, list):
            node.set(key, [_transform_outside_in(v, replace) if isinstance(v, exp.Expr) else v for v in value])
    return node


def _same(node: exp.Expr, key: exp.Expr) -> bool:
    if node == key:
        return True
    return isinstance(node, exp.Column) and isinstance(key, exp.Column) and node.name.lower() == key.name.lower() \
        and (not node.table or not key.table or node.table.lower() == key.table.lower())


def _combined(call: exp.Expr, aggregate: exp.AggFunc, parts: list[exp.Expr],
              types: ColumnTypes) -> exp.Expr | None:
    """A window's aggregate combined from its slices' partial aggregates (appended to `parts`), or None."""
    if aggregate.find(exp.Distinct) is not None or any(a is not aggregate for a in aggregate.find_all(exp.AggFunc)):
        return None
    if any(_is_window_column(c) for c in call.find_all(exp.Column)):
        return None  # a window's bound inside the slices' aggregate would be the slice's
    combined = _combination(call, aggregate, parts, types)
    if combined is not None:
        combined.meta[_COMBINED] = True
    return combined


def _is_window_column(column: exp.Column) -> bool:
    return column.table.lower() == "window" or (not column.table and column.name.lower() == "window")


def _combination(call: exp.Expr, aggregate: exp.AggFunc, parts: list[exp.Expr],
                 types: ColumnTypes) -> exp.Expr | None:
    where = call.expression if isinstance(call, exp.Filter) else None

    def part(value: exp.Expr) -> exp.Column:
        parts.append(exp.Filter(this=value, expression=where.copy()) if where is not None else value)
        return exp.column(f"{_PART}{len(parts) - 1}")

    if isinstance(aggregate, exp.Count):
        return exp.Sum(this=part(aggregate.copy()))
    if isinstance(aggregate, (exp.Min, exp.Max)):
        return type(aggregate)(this=part(aggregate.copy()))
    integral = integral_type(aggregate.this, types)  # read while the aggregate is still in its SELECT
    if integral is None or type(aggregate) not in (exp.Sum, exp.Avg):
        return None
    if isinstance(aggregate, exp.Sum):
        return exp.Sum(this=part(aggregate.copy()))
    total = exp.Sum(this=part(exp.Sum(this=aggregate.this.copy())))
    count = exp.Sum(this=part(exp.Count(this=aggregate.this.copy())))
    ratio = exp.Div(this=exp.Cast(this=total, to=exp.DataType.build("DOUBLE")),
                    expression=exp.Nullif(this=count, expression=exp.Literal.number(0)))
    return exp.Cast(this=ratio, to=exp.DataType.build(integral))
