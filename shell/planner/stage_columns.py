"""A stage's columns: every column of a query pointed at the stage column of its input, `*` expanded.

Why it exists: inside one keyed stage every input's columns travel under their own names (`<alias>__<column>`,
`StageInput.stage_column`), and the planner's rules then ask which input and table column a stage column is (a
join's key, a GROUP BY column, an aggregate's argument, an OVER window's time). `resolve_columns` rewrites the
query and returns that lookup (`StageColumns`), so no rule reads hidden attributes off sqlglot nodes:

    SELECT u.acct, COUNT(*) FROM users u JOIN colors c ON u.uid = c.uid GROUP BY u.acct
->  SELECT "u__acct" AS "acct", COUNT(*) FROM .. JOIN .. ON "u__uid" = "c__uid" GROUP BY "u__acct"
    with u__acct -> (0, acct), u__uid -> (0, uid), c__uid -> (1, uid); users reads acct, colors nothing
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from shell.errors import CatalogError
from shell.planner import stage_split
from shell.planner.model import StageInput
from shell.sql.hints import suggest
from shell.sql.positions import at_name


@dataclass(frozen=True)
class StageColumns:
    """Which input and table column each stage column of a resolved query is."""

    inputs: list[StageInput]
    columns: dict[str, tuple[int, str]]  # stage column -> (input, table column)

    def of(self, node: exp.Expr) -> tuple[int, str] | None:
        """(input, table column) of a resolved column, or None (an expression, a SELECT alias)."""
        if isinstance(node, exp.Column) and not node.table and not isinstance(node.this, exp.Star):
            return self.columns.get(node.name)
        return None

    def as_written(self, condition: exp.Expr) -> str:
        """A resolved condition as the user wrote it: `alias.column` rather than the stage's column names."""
        def written(node: exp.Expr) -> exp.Expr:
            found = self.of(node)
            return exp.column(found[1], table=self.inputs[found[0]].alias) if found is not None else node

        return condition.copy().transform(written).sql()

    def equated(self, condition: exp.Expr) -> tuple[tuple[int, str], tuple[int, str]] | None:
        """((input, column), (input, column)) for `a.x = b.y` between two different inputs; else None."""
        if not isinstance(condition, exp.EQ):
            return None
        sides = (self.of(condition.this), self.of(condition.expression))
        if sides[0] is None or sides[1] is None or sides[0][0] == sides[1][0]:
            return None
        return sides


def resolve_columns(select: exp.Select, inputs: list[StageInput]) -> tuple[list[StageInput], StageColumns]:
    """Point every column of `select` (changed in place) at its input's stage column and expand `*`; the inputs,
    each reading the columns the query uses, and the lookup of the stage columns. Columns are first qualified by
    their relation as the stage split does (planner/stage_split.py: `*` expanded, a name two inputs have is an
    error), then each `alias.column` becomes its stage column."""
    by_alias = {i.alias.lower(): n for n, i in enumerate(inputs)}
    used: list[set[str]] = [set() for _ in inputs]
    found: dict[str, tuple[int, str]] = {}
    output_names = {e.alias.lower() for e in select.expressions  # a column named as itself names no other column
                    if isinstance(e, exp.Alias) and not (isinstance(e.this, exp.Column) and e.this.name.lower() == e.alias.lower())}
    for item in select.expressions:
        qualifier = item.table if isinstance(item, exp.Column) and isinstance(item.this, exp.Star) else ""
        if qualifier and qualifier.lower() not in by_alias:
            raise at_name(CatalogError(f"unknown table or alias '{qualifier}'",
                                       hint=suggest(qualifier, [i.alias for i in inputs])), item.args.get("table"))
    known = [stage_split.Relation(i.alias, i.table.column_names(), i.shown, i.table) for i in inputs]
    query = stage_split.qualified(select, known)
    reading = [True]  # ON clauses are the stage's key, not columns it has to carry

    def resolve(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return node
        name, qualifier = node.name, node.table
        if not qualifier:
            if name.lower() in output_names:
                return node  # a SELECT alias, e.g. in GROUP BY or HAVING
            every = [c for i in inputs for c in i.table.column_names()]
            raise at_name(CatalogError(f"unknown column '{name}'", hint=suggest(name, every)), node)
        if qualifier.lower() not in by_alias:
            raise at_name(CatalogError(f"unknown table or alias '{qualifier}'",
                                       hint=suggest(qualifier, [i.alias for i in inputs])), node.args.get("table"))
        n = by_alias[qualifier.lower()]
        column = inputs[n].table.column(name)
        if column is None:
            names = inputs[n].table.column_names()
            raise at_name(CatalogError(f"table '{inputs[n].alias}' has no column '{name}'", hint=suggest(name, names)),
                          node)
        if reading[0]:
            used[n].add(column.name)
        staged = inputs[n].stage_column(column.name)
        found[staged] = (n, column.name)
        return exp.column(staged, quoted=True)

    for key in ("expressions", "where", "group", "having", "joins"):
        reading[0] = key != "joins"
        value = query.args.get(key)
        if key == "joins":  # their ON clauses: a joined subquery's own columns are its own
            for join in value or []:
                if join.args.get("on") is not None:
                    join.set("on", join.args["on"].transform(resolve))
            select.set(key, value)
        elif isinstance(value, list):
            select.set(key, [v.transform(resolve) for v in value])
        elif value is not None:
            select.set(key, value.transform(resolve))
    if inputs and not any(used):  # COUNT(*) alone: the stage's rows still need a column, since an Arrow table
        first = inputs[0].table       # without columns has no rows either, and the Python stage would emit none
        used[0].add(first.column((first.primary_key or first.column_names())[0]).name)
    reads = [replace(i, columns=[c.name for c in i.table.columns if c.name in used[n]]) for n, i in enumerate(inputs)]
    return reads, StageColumns(reads, found)
