"""The inputs of a changelog stage: the tables, window rows and FROM subqueries a query reads, as `StageInput`s.

Why it exists: every kind of stage (planner/changelog.py and the *_stage modules beside it) starts from its
query's FROM and joins. A table is an input as it is; a subquery over append-only tables is run by Spark as
written (a derived input); a subquery over changelogs is planned as a stage of its own whose weighted rows this
stage reads (`StageInput.plan`, planned by `plan_changelog` again).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.errors import CatalogError
from shell.planner.model import (
    APPEND, CHANGELOG, WEIGHT, Sources, StageInput,
)
from shell.planner.relations import derivable, output_types, referenced_names, renamed
from shell.planner.sql_parts import own_conditions, subquery_join, unsupported
from shell.sql.operand_types import ColumnTypes, declared_types
from shell.sql.translate import to_spark_expression, to_spark_sql
from shell.sql.windows import WINDOW_COLUMNS, WindowTvf, describe_tvf, groups_by_window


def stage_inputs(select: exp.Select, sources: Sources, stage_view: str) -> list[StageInput]:
    tables, kinds = sources.tables, sources.kinds
    relations = [(select.args["from_"].this, None)] + [(j.this, j) for j in select.args.get("joins") or []]
    inputs: list[StageInput] = []
    for n, (relation, join) in enumerate(relations):
        window = describe_tvf(relation) if isinstance(relation, exp.TableFromRows) else None
        if window is not None and window.table is not None and window.table.lower() in tables:
            relation = window_rows(relation, window, tables[window.table.lower()])
            if not derivable(relation.this, sources):  # its rows would be planned as this very stage again
                raise unsupported(
                    f"a window table function over '{window.table}', whose rows change (an upsert or changelog table)",
                    hint=f"window an append-only table, or aggregate '{window.table}' without a window (GROUP BY its "
                         f"columns and FLOOR(time TO MINUTE), say)")
        if isinstance(relation, exp.Subquery) and derivable(relation.this, sources):
            inputs.append(derived_input(relation, sources, join))
            continue
        if isinstance(relation, exp.Subquery) and isinstance(relation.this, (exp.Select, exp.SetOperation)):
            inputs.append(stage_input(relation, sources, join, f"{stage_view}_{n}"))
            continue
        if not isinstance(relation, exp.Table) or relation.name.lower() not in tables:
            raise unsupported(f"reading '{relation.sql()}' in a query over changelog inputs",
                               hint="read tables, or subqueries that filter, project or UNION ALL append-only tables")
        table = tables[relation.name.lower()]
        alias = relation.alias_or_name
        if any(i.alias.lower() == alias.lower() for i in inputs):
            raise CatalogError(f"the name '{alias}' is used twice in FROM", hint="give each table its own alias")
        own = own_conditions(join)[1] if subquery_join(join) else []
        condition = to_spark_expression(unqualified(exp.and_(*own))) if own else None
        inputs.append(StageInput(table, alias, kinds[table.name.lower()], [], join=join_kind(join), filter=condition))
    return inputs


def keys_only(select: exp.Select) -> exp.Select:
    """`select` with each semi or anti join's ON reduced to its keys (its conditions on its own table are its
    input's filter: `stage_inputs`)."""
    for join in select.args.get("joins") or []:
        if subquery_join(join) and isinstance(join.this, exp.Table):
            keys, own = own_conditions(join)
            if own:
                join.set("on", exp.and_(*keys))
    return select


def window_rows(relation: exp.TableFromRows, window: WindowTvf, table: TableDef) -> exp.Subquery:
    """`TABLE(TUMBLE(TABLE t, ..))` as the subquery of its rows, `SELECT <t's columns>, window_start, window_end,
    window_time FROM TABLE(TUMBLE(..))`, which Spark runs as written (a window Top-N reads it)."""
    columns = [exp.column(c.name, quoted=True) for c in table.columns]
    columns += [exp.column(c) for c in WINDOW_COLUMNS]
    tvf = relation.copy()
    tvf.set("alias", None)
    return exp.select(*columns).from_(tvf).subquery(window.alias or table.name)


