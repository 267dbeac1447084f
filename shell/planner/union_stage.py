"""UNION ALL (and UNION) over changelog inputs: every branch's weighted rows together, no state.

Why it exists: a UNION ALL's branches are inputs of their own (each a stage, or Spark's as written when it
filters append-only rows) under the first branch's column names (`UnionAll`, planner/stages.py); a UNION
(distinct) is SELECT DISTINCT over the UNION ALL.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from shell.errors import CatalogError
from shell.planner.model import APPEND, RETRACT, WEIGHT, ChangelogPlan, Sources
from shell.planner.relations import derivable
from shell.planner.sql_parts import unaliased, unsupported
from shell.planner.stage_inputs import derived_input, stage_input
from shell.planner.stages import UnionAll
from shell.sql.translate import to_spark_sql


def plan_union(union: exp.Union, sources: Sources, stage_view: str, retract: bool) -> ChangelogPlan:
    """UNION ALL: the weighted rows of every branch, each a subquery of its own (a stage, or Spark's as written
    when it filters append-only rows), under the first branch's column names. UNION (distinct) is SELECT DISTINCT
    over the UNION ALL."""
    from shell.planner.changelog import plan_changelog  # a subquery is planned as any query is

    branches = union_branches(union, bool(union.args.get("distinct")))
    first = branches[0]
    if not isinstance(first, exp.Select) or "*" in first.named_selects:
        raise unsupported("'*' in a UNION over changelog inputs", hint="name the columns of each branch")
    names = first.named_selects
    if union.args.get("distinct"):
        every = exp.union(*(b.copy() for b in branches), distinct=False)
        distinct = exp.select(*(exp.column(n, quoted=True) for n in names)).from_(every.subquery("__union"))
        distinct.set("distinct", exp.Distinct())
        return plan_changelog(distinct, sources, stage_view, retract)
    inputs = []
    for n, branch in enumerate(branches):
        if not isinstance(branch, exp.Select) or len(branch.expressions) != len(names):
            raise CatalogError(f"the branches of a UNION have different numbers of columns ({len(names)} and"
                               f" {len(branch.expressions)})", hint="give every branch the same columns")
        named = branch.copy()
        named.set("expressions", [exp.alias_(unaliased(e).copy(), name, quoted=True)
                                  for e, name in zip(branch.expressions, names)])
        relation = named.subquery("__union")
        if derivable(named, sources):
            source = derived_input(relation, sources, None)
        else:
            source = stage_input(relation, sources, None, f"{stage_view}_{n}")
        inputs.append(replace(source, columns=list(names)))
    items = [exp.alias_(exp.column(inputs[0].stage_column(n), quoted=True), n, quoted=True) for n in names]
    sql = to_spark_sql(exp.select(*items, exp.column(WEIGHT)).from_(stage_view))
    return ChangelogPlan(inputs, UnionAll(), stage_view, sql, RETRACT,
                         grows_only=all(i.kind == APPEND for i in inputs))


def union_branches(union: exp.Expr, flatten_distinct: bool = False) -> list[exp.Expr]:
    """The branches of a chain of UNION ALLs, in order; under a UNION (distinct), every UNION below it too."""
    if type(union) is exp.Union and (flatten_distinct or not union.args.get("distinct")):
        every = flatten_distinct or bool(union.args.get("distinct"))
        return [*union_branches(union.this, every), *union_branches(union.expression, every)]
    if isinstance(union, exp.Union):
        raise unsupported(f"a {union.key.upper()} inside a UNION ALL over changelog inputs",
                           hint="write it as a subquery: SELECT .. FROM (..) AS t")
    return [union]
