"""The statements the shell runs, as frozen dataclasses (one per statement kind).

Why it exists: the session dispatches on these types and never looks at tokens or sqlglot
internals, except for the query trees it hands to the translator. Every statement carries
`source` (its SourceStatement, to position later errors) and `node` (the sqlglot tree it came
from); both are excluded from equality, so two parses of the same text compare equal.
Object names are dotted strings with the user's spelling (`cat.db.t`); option keys/values
are plain strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from shell.catalog.alter import SchemaChange
from shell.catalog.model import TableDef
from shell.sql.split import SourceStatement


@dataclass(frozen=True)
class Statement:
    """Base of all statements."""

    source: SourceStatement | None = field(default=None, kw_only=True, compare=False, repr=False)
    node: exp.Expr | None = field(default=None, kw_only=True, compare=False, repr=False)


# --- DDL ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateTable(Statement):
    """`query` is set for CREATE TABLE ... AS query: the table takes the query's columns and a job fills it."""

    table: TableDef
    if_not_exists: bool = False
    temporary: bool = False
    query: exp.Expr | None = None


@dataclass(frozen=True)
class CreateView(Statement):
    """`query_sql` is the query printed by our dialect (what the catalog stores)."""

    name: str
    query_sql: str
    query: exp.Expr
    if_not_exists: bool = False
    temporary: bool = False
    columns: list[str] | None = None
    comment: str | None = None


@dataclass(frozen=True)
class CreateFunction(Statement):
    """`target` is the implementation ('module.function' for PYTHON); `language` is upper-case,
    None when the statement does not say (Flink then assumes JAVA)."""

    name: str
    target: str
    language: str | None = None
    if_not_exists: bool = False
    temporary: bool = False


@dataclass(frozen=True)
class DropTable(Statement):
    name: str
    if_exists: bool = False
    is_view: bool = False
    temporary: bool = False


@dataclass(frozen=True)
class DropFunction(Statement):
    name: str
    if_exists: bool = False
    temporary: bool = False


@dataclass(frozen=True)
class AlterTableSet(Statement):
    name: str
    options: dict[str, str]
    if_exists: bool = False


@dataclass(frozen=True)
class AlterTable(Statement):
    """ALTER TABLE's other forms: a schema change (shell/catalog/alter.py), or RENAME TO (`new_name`)."""

    name: str
    change: SchemaChange | None = None
    new_name: str | None = None
    if_exists: bool = False


@dataclass(frozen=True)
class AlterView(Statement):
    """`ALTER VIEW v RENAME TO w` (`new_name`) or `ALTER VIEW v AS query` (`query_sql`, `query`)."""

    name: str
    new_name: str | None = None
    query_sql: str | None = None
    query: exp.Expr | None = None


# --- DML and queries ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Insert(Statement):
    """`query` is set for INSERT ... SELECT; `values` (rows of expressions) for INSERT ... VALUES."""

    target: str
    columns: list[str] | None
    query: exp.Expr | None
    values: list[list[exp.Expr]] | None
    overwrite: bool = False


@dataclass(frozen=True)
class Delete(Statement):
    """`DELETE FROM t WHERE ...`: `where` is the condition as written; the session checks that it names whole
    primary keys (shell/planner/deletes.py) and writes a tombstone for each."""

    target: str
    where: exp.Expr


@dataclass(frozen=True)
class StatementSet(Statement):
    """Several INSERTs run as one job."""

    inserts: list[Insert]


@dataclass(frozen=True)
class Select(Statement):
    """Any query: SELECT, UNION, WITH ..., VALUES."""

    query: exp.Expr


# --- shell commands ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Help(Statement):
    topic: str | None = None


@dataclass(frozen=True)
class Quit(Statement):
    pass


@dataclass(frozen=True)
class Clear(Statement):
    pass


@dataclass(frozen=True)
class Set(Statement):
    """`SET` alone lists the settings (key and value None)."""

    key: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class Reset(Statement):
    """`RESET` alone resets every setting (key None)."""

    key: str | None = None


@dataclass(frozen=True)
class Show(Statement):
    """kind: TABLES, VIEWS, FUNCTIONS, JOBS, CATALOGS, DATABASES, COLUMNS, CURRENT CATALOG or CURRENT DATABASE;
    `scope` the database (or catalog, or table for COLUMNS) named after FROM/IN; `like` a LIKE pattern."""

    kind: str
    scope: str | None = None
    like: str | None = None
    not_like: bool = False


@dataclass(frozen=True)
class CreateCatalog(Statement):
    name: str
    options: dict[str, str]
    comment: str | None = None
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropCatalog(Statement):
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class AlterCatalog(Statement):
    name: str
    options: dict[str, str]
    comment: str | None = None


@dataclass(frozen=True)
class UseCatalog(Statement):
    name: str


@dataclass(frozen=True)
class CreateDatabase(Statement):
    name: str
    comment: str | None = None
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropDatabase(Statement):
    name: str
    if_exists: bool = False
    cascade: bool = False


@dataclass(frozen=True)
class Use(Statement):
    """`USE [catalog.]database`."""

    database: str


@dataclass(frozen=True)
class DescribeCatalog(Statement):
    name: str
    extended: bool = False


@dataclass(frozen=True)
class ShowCreate(Statement):
    name: str
    is_view: bool = False


@dataclass(frozen=True)
class Describe(Statement):
    name: str


@dataclass(frozen=True)
class Explain(Statement):
    """`details`: Flink's ESTIMATED_COST, CHANGELOG_MODE, ... (upper-case), possibly empty."""

    statement: Statement
    details: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StopJob(Statement):
    job_id: str
    with_savepoint: bool = False
    with_drain: bool = False


@dataclass(frozen=True)
class ResumeJob(Statement):
    job_id: str


@dataclass(frozen=True)
class DescribeFunction(Statement):
    name: str
    extended: bool = False


@dataclass(frozen=True)
class DescribeJob(Statement):
    job_id: str


@dataclass(frozen=True)
class ShowErrors(Statement):
    table: str
    limit: int | None = None


@dataclass(frozen=True)
class PrintTopic(Statement):
    """`options`: the connection given in WITH (...), e.g. {'connector': 'pulsar', ...}."""

    topic: str
    from_beginning: bool = False
    limit: int | None = None
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DescribeTopic(Statement):
    topic: str
    sample: int | None = None
    options: dict[str, str] = field(default_factory=dict)
