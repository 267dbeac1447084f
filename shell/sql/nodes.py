"""sqlglot syntax-tree nodes for the Flink constructs sqlglot has no node for.

Why it exists: our dialect parses every statement (DDL, shell commands, window table functions)
into one sqlglot tree, so a single generator prints them back and round trips compare trees.
Each class only declares its arguments; the parser (grammar*.py) builds them and the generator
(printer.py) prints them. Flag arguments are booleans; names are `exp.Table`/`exp.Identifier`;
keys, values and job ids are string `exp.Literal`s.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp


class Node(exp.Expression):
    """Marker base for our nodes (sqlglot's own nodes are used wherever one fits)."""


# --- DDL ---------------------------------------------------------------------------------------


class TableOption(Node):
    """`'key' = 'value'` inside WITH (...), SET (...) or a shell command's WITH."""

    arg_types = {"this": True, "expression": True}


class MetadataColumnConstraint(Node, exp.ColumnConstraintKind):
    """`METADATA [FROM 'key'] [VIRTUAL]` on a column definition."""

    arg_types = {"this": False, "virtual": False}


class LikeClause(Node):
    """`LIKE source [(INCLUDING ALL, EXCLUDING OPTIONS, ...)]`; options are exp.Var texts."""

    arg_types = {"this": True, "expressions": False}


class CreateTableDdl(Node):
    """`CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (...) [COMMENT] [PARTITIONED BY] [WITH] [LIKE | AS query]`.

    columns: exp.ColumnDef (physical: kind set; computed: ComputedColumnConstraint; metadata:
    MetadataColumnConstraint); watermark: exp.WatermarkColumnConstraint; primary_key:
    exp.PrimaryKey of identifiers; options: TableOption.
    """

    arg_types = {
        "this": True,
        "columns": False,
        "watermark": False,
        "primary_key": False,
        "comment": False,
        "partitioned_by": False,
        "options": False,
        "like": False,
        "temporary": False,
        "exists": False,
        "expression": False,  # CREATE TABLE ... AS query
    }


class CreateViewDdl(Node):
    """`CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)] [COMMENT 'c'] AS query`."""

    arg_types = {
        "this": True,
        "columns": False,
        "expression": True,
        "comment": False,
        "temporary": False,
        "exists": False,
    }


class CreateFunctionDdl(Node):
    """`CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'target' [LANGUAGE l]`."""

    arg_types = {
        "this": True,
        "expression": True,
        "language": False,
        "temporary": False,
        "system": False,
        "exists": False,
    }


class DropDdl(Node):
    """`DROP [TEMPORARY] TABLE|VIEW|FUNCTION [IF EXISTS] name`; kind is the upper-case word."""

    arg_types = {"this": True, "kind": True, "exists": False, "temporary": False}


class AlterTableSetDdl(Node):
    """`ALTER TABLE [IF EXISTS] name SET ('k' = 'v', ...)`."""

    arg_types = {"this": True, "options": True, "exists": False}


class AlterTableDdl(Node):
    """`ALTER TABLE [IF EXISTS] t <action>` other than SET: `action` is ADD, MODIFY, DROP, DROP PRIMARY KEY,
    DROP WATERMARK, RENAME COLUMN, RENAME TO or RESET; `expressions` the schema elements (ADD/MODIFY, each
    possibly a Positioned), the column names (DROP, RENAME COLUMN: old and new) or the option keys (RESET);
    `to` the new name (RENAME TO)."""

    arg_types = {"this": True, "action": True, "expressions": False, "to": False, "exists": False}


class Positioned(Node):
    """A column added or modified `FIRST` or `AFTER column`."""

    arg_types = {"this": True, "first": False, "after": False}


class AlterViewDdl(Node):
    """`ALTER VIEW v RENAME TO w` (`to`) or `ALTER VIEW v AS query` (`expression`)."""

    arg_types = {"this": True, "to": False, "expression": False}


class StatementSetBlock(Node):
    """`EXECUTE STATEMENT SET BEGIN insert; ...; END` (or the older `BEGIN STATEMENT SET; ...; END`)."""

    arg_types = {"expressions": True}


# --- queries -----------------------------------------------------------------------------------


class TableArg(Node):
    """`TABLE name [PARTITION BY cols]` as an argument of a table function."""

    arg_types = {"this": True, "partition_by": False}


class Descriptor(Node):
    """`DESCRIPTOR(col, ...)` naming the time attribute of a window table function."""

    arg_types = {"expressions": True}


class JsonBehaviour(Node):
    """`{NULL | ERROR | DEFAULT expr} ON {EMPTY | ERROR}` of JSON_VALUE; this/on are upper words."""

    arg_types = {"this": True, "expression": False, "on": True}


class JsonValue(Node):
    """`JSON_VALUE(json, path [RETURNING type] [behaviours])`."""

    arg_types = {"this": True, "path": True, "returning": False, "behaviours": False}


# --- shell commands ----------------------------------------------------------------------------


class HelpCommand(Node):
    arg_types = {"this": False}


class QuitCommand(Node):
    arg_types = {"exit": False}


class ClearCommand(Node):
    arg_types: t.ClassVar[dict[str, bool]] = {}


class SetCommand(Node):
    """`SET ['key' = 'value']`: this is the key literal, expression the value literal."""

    arg_types = {"this": False, "expression": False}


class ResetCommand(Node):
    arg_types = {"this": False}


class ShowCommand(Node):
    """`SHOW TABLES|VIEWS|FUNCTIONS|JOBS|CATALOGS|DATABASES|COLUMNS|CURRENT CATALOG|CURRENT DATABASE`: this is the
    upper-case kind; `scope` the database (catalog, table) after FROM/IN; `like` the pattern, `negated` NOT LIKE."""

    arg_types = {"this": True, "scope": False, "like": False, "negated": False}


class CreateCatalogDdl(Node):
    """`CREATE CATALOG [IF NOT EXISTS] c [COMMENT '...'] WITH (...)`."""

    arg_types = {"this": True, "options": True, "comment": False, "exists": False}


class DropCatalogDdl(Node):
    arg_types = {"this": True, "exists": False}


class AlterCatalogDdl(Node):
    """`ALTER CATALOG c SET (...)` or `ALTER CATALOG c COMMENT '...'`."""

    arg_types = {"this": True, "options": False, "comment": False}


class UseCatalogCommand(Node):
    arg_types = {"this": True}


class CreateDatabaseDdl(Node):
    """`CREATE DATABASE [IF NOT EXISTS] [c.]db [COMMENT '...'] [WITH (...)]`."""

    arg_types = {"this": True, "comment": False, "options": False, "exists": False}


class DropDatabaseDdl(Node):
    """`DROP DATABASE [IF EXISTS] [c.]db [RESTRICT | CASCADE]`."""

    arg_types = {"this": True, "exists": False, "cascade": False}


class UseCommand(Node):
    """`USE [c.]db`."""

    arg_types = {"this": True}


class DescribeCatalogCommand(Node):
    arg_types = {"this": True, "extended": False}


class ShowCreateCommand(Node):
    arg_types = {"this": True, "view": False}


class DescribeCommand(Node):
    arg_types = {"this": True}


class ExplainCommand(Node):
    """`EXPLAIN [detail, ...] statement`; details are exp.Var words."""

    arg_types = {"this": True, "details": False}


class StopJobCommand(Node):
    arg_types = {"this": True, "savepoint": False, "drain": False}


class ResumeJobCommand(Node):
    arg_types = {"this": True}


class DescribeJobCommand(Node):
    """`DESCRIBE JOB 'id'`: everything about one job that SHOW JOBS has no room for."""

    arg_types = {"this": True}


class DescribeFunctionCommand(Node):
    """`DESCRIBE FUNCTION [EXTENDED] name`: a user function's kind, language, target and result type."""

    arg_types = {"this": True, "extended": False}


class ShowErrorsCommand(Node):
    """`SHOW ERRORS FOR table [LIMIT n]`."""

    arg_types = {"this": True, "limit": False}


class PrintTopicCommand(Node):
    """`PRINT 'topic' [FROM BEGINNING] [LIMIT n] [WITH (...)]`."""

    arg_types = {"this": True, "from_beginning": False, "limit": False, "options": False}


class DescribeTopicCommand(Node):
    """`DESCRIBE TOPIC 'topic' [SAMPLE n] [WITH (...)]`."""

    arg_types = {"this": True, "sample": False, "options": False}
