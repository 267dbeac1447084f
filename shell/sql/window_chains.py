"""Queries over window results: carry each window's event time to where its bounds are grouped or joined.

Why it exists: a window aggregate's rows are final once its window closes, so a query may aggregate them again by
window (Nexmark q5: the most bids of any auction per window, `GROUP BY starttime, endtime` over a subquery that
renamed window_start/window_end) or join two of them on their windows. Flink runs those as regular operators over
the windows' final rows. Spark runs them only in append mode, and only when it can tell from an event-time column
when a group or a join key is complete: window_start and window_end are plain timestamps once selected, so Spark
refuses ("aggregations ... without watermark") or keeps join state forever. Spark's `window` struct keeps the
event-time mark through a projection, and Spark closes a struct key when the watermark passes its end.

So, after windows.py has rewritten the windows: where a SELECT groups by both bounds (a start and an end) of a
windowed subquery, or joins two windowed subqueries on equal starts and equal ends, the subquery also selects its
window struct as `__window` and the outer SELECT groups by it too, or joins on it too. The window struct follows
from the two bounds, so the groups and the matches are the same ones: only now Spark knows when they are final.
A subquery that selects the bounds of a windowed subquery (a projection, such a grouping or such a join) is
windowed in turn, so chains of any depth work.

A window table function's own rows are windowed too (windows.py marks the SELECT that adds window_start and
window_end to a table's rows): that is Flink's window join, `FROM (SELECT * FROM TABLE(TUMBLE(...))) L [LEFT|RIGHT|
FULL] JOIN (...) R ON ... AND L.window_start = R.window_start AND L.window_end = R.window_end`. With the window
struct in its keys Spark drops a window's join state once the watermark passes its end, and only then can it run
an outer join: it pads the unmatched rows of a window with NULLs when the window closes, as Flink does. (A
CUMULATE's rows carry their size-long window, which equal starts determine when both sides use the same
CUMULATE, as Flink requires of a window join; Spark then pads them when that whole window closes.)

A SELECT with any other join is left alone: a join that does not match windows with windows can emit a window's
row after the window has closed, which a grouping by window would drop as late. Windows reached through a view or
a WITH clause are not followed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

CARRIER = "__window"
WINDOW_ROWS = "__window_rows"  # meta key of a window table function's rewritten SELECT (see mark_window_rows)
WINDOW_STRUCTS = ("window", "session_window")
BOUNDS = {"start": "start", "end": "end", "window_start": "start", "window_end": "end"}


@dataclass
class Windowed:
    """What a SELECT offers its consumer: which of its output columns are window bounds ('start'/'end'), and how
    to make it select its window struct as `__window` (done only when a consumer needs it)."""

    bounds: dict[str, str]
    carry: Callable[[], None]


def carry_window_time(query: exp.Expr) -> exp.Expr:
    """Add the `__window` columns, groupings and join conditions described above to `query` (in place)."""
    found: dict[int, Windowed] = {}
    selects = sorted(query.find_all(exp.Select), key=_depth, reverse=True)  # inner SELECTs first
    for select in selects:
        windowed = _window_rows(select) or _own_window(select) or _consumed_window(select, found)
        if windowed is not None:
            found[id(select)] = windowed
    return query


def mark_window_rows(select: exp.Select) -> exp.Select:
    """Marks the SELECT windows.py makes of a window table function's rows (selecting window_start and
    window_end of Spark's `window` struct column), so that queries over it can carry that struct."""
    select.meta[WINDOW_ROWS] = True
    return select


def _depth(node: exp.Expr) -> int:
    depth = 0
    while node.parent is not None:
        node, depth = node.parent, depth + 1
    return depth


def _projects(select: exp.Select, value: exp.Expr) -> Callable[[], None]:
    """Makes `select` select `value AS __window`, once."""

    def carry() -> None:
        if CARRIER not in (name.lower() for name in select.named_selects):
            select.select(exp.alias_(value, CARRIER), copy=False)

    return carry


def _window_rows(select: exp.Select) -> Windowed | None:
    """A window table function's rows (marked by windows.py): their bounds, and Spark's window struct column."""
    if not select.meta.get(WINDOW_ROWS):
        return None
    return Windowed({"window_start": "start", "window_end": "end"}, _projects(select, exp.column("window")))


def _own_window(select: exp.Select) -> Windowed | None:
    """A window aggregate (GROUP BY window(...) or session_window(...)) and the bounds it selects."""
    group = select.args.get("group")
    calls = [e for e in group.expressions if isinstance(e, exp.Anonymous) and e.name.lower() in WINDOW_STRUCTS] if group else []
    if len(calls) != 1:
        return None
    struct = calls[0].name.lower()
    bounds = {}
    for projection in select.expressions:
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(inner, exp.Column) and inner.table.lower() == struct and inner.name.lower() in ("start", "end"):
            bounds[projection.alias_or_name.lower()] = inner.name.lower()
    return Windowed(bounds, _projects(select, exp.column(struct))) if bounds else None


