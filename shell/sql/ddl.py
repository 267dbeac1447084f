"""CREATE TABLE in and out of the catalog model.

Why it exists: DDL is never transpiled; a parsed CREATE TABLE becomes a `TableDef`
(`table_def_from_create`), and SHOW CREATE TABLE prints a `TableDef` back as Flink DDL
(`create_table_sql`, with secret options hidden by a `redact(key, value)` callback). The round
trip holds: parsing `create_table_sql(t)` gives `t` again. Column-level `PRIMARY KEY NOT
ENFORCED` is folded into `TableDef.primary_key` and printed as a table constraint.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from shell.catalog.alter import Placed, SchemaChange
from shell.catalog.model import Column, ColumnKind, LikeClause, TableDef, ViewDef, Watermark
from shell.sql import nodes
from shell.sql.dialect import DIALECT
from shell.sql.fragments import identifier, object_name, parse_expression, parse_type, table_node, to_sql

Redact = Callable[[str, str], str]


def table_def_from_create(expr: nodes.CreateTableDdl) -> TableDef:
    """The TableDef declared by a parsed CREATE TABLE."""
    columns = [column_from_def(c) for c in expr.args.get("columns") or []]
    primary_key = [k.name for k in expr.args["primary_key"].expressions] if expr.args.get("primary_key") else []
    for column_def in expr.args.get("columns") or []:
        if any(isinstance(c, exp.PrimaryKeyColumnConstraint) for c in column_def.args.get("constraints") or []):
            primary_key.append(column_def.name)
    watermark = expr.args.get("watermark")
    like = expr.args.get("like")
    comment = expr.args.get("comment")
    return TableDef(
        name=object_name(expr.this),
        columns=columns,
        options={o.this.name: o.expression.name for o in expr.args.get("options") or []},
        primary_key=primary_key,
        watermark=Watermark(watermark.this.name, to_sql(watermark.expression)) if watermark else None,
        comment=comment.name if comment else None,
        partitioned_by=[p.name for p in expr.args.get("partitioned_by") or []],
        like=LikeClause(object_name(like.this), [o.name for o in like.expressions]) if like else None,
    )


def column_from_def(column_def: exp.ColumnDef) -> Column:
    constraints = column_def.args.get("constraints") or []
    computed = next((c for c in constraints if isinstance(c, exp.ComputedColumnConstraint)), None)
    metadata = next((c for c in constraints if isinstance(c, nodes.MetadataColumnConstraint)), None)
    comment = next((c for c in constraints if isinstance(c, exp.CommentColumnConstraint)), None)
    kind = ColumnKind.PHYSICAL
    if computed is not None:
        kind = ColumnKind.COMPUTED
    elif metadata is not None:
        kind = ColumnKind.METADATA
    data_type = column_def.args.get("kind")
    return Column(
        name=column_def.name,
        data_type=to_sql(data_type) if data_type is not None else None,
        kind=kind,
        expression=to_sql(computed.this) if computed is not None else None,
        metadata_key=metadata.this.name if metadata is not None and metadata.this else None,
        virtual=bool(metadata is not None and metadata.args.get("virtual")),
        nullable=not any(isinstance(c, exp.NotNullColumnConstraint) for c in constraints),
        comment=comment.this.name if comment is not None else None,
    )


def create_table_ast(
    table: TableDef,
    redact: Redact | None = None,
    *,
    temporary: bool = False,
    if_not_exists: bool = False,
) -> nodes.CreateTableDdl:
    """The CREATE TABLE tree of a TableDef (option values passed through `redact`)."""
    options = [
        nodes.TableOption(
            this=exp.Literal.string(key),
            expression=exp.Literal.string(redact(key, value) if redact else value),
        )
        for key, value in table.options.items()
    ]
    watermark = None
    if table.watermark is not None:
        watermark = exp.WatermarkColumnConstraint(
            this=identifier(table.watermark.column),
            expression=parse_expression(table.watermark.expression),
        )
    like = None
    if table.like is not None:
        like = nodes.LikeClause(
            this=table_node(table.like.source),
            expressions=[exp.var(o) for o in table.like.options] or None,
        )
    return nodes.CreateTableDdl(
        this=table_node(table.name),
        columns=[_column_def(c) for c in table.columns] or None,
        watermark=watermark,
        primary_key=exp.PrimaryKey(expressions=[identifier(k) for k in table.primary_key])
        if table.primary_key
        else None,
        comment=exp.Literal.string(table.comment) if table.comment is not None else None,
        partitioned_by=[identifier(p) for p in table.partitioned_by] or None,
        options=options if table.options or table.like is None else None,
        like=like,
        temporary=temporary or None,
        exists=if_not_exists or None,
    )


def _column_def(column: Column) -> exp.ColumnDef:
    constraints: list[exp.Expr] = []
    kind = None
    if column.kind is ColumnKind.COMPUTED:
        constraints.append(exp.ComputedColumnConstraint(this=parse_expression(column.expression or "")))
    else:
        kind = parse_type(column.data_type or "")
    if not column.nullable:
        constraints.append(exp.NotNullColumnConstraint())
    if column.kind is ColumnKind.METADATA:
        key = exp.Literal.string(column.metadata_key) if column.metadata_key else None
        constraints.append(nodes.MetadataColumnConstraint(this=key, virtual=column.virtual or None))
    if column.comment is not None:
        constraints.append(exp.CommentColumnConstraint(this=exp.Literal.string(column.comment)))
    return exp.ColumnDef(this=identifier(column.name), kind=kind, constraints=constraints or None)


def create_table_sql(table: TableDef, redact: Redact | None = None) -> str:
    """Flink DDL for SHOW CREATE TABLE (multi-line, like Flink's SQL client prints it)."""
    return DIALECT.generate(create_table_ast(table, redact), pretty=True)


def create_view_sql(view: ViewDef) -> str:
    """Flink DDL for SHOW CREATE VIEW."""
    columns = f" ({', '.join(to_sql(identifier(c)) for c in view.columns)})" if view.columns else ""
    comment = f" COMMENT {to_sql(exp.Literal.string(view.comment))}" if view.comment is not None else ""
    return f"CREATE VIEW {to_sql(table_node(view.name))}{columns}{comment} AS\n{view.query_sql}"


def schema_change(expr: nodes.AlterTableDdl) -> SchemaChange:
    """The schema change a parsed ALTER TABLE ADD/MODIFY/DROP/RENAME column/RESET asks for."""
    action = expr.args["action"].name
    elements = expr.args.get("expressions") or []
    if action in ("DROP", "RENAME COLUMN", "RESET"):
        return SchemaChange(action, names=tuple(e.name for e in elements))
    placed, primary_key, watermark = [], None, None
    for element in elements:
        first = after = None
        if isinstance(element, nodes.Positioned):
            first, after = bool(element.args.get("first")), element.args.get("after")
            element = element.this
        if isinstance(element, exp.PrimaryKey):
            primary_key = tuple(k.name for k in element.expressions)
        elif isinstance(element, exp.WatermarkColumnConstraint):
            watermark = Watermark(element.this.name, to_sql(element.expression))
        else:
            placed.append(Placed(column_from_def(element), bool(first), after.name if after is not None else None))
            if any(isinstance(c, exp.PrimaryKeyColumnConstraint) for c in element.args.get("constraints") or []):
                primary_key = (element.name,)
    return SchemaChange(action, columns=tuple(placed), primary_key=primary_key, watermark=watermark)
