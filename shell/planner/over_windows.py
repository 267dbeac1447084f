"""OVER aggregations in a SELECT: finding them, writing named windows in, and reading their frame.

Why it exists: Flink runs `AGG(x) OVER (PARTITION BY k ORDER BY rowtime <frame>)` over append-only rows as an
OVER aggregation (one row out per row in, once the watermark passes it); Spark's streaming queries refuse window
functions, so the changelog path runs it in a keyed stage (engine/over_stage.py). This module is the SQL side:

    SELECT k, SUM(x) OVER w AS s FROM t WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
->  SELECT k, SUM(x) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM t

and the frame as (ROWS?, preceding): (True, 2) here; RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING gives
(False, 600000000 microseconds); no frame is Flink's RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW,
(False, None). Like Flink, every OVER of one SELECT must be the same window.
"""

from __future__ import annotations

from sqlglot import exp

from shell.planner.sql_parts import unsupported
from shell.units import parse_duration_ms


def over_calls(select: exp.Expr) -> list[exp.Window]:
    """The aggregates over a window in the SELECT's own list (ROW_NUMBER and other ranking functions are not)."""
    if not isinstance(select, exp.Select):
        return []
    return [w for e in select.expressions for w in e.find_all(exp.Window)
            if isinstance(w.this, exp.AggFunc) and w.find_ancestor(exp.Select) is select]


def the_window(calls: list[exp.Window]) -> exp.Window:
    """The one window every OVER of the SELECT uses (Flink requires one)."""
    shapes = {_shape(w) for w in calls}
    if len(shapes) > 1:
        raise unsupported("OVER aggregations over different windows in one SELECT",
                          hint="Flink requires one window per SELECT: compute the others in a subquery")
    return calls[0]


def _shape(window: exp.Window) -> str:
    parts = [window.args.get("partition_by") or [], window.args.get("order"), window.args.get("spec")]
    return " | ".join(", ".join(p.sql() for p in part) if isinstance(part, list) else part.sql() if part else ""
                      for part in parts)


def frame(window: exp.Window) -> tuple[bool, int | None]:
    """(ROWS?, preceding): rows before the current one for ROWS, microseconds for RANGE, None for UNBOUNDED."""
    spec = window.args.get("spec")
    if spec is None:
        return False, None
    rows = str(spec.args.get("kind") or "").upper() == "ROWS"
    end = spec.args.get("end")
    if end is not None and (str(end).upper() != "CURRENT ROW" or spec.args.get("end_side")):
        raise unsupported(f"the frame '{spec.sql()}'", hint="OVER frames end at CURRENT ROW")
    start, side = spec.args.get("start"), str(spec.args.get("start_side") or "").upper()
    if str(start).upper() == "UNBOUNDED" and side == "PRECEDING":
        return rows, None
    if str(start).upper() == "CURRENT ROW":
        return rows, 0
    if side != "PRECEDING":
        raise unsupported(f"the frame '{spec.sql()}'", hint="start the frame at n PRECEDING or UNBOUNDED PRECEDING")
    if rows and isinstance(start, exp.Literal) and not start.is_string and str(start.this).isdigit():
        return True, int(start.this)
    if not rows and isinstance(start, exp.Interval):
        from shell.sql.windows import interval_to_duration

        return False, parse_duration_ms(interval_to_duration(start)) * 1000
    raise unsupported(f"the frame '{spec.sql()}'",
                      hint="ROWS BETWEEN n PRECEDING or RANGE BETWEEN INTERVAL '..' unit PRECEDING AND CURRENT ROW")