def _relations(select: exp.Select, found: dict[int, Windowed]) -> dict[str, Windowed]:
    """The windowed subqueries `select` reads, by their alias."""
    sources = [select.args.get("from_") and select.args["from_"].this] + [j.this for j in select.args.get("joins") or []]
    out = {}
    for source in sources:
        if isinstance(source, exp.Subquery) and id(source.this) in found:
            out[source.alias] = found[id(source.this)]  # "" for `SELECT * FROM (SELECT ... TABLE(TUMBLE(...)))`
    return out


def _carrier(alias: str) -> exp.Column:
    """`alias.__window`, or `__window` of the one relation without an alias."""
    return exp.column(CARRIER, table=alias) if alias else exp.column(CARRIER)


def _bound(column: exp.Expr, relations: dict[str, Windowed]) -> tuple[str, str] | None:
    """(relation alias, 'start'/'end') when `column` is a bound of one of `relations`."""
    if not isinstance(column, exp.Column):
        return None
    table, name = column.table.lower(), column.name.lower()
    if table:
        alias = next((a for a in relations if a.lower() == table), None)
        role = relations[alias].bounds.get(name) if alias is not None else None
        return (alias, role) if role else None
    owners = [(alias, w.bounds[name]) for alias, w in relations.items() if name in w.bounds]
    return owners[0] if len(owners) == 1 else None


def _consumed_window(select: exp.Select, found: dict[int, Windowed]) -> Windowed | None:
    relations = _relations(select, found)
    if not relations:
        return None
    joins = select.args.get("joins") or []
    pairs = [_window_equality(join, relations) for join in joins]
    selects_star = any(isinstance(p, exp.Star) or isinstance(p.this, exp.Star) for p in select.expressions)
    if None in pairs or (joins and selects_star):
        # A join that does not match windows with windows may emit a row of a window after it has closed (its other
        # side arrives later); grouping those by window would drop them as late. Such a query is left as it is.
        return None
    group = select.args.get("group")
    if selects_star and not joins and not group and len(relations) == 1:
        return next(iter(relations.values()))  # `SELECT * [WHERE ...]`: the same bounds, and `*` passes `__window` on
    used: set[str] = set()
    if group is not None:
        roles: dict[str, set[str]] = {}
        for expression in group.expressions:
            bound = _bound(expression, relations)
            if bound:
                roles.setdefault(bound[0], set()).add(bound[1])
        grouped = [alias for alias, r in roles.items() if r == {"start", "end"}]
        if len(grouped) != 1:
            return None  # not grouped by one window: an updating aggregate, not ours to change
        used.add(grouped[0])
        group.append("expressions", _carrier(grouped[0]))
    for join, pair in zip(joins, pairs):
        used.update(pair)
        condition = exp.EQ(this=_carrier(pair[0]), expression=_carrier(pair[1]))
        join.set("on", exp.and_(join.args["on"], condition, *_keys_not_null(join, relations), copy=False))
    for alias in used:
        relations[alias].carry()
    bounds: dict[str, str] = {}
    origin = None
    for projection in select.expressions:
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        bound = _bound(inner, relations)
        if bound and (origin is None or bound[0] == origin) and (bound[0] in used or not (group or joins)):
            origin = bound[0]
            bounds[projection.alias_or_name.lower()] = bound[1]
    if origin is None or set(bounds.values()) != {"start", "end"}:
        return None
    source = relations[origin]

    def carry() -> None:
        source.carry()
        _projects(select, _carrier(origin))()

    return Windowed(bounds, carry)


def _keys_not_null(join: exp.Join, relations: dict[str, Windowed]) -> list[exp.Expr]:
    """`k IS NOT NULL` for both sides of every other key equality of an outer join.

    Spark's stream-stream join keeps its rows by key in a binary row, in which NULL equals NULL: an outer join
    (where Spark infers no NOT NULL filter on a preserved side) would match two NULL keys. A side's row that fails
    such a condition is emitted with NULLs at once, never kept: NULL keys match nothing, as in Flink."""
    if (join.side or "").upper() not in ("LEFT", "RIGHT", "FULL"):
        return []
    on = join.args["on"]
    checks: list[exp.Expr] = []
    for condition in on.flatten() if isinstance(on, exp.And) else [on]:
        sides = (condition.this, condition.expression) if isinstance(condition, exp.EQ) else ()
        if sides and not any(_bound(side, relations) for side in sides):
            checks += [exp.Not(this=exp.Is(this=side.copy(), expression=exp.Null())) for side in sides]
    return checks


def _window_equality(join: exp.Join, relations: dict[str, Windowed]) -> tuple[str, str] | None:
    """The two windowed relations a join's ON equates on both bounds, or None."""
    on = join.args.get("on")
    if on is None:
        return None
    pairs: dict[tuple[str, str], set[str]] = {}
    for condition in on.flatten() if isinstance(on, exp.And) else [on]:
        if not isinstance(condition, exp.EQ):
            continue
        left, right = _bound(condition.this, relations), _bound(condition.expression, relations)
        if left and right and left[0] != right[0] and left[1] == right[1]:
            pairs.setdefault((left[0], right[0]), set()).add(left[1])
    equal = [pair for pair, roles in pairs.items() if roles == {"start", "end"}]
    return equal[0] if len(equal) == 1 else None
