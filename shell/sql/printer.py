"""Prints our syntax trees back as Flink SQL: the sqlglot Generator of our dialect.

Why it exists: round trips (parse -> print -> parse), SHOW CREATE TABLE/VIEW and stored view
text all need Flink spelling: STRING, TIMESTAMP_LTZ(3), ROW<...>, BYTES, backquoted identifiers,
FOR SYSTEM_TIME AS OF, and every nodes.py node. Printers of our nodes are registered in
TRANSFORMS because sqlglot dispatches its own node classes by name only.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp, generator

from shell.sql import nodes

# Flink's reserved words that must be backquoted when used as identifiers (a practical subset
# of Flink's list: the ones people use as column names). Parsed identifiers print as written
# (quoted or not), so trees round-trip; identifiers built from catalog names are quoted with
# `needs_quotes` (fragments.identifier).
RESERVED_WORDS = {
    "all", "and", "array", "as", "between", "by", "case", "cast", "create", "cross", "current",
    "date", "day", "default", "delete", "desc", "describe", "distinct", "drop", "else", "end",
    "except", "exists", "false", "fetch", "for", "from", "full", "function", "group", "having",
    "hour", "in", "inner", "insert", "intersect", "interval", "into", "is", "join", "left", "like",
    "limit", "map", "minute", "month", "natural", "not", "null", "of", "offset", "on", "or",
    "order", "outer", "over", "partition", "primary", "range", "right", "row", "rows", "second",
    "select", "set", "system_time", "table", "then", "time", "timestamp", "true", "union",
    "unique", "update", "user", "using", "value", "values", "view", "watermark", "when", "where",
    "window", "with", "year", "metadata", "virtual", "comment", "key", "enforced", "language",
    "execute", "statement", "begin",
}


def _flag(expression: exp.Expr, arg: str, text: str) -> str:
    return text if expression.args.get(arg) else ""


def _options_sql(self: FlinkGenerator, options: list[exp.Expr]) -> str:
    if not options:
        return "()"
    items = [self.sql(option) for option in options]
    if self.pretty:
        return "(\n" + ",\n".join(f"  {item}" for item in items) + "\n)"
    return f"({', '.join(items)})"


def _table_option_sql(self: FlinkGenerator, e: nodes.TableOption) -> str:
    return f"{self.sql(e, 'this')} = {self.sql(e, 'expression')}"


def _metadata_sql(self: FlinkGenerator, e: nodes.MetadataColumnConstraint) -> str:
    key = self.sql(e, "this")
    return "METADATA" + (f" FROM {key}" if key else "") + _flag(e, "virtual", " VIRTUAL")


def _columndef_sql(self: FlinkGenerator, e: exp.ColumnDef) -> str:
    parts = [self.sql(e, "this")]
    constraints = e.args.get("constraints") or []
    computed = next((c for c in constraints if isinstance(c, exp.ComputedColumnConstraint)), None)
    if computed is not None:
        parts.append(f"AS {self.sql(computed, 'this')}")
    elif e.args.get("kind"):
        parts.append(self.sql(e, "kind"))
    for constraint in constraints:
        if isinstance(constraint, exp.NotNullColumnConstraint):
            parts.append("NOT NULL")
        elif isinstance(constraint, exp.PrimaryKeyColumnConstraint):
            parts.append("PRIMARY KEY NOT ENFORCED")
        elif isinstance(constraint, nodes.MetadataColumnConstraint):
            parts.append(self.sql(constraint))
        elif isinstance(constraint, exp.CommentColumnConstraint):
            parts.append(f"COMMENT {self.sql(constraint, 'this')}")
    return " ".join(parts)


def _create_table_sql(self: FlinkGenerator, e: nodes.CreateTableDdl) -> str:
    head = "CREATE " + _flag(e, "temporary", "TEMPORARY ") + "TABLE "
    head += _flag(e, "exists", "IF NOT EXISTS ") + self.sql(e, "this")
    elements = [_columndef_sql(self, c) for c in e.args.get("columns") or []]
    watermark = e.args.get("watermark")
    if watermark is not None:
        elements.append(
            f"WATERMARK FOR {self.sql(watermark, 'this')} AS {self.sql(watermark, 'expression')}"
        )
    primary_key = e.args.get("primary_key")
    if primary_key is not None:
        keys = ", ".join(self.sql(k) for k in primary_key.expressions)
        elements.append(f"PRIMARY KEY ({keys}) NOT ENFORCED")
    sep = "\n" if self.pretty else " "
    sql = head
    if elements:
        if self.pretty:
            sql += " (\n" + ",\n".join(f"  {el}" for el in elements) + "\n)"
        else:
            sql += f" ({', '.join(elements)})"
    if e.args.get("comment"):
        sql += f"{sep}COMMENT {self.sql(e, 'comment')}"
    if e.args.get("partitioned_by"):
        sql += f"{sep}PARTITIONED BY ({', '.join(self.sql(p) for p in e.args['partitioned_by'])})"
    if e.args.get("options") is not None:
        sql += f"{' ' if elements or not self.pretty else sep}WITH {_options_sql(self, e.args['options'])}"
    like = e.args.get("like")
    if like is not None:
        sql += f"{sep}LIKE {self.sql(like, 'this')}"
        if like.expressions:
            sql += f" ({' '.join(self.sql(o) for o in like.expressions)})"
    if e.args.get("expression") is not None:
        sql += f"{sep}AS {self.sql(e, 'expression')}"
    return sql


def _create_view_sql(self: FlinkGenerator, e: nodes.CreateViewDdl) -> str:
    sql = "CREATE " + _flag(e, "temporary", "TEMPORARY ") + "VIEW "
    sql += _flag(e, "exists", "IF NOT EXISTS ") + self.sql(e, "this")
    if e.args.get("columns"):
        sql += f" ({', '.join(self.sql(c) for c in e.args['columns'])})"
    if e.args.get("comment"):
        sql += f" COMMENT {self.sql(e, 'comment')}"
    return f"{sql} AS{self.sep()}{self.sql(e, 'expression')}"


def _create_function_sql(self: FlinkGenerator, e: nodes.CreateFunctionDdl) -> str:
    sql = "CREATE " + _flag(e, "temporary", "TEMPORARY ") + _flag(e, "system", "SYSTEM ")
    sql += "FUNCTION " + _flag(e, "exists", "IF NOT EXISTS ") + self.sql(e, "this")
    sql += f" AS {self.sql(e, 'expression')}"
    language = self.sql(e, "language")
    return f"{sql} LANGUAGE {language}" if language else sql


def _drop_sql(self: FlinkGenerator, e: nodes.DropDdl) -> str:
    return (
        "DROP " + _flag(e, "temporary", "TEMPORARY ") + f"{e.args['kind']} "
        + _flag(e, "exists", "IF EXISTS ") + self.sql(e, "this")
    )


def _alter_sql(self: FlinkGenerator, e: nodes.AlterTableSetDdl) -> str:
    exists = _flag(e, "exists", "IF EXISTS ")
    return f"ALTER TABLE {exists}{self.sql(e, 'this')} SET {_options_sql(self, e.args['options'])}"


def _show_sql(self: FlinkGenerator, e: nodes.ShowCommand) -> str:
    sql = f"SHOW {e.this}"
    if e.args.get("scope") is not None:
        sql += f" {'FROM' if e.this == 'COLUMNS' else 'IN'} {self.sql(e, 'scope')}"
    if e.args.get("like") is not None:
        sql += f" {'NOT ' if e.args.get('negated') else ''}LIKE {self.sql(e, 'like')}"
    return sql


def _comment_sql(self: FlinkGenerator, e: exp.Expr) -> str:
    return f" COMMENT {self.sql(e, 'comment')}" if e.args.get("comment") is not None else ""


def _create_catalog_sql(self: FlinkGenerator, e: nodes.CreateCatalogDdl) -> str:
    exists = _flag(e, "exists", "IF NOT EXISTS ")
    return f"CREATE CATALOG {exists}{self.sql(e, 'this')}{_comment_sql(self, e)}{_with_options(self, e)}"


def _create_database_sql(self: FlinkGenerator, e: nodes.CreateDatabaseDdl) -> str:
    exists = _flag(e, "exists", "IF NOT EXISTS ")
    return f"CREATE DATABASE {exists}{self.sql(e, 'this')}{_comment_sql(self, e)}{_with_options(self, e)}"


def _alter_catalog_sql(self: FlinkGenerator, e: nodes.AlterCatalogDdl) -> str:
    if e.args.get("options") is not None:
        return f"ALTER CATALOG {self.sql(e, 'this')} SET {_options_sql(self, e.args['options'])}"
    return f"ALTER CATALOG {self.sql(e, 'this')}{_comment_sql(self, e)}"


def _alter_table_sql(self: FlinkGenerator, e: nodes.AlterTableDdl) -> str:
    action = e.args["action"].name
    head = f"ALTER TABLE {_flag(e, 'exists', 'IF EXISTS ')}{self.sql(e, 'this')}"
    items = [f"PRIMARY KEY ({self.expressions(x, flat=True)}) NOT ENFORCED" if isinstance(x, exp.PrimaryKey)
             else self.sql(x) for x in e.expressions]  # fmt: skip
    if action == "RENAME TO":
        return f"{head} RENAME TO {self.sql(e, 'to')}"
    if action == "RENAME COLUMN":
        return f"{head} RENAME {items[0]} TO {items[1]}"
    if action in ("DROP PRIMARY KEY", "DROP WATERMARK"):
        return f"{head} {action}"
    if action == "DROP":
        return f"{head} DROP ({', '.join(items)})"
    return f"{head} {action} ({', '.join(items)})"


def _positioned_sql(self: FlinkGenerator, e: nodes.Positioned) -> str:
    if e.args.get("first"):
        return f"{self.sql(e, 'this')} FIRST"
    return f"{self.sql(e, 'this')} AFTER {self.sql(e, 'after')}"


def _alter_view_sql(self: FlinkGenerator, e: nodes.AlterViewDdl) -> str:
    if e.args.get("to") is not None:
        return f"ALTER VIEW {self.sql(e, 'this')} RENAME TO {self.sql(e, 'to')}"
    return f"ALTER VIEW {self.sql(e, 'this')} AS {self.sql(e, 'expression')}"


def _statement_set_sql(self: FlinkGenerator, e: nodes.StatementSetBlock) -> str:
    inserts = "".join(f"{self.sql(i)};{self.sep()}" for i in e.expressions)
    return f"EXECUTE STATEMENT SET BEGIN{self.sep()}{inserts}END"


def _table_arg_sql(self: FlinkGenerator, e: nodes.TableArg) -> str:
    sql = f"TABLE {self.sql(e, 'this')}"
    partition_by = e.args.get("partition_by")
    if partition_by:
        cols = ", ".join(self.sql(p) for p in partition_by)
        sql += f" PARTITION BY ({cols})" if len(partition_by) > 1 else f" PARTITION BY {cols}"
    return sql


def _json_value_sql(self: FlinkGenerator, e: nodes.JsonValue) -> str:
    sql = f"JSON_VALUE({self.sql(e, 'this')}, {self.sql(e, 'path')}"
    if e.args.get("returning"):
        sql += f" RETURNING {self.sql(e, 'returning')}"
    for b in e.args.get("behaviours") or []:
        default = f" {self.sql(b, 'expression')}" if b.args.get("expression") else ""
        sql += f" {b.this}{default} ON {b.args['on']}"
    return sql + ")"


def _substring_sql(self: FlinkGenerator, e: exp.Substring) -> str:
    length = e.args.get("length")
    tail = f" FOR {self.sql(length)}" if length else ""
    return f"SUBSTRING({self.sql(e, 'this')} FROM {self.sql(e, 'start')}{tail})"


def _trim_sql(self: FlinkGenerator, e: exp.Trim) -> str:
    position, chars = e.args.get("position"), e.args.get("expression")
    if not position and not chars:
        return f"TRIM({self.sql(e, 'this')})"
    spec = " ".join(p for p in (str(position or "BOTH").upper(), self.sql(chars)) if p)
    return f"TRIM({spec} FROM {self.sql(e, 'this')})"


def _with_options(self: FlinkGenerator, e: exp.Expr) -> str:
    options = e.args.get("options")
    return f" WITH {_options_sql(self, options)}" if options is not None else ""


def _print_sql(self: FlinkGenerator, e: nodes.PrintTopicCommand) -> str:
    sql = f"PRINT {self.sql(e, 'this')}" + _flag(e, "from_beginning", " FROM BEGINNING")
    if e.args.get("limit"):
        sql += f" LIMIT {self.sql(e, 'limit')}"
    return sql + _with_options(self, e)


def _describe_topic_sql(self: FlinkGenerator, e: nodes.DescribeTopicCommand) -> str:
    sql = f"DESCRIBE TOPIC {self.sql(e, 'this')}"
    if e.args.get("sample"):
        sql += f" SAMPLE {self.sql(e, 'sample')}"
    return sql + _with_options(self, e)


def _set_sql(self: FlinkGenerator, e: nodes.SetCommand) -> str:
    if not e.args.get("this"):
        return "SET"
    return f"SET {self.sql(e, 'this')} = {self.sql(e, 'expression')}"


def _explain_sql(self: FlinkGenerator, e: nodes.ExplainCommand) -> str:
    details = ", ".join(self.sql(d) for d in e.args.get("details") or [])
    return f"EXPLAIN {details + ' ' if details else ''}{self.sql(e, 'this')}"


def _stop_sql(self: FlinkGenerator, e: nodes.StopJobCommand) -> str:
    return (
        f"STOP JOB {self.sql(e, 'this')}"
        + _flag(e, "savepoint", " WITH SAVEPOINT")
        + _flag(e, "drain", " WITH DRAIN")
    )


def _show_errors_sql(self: FlinkGenerator, e: nodes.ShowErrorsCommand) -> str:
    limit = f" LIMIT {self.sql(e, 'limit')}" if e.args.get("limit") else ""
    return f"SHOW ERRORS FOR {self.sql(e, 'this')}{limit}"


class FlinkGenerator(generator.Generator):
    """Generator of the Streamshell dialect (Flink spelling)."""

    STRUCT_DELIMITER = ("<", ">")
    INSERT_OVERWRITE = " OVERWRITE"
    RESERVED_KEYWORDS: t.ClassVar[set[str]] = set()
    TYPE_MAPPING = {
        **generator.Generator.TYPE_MAPPING,
        exp.DType.TEXT: "STRING",
        exp.DType.TIMESTAMPLTZ: "TIMESTAMP_LTZ",
        exp.DType.STRUCT: "ROW",
        exp.DType.BLOB: "BYTES",
    }

    TRANSFORMS = {
        **generator.Generator.TRANSFORMS,
        exp.Version: lambda self, e: f"FOR SYSTEM_TIME AS OF {self.sql(e, 'expression')}",
        exp.If: lambda self, e: self.func("IF", e.this, e.args.get("true"), e.args.get("false")),
        exp.CurrentTimestamp: lambda self, e: "CURRENT_TIMESTAMP",
        exp.CurrentDate: lambda self, e: "CURRENT_DATE",
        exp.CurrentTime: lambda self, e: "CURRENT_TIME",
        exp.Localtimestamp: lambda self, e: "LOCALTIMESTAMP",
        exp.Localtime: lambda self, e: "LOCALTIME",
        exp.Substring: _substring_sql,
        exp.Trim: _trim_sql,
        exp.StrPosition: lambda self, e: f"POSITION({self.sql(e, 'substr')} IN {self.sql(e, 'this')})",
        exp.Array: lambda self, e: f"ARRAY[{self.expressions(e, flat=True)}]",
        exp.VarMap: lambda self, e: "MAP[" + ", ".join(
            f"{self.sql(k)}, {self.sql(v)}" for k, v in zip(e.args["keys"].expressions, e.args["values"].expressions)) + "]",
        nodes.TableOption: _table_option_sql,
        nodes.MetadataColumnConstraint: _metadata_sql,
        nodes.LikeClause: lambda self, e: f"LIKE {self.sql(e, 'this')}",
        nodes.CreateTableDdl: _create_table_sql,
        nodes.CreateViewDdl: _create_view_sql,
        nodes.CreateFunctionDdl: _create_function_sql,
        nodes.DropDdl: _drop_sql,
        nodes.AlterTableSetDdl: _alter_sql,
        nodes.AlterTableDdl: _alter_table_sql,
        nodes.Positioned: _positioned_sql,
        nodes.AlterViewDdl: _alter_view_sql,
        nodes.StatementSetBlock: _statement_set_sql,
        nodes.TableArg: _table_arg_sql,
        nodes.Descriptor: lambda self, e: self.func("DESCRIPTOR", *e.expressions),
        nodes.JsonValue: _json_value_sql,
        nodes.HelpCommand: lambda self, e: "HELP" + (f" {self.sql(e, 'this')}" if e.this else ""),
        nodes.QuitCommand: lambda self, e: "EXIT" if e.args.get("exit") else "QUIT",
        nodes.ClearCommand: lambda self, e: "CLEAR",
        nodes.SetCommand: _set_sql,
        nodes.ResetCommand: lambda self, e: "RESET" + (f" {self.sql(e, 'this')}" if e.this else ""),
        nodes.ShowCommand: _show_sql,
        nodes.CreateCatalogDdl: _create_catalog_sql,
        nodes.DropCatalogDdl: lambda self, e: f"DROP CATALOG {_flag(e, 'exists', 'IF EXISTS ')}{self.sql(e, 'this')}",
        nodes.AlterCatalogDdl: _alter_catalog_sql,
        nodes.UseCatalogCommand: lambda self, e: f"USE CATALOG {self.sql(e, 'this')}",
        nodes.CreateDatabaseDdl: _create_database_sql,
        nodes.DropDatabaseDdl: lambda self, e: (
            f"DROP DATABASE {_flag(e, 'exists', 'IF EXISTS ')}{self.sql(e, 'this')}{_flag(e, 'cascade', ' CASCADE')}"
        ),
        nodes.UseCommand: lambda self, e: f"USE {self.sql(e, 'this')}",
        nodes.DescribeCatalogCommand: lambda self, e: (
            f"DESCRIBE CATALOG {_flag(e, 'extended', 'EXTENDED ')}{self.sql(e, 'this')}"
        ),
        nodes.ShowCreateCommand: lambda self, e: (
            f"SHOW CREATE {'VIEW' if e.args.get('view') else 'TABLE'} {self.sql(e, 'this')}"
        ),
        nodes.DescribeCommand: lambda self, e: f"DESCRIBE {self.sql(e, 'this')}",
        nodes.ExplainCommand: _explain_sql,
        nodes.StopJobCommand: _stop_sql,
        nodes.ResumeJobCommand: lambda self, e: f"RESUME JOB {self.sql(e, 'this')}",
        nodes.DescribeJobCommand: lambda self, e: f"DESCRIBE JOB {self.sql(e, 'this')}",
        nodes.DescribeFunctionCommand: lambda self, e: "DESCRIBE FUNCTION " + ("EXTENDED " if e.args.get("extended")
                                                                                else "") + self.sql(e, "this"),
        nodes.ShowErrorsCommand: _show_errors_sql,
        nodes.PrintTopicCommand: _print_sql,
        nodes.DescribeTopicCommand: _describe_topic_sql,
    }
