"""An aggregate in a keyed stage over expressions: the expressions computed first, in a subquery of their own.

Why it exists: a keyed stage groups and aggregates plain columns (engine/keyed_stage.py works on Arrow columns, not
on SQL expressions). `MIN(price * qty)`, `AVG(CAST(qty AS DOUBLE))` or `GROUP BY DATE_FORMAT(ts, 'yyyy-MM-dd')`
are everyday SQL, so the expressions move into a FROM subquery, which Spark computes over the weighted rows, and
the stage groups its columns:

    SELECT UPPER(grp) AS g, MIN(price * qty) AS m FROM t WHERE ok GROUP BY UPPER(grp)
->
    SELECT __g0 AS g, MIN(__a0) AS m FROM (SELECT UPPER(grp) AS __g0, price * qty AS __a0 FROM t WHERE ok) AS __p
    GROUP BY __g0
"""

from __future__ import annotations

from sqlglot import exp

from shell.planner.sql_parts import aggregate_argument, filters_as_arguments, unaliased, with_aggregate_argument

ALIAS = "__p"


def projected_arguments(select: exp.Select) -> exp.Select | None:
    """`select` with its GROUP BY expressions and aggregate arguments computed in a subquery first, or None when
    they are all plain columns already (an aggregate's FILTER is a CASE of its argument, computed there too)."""
    select = filters_as_arguments(select)
    group = select.args.get("group")
    groups = list(group.expressions) if group is not None else []
    calls = [a for e in [*select.expressions, *([select.args["having"]] if select.args.get("having") else [])]
             for a in e.find_all(exp.AggFunc)]
    arguments = [aggregate_argument(call) for call in calls]
    if all(isinstance(g, exp.Column) for g in groups) and \
            all(a is None or isinstance(a, (exp.Column, exp.Star, exp.Literal)) for a in arguments):
        return None
    projected: list[exp.Alias] = []
    group_names: dict[str, str] = {}
    column_names: dict[str, str] = {}  # a grouped column, however it is qualified where it is read
    for n, expression in enumerate(groups):
        group_names.setdefault(expression.sql(), f"__g{n}")
        if isinstance(expression, exp.Column):
            column_names.setdefault(expression.name.lower(), f"__g{n}")
        projected.append(exp.alias_(expression.copy(), f"__g{n}", quoted=True))
    argument_names: dict[str, str] = {}
    for argument in arguments:
        if argument is not None and not isinstance(argument, (exp.Star, exp.Literal)) and \
                argument.sql() not in argument_names:
            argument_names[argument.sql()] = f"__a{len(argument_names)}"
            projected.append(exp.alias_(argument.copy(), argument_names[argument.sql()], quoted=True))

    def rewritten(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.AggFunc):
            return _with_argument(node, argument_names)
        name = group_names.get(node.sql()) or (column_names.get(node.name.lower()) if isinstance(node, exp.Column) else None)
        return exp.column(name, table=ALIAS, quoted=True) if name else node

    inner = select.copy()
    inner.set("expressions", projected)
    for clause in ("group", "having", "order", "limit", "distinct"):
        inner.set(clause, None)
    outer = exp.select(*(exp.alias_(unaliased(item).copy().transform(rewritten), item.alias_or_name, quoted=True)
                         for item in select.expressions))
    outer = outer.from_(inner.subquery(ALIAS))
    if groups:
        outer = outer.group_by(*(exp.column(f"__g{n}", table=ALIAS, quoted=True) for n in range(len(groups))))
    if select.args.get("having") is not None:
        outer = outer.having(select.args["having"].this.copy().transform(rewritten))
    return outer


def _with_argument(call: exp.AggFunc, names: dict[str, str]) -> exp.Expr:
    argument = aggregate_argument(call)
    if argument is None or argument.sql() not in names:
        return call.copy()
    return with_aggregate_argument(call, exp.column(names[argument.sql()], table=ALIAS, quoted=True))