def reading(inputs: list[StageInput], extra: dict[int, str]) -> list[StageInput]:
    """The inputs, each also reading its column in `extra` (in table order)."""
    out = []
    for n, source in enumerate(inputs):
        wanted = {c.lower() for c in source.columns} | ({extra[n].lower()} if n in extra else set())
        out.append(replace(source, columns=[c.name for c in source.table.columns if c.name.lower() in wanted]))
    return out


def join_kind(join: exp.Join | None) -> str:
    if join is None:
        return ""
    kind = subquery_join(join)
    if kind:
        return kind
    if join.args.get("using") or join.args.get("on") is None:
        raise unsupported("a join without ON t1.k = t2.k over changelog inputs")
    if (join.kind or "").upper() == "CROSS":
        raise unsupported(f"{join.kind.upper()} JOIN over changelog inputs")
    return (join.side or "inner").lower()


def derived_input(relation: exp.Subquery, sources: Sources, join: exp.Join | None) -> StageInput:
    from shell.catalog.model import Column

    query = relation.this
    columns = query.named_selects
    if not columns or "*" in columns:
        raise unsupported(f"'*' in the subquery '{relation.alias_or_name}'", hint="name the subquery's columns")
    alias = relation.alias_or_name or "subquery"
    used = [sources.tables[n.lower()] for n in referenced_names(query)]
    views = {t.name.lower(): sources.views[t.name.lower()] for t in used}
    sql = to_spark_sql(renamed(query, views), declared_types((views[t.name.lower()], t) for t in used), consume=True)
    types = output_types(query, sources)
    table = TableDef(name=alias, columns=[Column(name=c, data_type=types.get(c)) for c in columns])
    derived = (sql, tuple((t, views[t.name.lower()]) for t in used))
    aggregates_windows = any(groups_by_window(s) for s in query.find_all(exp.Select))
    return StageInput(table, alias, APPEND, [], join=join_kind(join), derived=derived,
                      window_results=aggregates_windows)


def stage_input(relation: exp.Subquery, sources: Sources, join: exp.Join | None, stage_view: str) -> StageInput:
    """A FROM subquery over changelogs: planned as a stage of its own, whose weighted rows this input reads (a
    changelog, or append-only rows when that plan never takes a row back)."""
    from shell.planner.changelog import plan_changelog  # a subquery is planned as any query is

    from shell.catalog.model import Column

    columns = relation.this.named_selects
    if not columns or "*" in columns:
        raise unsupported(f"'*' in the subquery '{relation.alias_or_name}'", hint="name the subquery's columns")
    plan = plan_changelog(relation.this, sources, stage_view, retract=True)
    alias = relation.alias_or_name or "subquery"
    types = output_types(relation.this, sources)
    table = TableDef(name=alias, columns=[Column(name=c, data_type=types.get(c)) for c in columns])
    kind = APPEND if plan.grows_only else CHANGELOG
    return StageInput(table, alias, kind, [], join=join_kind(join), plan=plan)


def stage_types(inputs: list[StageInput], stage_view: str) -> ColumnTypes:
    """The declared types of the stage's output columns (a subquery's columns where `output_types` knows them)."""
    columns = {}
    for source in inputs:
        for name in source.columns:
            column = source.table.column(name)
            if column is not None and column.data_type:
                columns[source.stage_column(name).lower()] = column.data_type
    columns[WEIGHT] = "INT"
    return {stage_view.lower(): columns}


def unqualified(condition: exp.Expr) -> exp.Expr:
    """A WHERE over one table with its columns' table names dropped (it runs on the table's own rows)."""
    def strip(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.table:
            return exp.column(node.name, quoted=True)
        return node

    return condition.copy().transform(strip)
