"""Aggregates over weighted rows: which ones Spark's streaming aggregation computes, and how.

Why it exists: over a changelog, COUNT is a sum of weights and SUM a sum of weighted values, so Spark's own
aggregation in update mode computes them (`as_upserts` rewrites the query so); MIN, MAX and COUNT DISTINCT over rows
that can be taken back need every row of a group, which only a keyed stage keeps (`needs_stage_aggregate`).
"""

from __future__ import annotations

from sqlglot import exp

from shell.planner.model import APPEND, COUNT, GROUP_KEY, HAVING, WEIGHT, Sources
from shell.planner.relations import derivable
from shell.planner.sql_parts import filters_as_arguments, group_aggregates, unaliased, unsupported
from shell.sql.functions import AGGREGATES_AS_CALLS

LINEAR = (exp.Count, exp.Sum, exp.Avg)


def aggregate_subquery(select: exp.Select) -> exp.Select | None:
    """The inner query of `SELECT .. FROM (SELECT .. GROUP BY ..) ..`: an aggregate whose result is read again."""
    source = select.args.get("from_")
    inner = source.this.this if source is not None and isinstance(source.this, exp.Subquery) else None
    if isinstance(inner, exp.Select) and (inner.args.get("group") or any(group_aggregates(e) for e in inner.expressions)):
        return inner
    return None


def aggregate_calls(select: exp.Select) -> list[exp.AggFunc]:
    return [a for e in [*select.expressions, *([select.args["having"]] if select.args.get("having") else [])]
            for a in group_aggregates(e)]


def aggregates(select: exp.Select) -> bool:
    return bool(select.args.get("group") or aggregate_calls(select))


def retracts(select: exp.Select, sources: Sources) -> bool:
    """Whether the rows a SELECT reads can be taken back: a changelog input, a subquery over one, an outer join."""
    relations = [select.args["from_"].this] + [j.this for j in select.args.get("joins") or []]
    if any((j.side or "") for j in select.args.get("joins") or []):
        return True
    for relation in relations:
        if isinstance(relation, exp.Subquery):
            if not derivable(relation.this, sources):
                return True
        elif not isinstance(relation, exp.Table) or sources.kinds.get(relation.name.lower(), APPEND) != APPEND:
            return True
    return False


def needs_stage_aggregate(select: exp.Select, sources: Sources) -> bool:
    """Whether the GROUP BY needs every row of a group: MIN or MAX over rows that can be taken back, or COUNT
    DISTINCT (which Spark's streaming aggregation lacks)."""
    calls = aggregate_calls(select)
    distinct = any(isinstance(a.this, exp.Distinct) for a in calls)
    return bool(calls) and (distinct or (retracts(select, sources) and any(not isinstance(a, LINEAR) for a in calls)))


def aggregates_in_stage(select: exp.Select, sources: Sources) -> bool:
    """Whether the GROUP BY needs every row of a group and can have them: one relation, no joins (`split_for_stages` moves
    a join under such an aggregate into a subquery of its own first)."""
    return not select.args.get("joins") and needs_stage_aggregate(select, sources)


def _output_key(select: exp.Select) -> list[str]:
    """The output columns that are the GROUP BY expressions; [] when one of them is not in the output."""
    group = select.args.get("group")
    if group is None:
        return []
    names = []
    for expression in group.expressions:
        text = expression.sql()
        match = next((e for e in select.expressions if unaliased(e).sql() == text
                      or (isinstance(expression, exp.Column) and e.alias_or_name.lower() == expression.name.lower()
                          and not expression.table)), None)
        if match is None:
            return []
        names.append(match.alias_or_name)
    return names


def as_upserts(query: exp.Select, retractions: bool) -> tuple[list[str], list[str]]:
    """Rewrite an aggregating query over weighted rows into one that gives each group's row with `__count` (0:
    the group is gone) and `__having` (false: HAVING removes it); return its key and hidden key columns."""
    key = _output_key(query)
    hidden = _hidden_key(query, key)
    _weigh_aggregates(query, retractions)
    having = query.args.get("having")
    query.set("having", None)
    query.set("expressions", [*query.expressions, *hidden, exp.alias_(exp.Sum(this=exp.column(WEIGHT)), COUNT),
                              exp.alias_(having.this if having else exp.true(), HAVING)])
    return key, [h.alias for h in hidden]


def _hidden_key(select: exp.Select, key: list[str]) -> list[exp.Alias]:
    """The GROUP BY expressions as hidden output columns, when the output does not show them all (`key` is
    empty): without them, two groups with equal aggregates could not be told apart in the result's changes."""
    group = select.args.get("group")
    if key or group is None:
        return []
    return [exp.alias_(e.copy(), f"{GROUP_KEY}{n}") for n, e in enumerate(group.expressions)]


def refuse_unweighable_calls(select: exp.Select) -> None:
    """Refuse the aggregates sqlglot reads as plain calls (STDDEV_POP, LISTAGG, FIRST_VALUE, ...) over rows that
    can be taken back: Spark would aggregate every version of a row as if it were still there."""
    for call in select.find_all(exp.Anonymous):
        name = call.name.upper()
        if name in AGGREGATES_AS_CALLS and call.find_ancestor(exp.Window) is None:
            raise unsupported(f"{name} over rows that can be updated or deleted",
                              hint="COUNT, SUM, AVG, MIN, MAX and COUNT(DISTINCT) are supported on the changelog path")


def _weigh_aggregates(select: exp.Select, retractions: bool) -> None:
    """Aggregates over weighted rows: COUNT and SUM become sums of weights; the rest need retraction-free input."""
    weight = exp.column(WEIGHT)

    def weighted(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.AggFunc):
            return node
        if isinstance(node, exp.Count):
            argument = node.this
            if isinstance(argument, exp.Distinct):
                if retractions:
                    raise unsupported("COUNT(DISTINCT ...) over rows that can be updated or deleted")
                return node
            if argument is None or isinstance(argument, (exp.Star, exp.Literal)):
                return exp.Sum(this=weight.copy())
            return exp.Sum(this=_weight_if_not_null(argument))
        if not retractions:
            return node
        if isinstance(node, exp.Sum):
            value = exp.Sum(this=exp.Mul(this=exp.Paren(this=node.this.copy()), expression=weight.copy()))
            present = exp.Sum(this=_weight_if_not_null(node.this))
            return exp.If(this=exp.EQ(this=present, expression=exp.Literal.number(0)), true=exp.Null(), false=value)
        if isinstance(node, exp.Avg):
            total = exp.Sum(this=exp.Mul(this=exp.Paren(this=node.this.copy()), expression=weight.copy()))
            present = exp.Sum(this=_weight_if_not_null(node.this))
            return exp.Div(this=total, expression=exp.Nullif(this=present, expression=exp.Literal.number(0)))
        name = node.sql_name() if hasattr(node, "sql_name") else type(node).__name__
        raise unsupported(f"{name.upper()} over rows that can be updated or deleted",
                           hint="COUNT, SUM and AVG are supported on the changelog path")

    for key in ("expressions", "having"):  # a FILTER first becomes its aggregate's argument, then is weighed with it
        value = select.args.get(key)
        if isinstance(value, list):
            select.set(key, [filters_as_arguments(v).transform(weighted) for v in value])
        elif value is not None:
            select.set(key, filters_as_arguments(value).transform(weighted))


def _weight_if_not_null(argument: exp.Expr) -> exp.Expr:
    return exp.If(
        this=exp.Is(this=exp.Paren(this=argument.copy()), expression=exp.Null()),
        true=exp.Literal.number(0),
        false=exp.column(WEIGHT),
    )
