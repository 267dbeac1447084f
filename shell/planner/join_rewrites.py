"""The rewrites that put a query's join conditions where a keyed stage can use them, and split a query one stage
cannot run into FROM subqueries (planner/stage_split.py does the splitting; this module decides where).

Why it exists: one keyed stage joins inputs on one key. A comma join's keys are in its WHERE, an inner join may
carry other conditions, joins may change key, an upsert table may be joined outside its key, an aggregate over a
join may need every row of its groups; each is rewritten here before the changelog planner plans the stages.
"""

from __future__ import annotations

from sqlglot import exp

from shell.planner import stage_split
from shell.planner.model import UPSERT_INPUT, Sources
from shell.planner.sql_parts import NotAKeyJoin, conjuncts, join_keys, own_conditions, subquery_join
from shell.planner.weighted_aggregates import aggregates, needs_stage_aggregate


def split_for_stages(select: exp.Select, sources: Sources, stage_view: str, retract: bool) -> exp.Select | None:
    """`select` rewritten so that each keyed stage it needs is a FROM subquery (planner/stage_split.py), or None
    when one stage runs it as it is: joins on another key than the joins before them, an upsert table joined or
    grouped in the stage outside its primary key, an aggregate over a join that needs every row of its groups
    (or that gives old rows back, `retract`: another stage reads it)."""
    known = stage_split.relations(select, sources.tables)
    if not known:
        return None
    query = stage_split.qualified(select, known)
    placed = _placed_conditions(query, known)
    if placed is not None:
        return placed
    number = 1 + sum(r.alias.startswith(stage_split.STAGE_ALIAS) for r in known)
    keys: dict[int, list[str]] = {}
    by_alias = {r.alias.lower(): n for n, r in enumerate(known)}
    for n, join in enumerate(query.args.get("joins") or [], start=1):
        def side_of(node: exp.Expr) -> tuple[int, str] | None:
            relation = by_alias.get(node.table.lower()) if isinstance(node, exp.Column) else None
            return (relation, node.name) if relation is not None else None

        if join.args.get("on") is None:
            return None
        on = join.args["on"]
        if subquery_join(join) and isinstance(join.this, exp.Table):  # its own conditions filter its table's rows
            on = exp.and_(*own_conditions(join)[0])
        try:
            other, theirs, mine = join_keys(on, side_of, n)
        except NotAKeyJoin:
            return None  # not equalities with one earlier relation: the planner names what it cannot run
        if other in keys and [c.lower() for c in keys[other]] != [c.lower() for c in theirs]:
            return stage_split.split_before(query, n, known, number)
        keys[other], keys[n] = theirs, mine
    if len(known) > 1 and (needs_stage_aggregate(query, sources) or (retract and aggregates(query))):
        return stage_split.split_before(query, len(known), known, number)
    if len(known) == 1 and needs_stage_aggregate(query, sources) and query.args.get("group"):
        keys[0] = [c.name for c in query.args["group"].expressions if isinstance(c, exp.Column)]
        if len(keys[0]) != len(query.args["group"].expressions):
            return None
    elif len(known) == 1:
        return None
    for n, relation in enumerate(known):
        table, hidden = relation.table, n > 0 and subquery_join(query.args["joins"][n - 1])
        if table is None or hidden or sources.kinds.get(table.name.lower()) != UPSERT_INPUT or n not in keys:
            continue
        if not {c.lower() for c in keys[n]} <= {c.lower() for c in table.primary_key}:
            return stage_split.alone(query, n, known)
    return None


def _placed_conditions(query: exp.Select, known: list[stage_split.Relation]) -> exp.Select | None:
    """`query` (qualified) with its join conditions where a keyed stage can use them, or None if they are already:

    - `FROM a, b WHERE a.k = b.k AND c`: the WHERE's equalities between a relation and one before it become the ON
      of that comma (or CROSS) join: `FROM a JOIN b ON a.k = b.k WHERE c`;
    - `a JOIN b ON a.k = b.k AND c`: an inner join's other conditions move to the WHERE (the same rows);
    - `a LEFT JOIN b ON a.k = b.k AND c(b)`: conditions on the joined table alone filter that table first (a row of
      b failing them matches nothing, so a's row is padded with NULLs, as in Flink).
    Any other condition stays, and the planner names it."""
    by_alias = {r.alias.lower(): n for n, r in enumerate(known)}
    where = query.args.get("where")
    remaining = conjuncts(where.this) if where is not None else []
    query = query.copy()
    joins = query.args.get("joins") or []
    later: list[exp.Expr] = []  # inner join conditions moved to the WHERE
    filters: dict[int, list[exp.Expr]] = {}  # relation -> conditions on it alone (left joins)
    for n, join in enumerate(joins, start=1):
        if subquery_join(join) or join.args.get("using"):
            continue
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        on = join.args.get("on")
        if on is None and not side and kind in ("", "CROSS", "INNER"):
            links = [c for c in remaining if _links(c, n, by_alias)]
            if links:
                remaining = [c for c in remaining if not any(c is link for link in links)]
                join.set("kind", None)
                join.set("on", exp.and_(*(c.copy() for c in links)))
            continue
        if on is None:
            continue
        parts = conjuncts(on)
        keys = [c for c in parts if _links(c, n, by_alias)]
        rest = [c for c in parts if not _links(c, n, by_alias)]
        if not keys or not rest:
            continue
        if not side:
            later += rest
        elif side == "LEFT" and all(_relations(c, by_alias) <= {n} for c in rest) and known[n].table is not None:
            filters[n] = rest
        else:
            continue
        join.set("on", exp.and_(*(c.copy() for c in keys)))
    if not later and not filters and (where is None or len(remaining) == len(conjuncts(where.this))):
        return None
    kept = [c.copy() for c in remaining] + [c.copy() for c in later]
    query.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    for n, conditions in filters.items():
        query = stage_split.alone(query, n, known, where=exp.and_(*conditions))
    return query


def _links(condition: exp.Expr, n: int, by_alias: dict[str, int]) -> bool:
    """Whether `condition` is `x = y` between a column of relation n and one of a relation before it."""
    if not isinstance(condition, exp.EQ) or not all(isinstance(s, exp.Column) for s in (condition.this, condition.expression)):
        return False
    sides = {by_alias.get(condition.this.table.lower()), by_alias.get(condition.expression.table.lower())}
    return n in sides and len(sides) == 2 and all(s is not None and s <= n for s in sides)


def _relations(condition: exp.Expr, by_alias: dict[str, int]) -> set:
    return {by_alias.get(c.table.lower()) for c in condition.find_all(exp.Column)}
