"""A PostgreSQL database seen as a catalog: its schemas as databases, their tables as `jdbc` tables.

Why it exists: Flink's JDBC catalog lets a user query a database's tables without writing a CREATE TABLE for
each. This one lists schemas and tables from PostgreSQL's information_schema and turns a table into a `TableDef`:
its columns typed from their PostgreSQL types, its primary key, and the options of a `jdbc` table with the
catalog's url, username and password. The listings are small queries over a short-lived connection from Spark's
driver (connectors/jdbc_client.py), never rows of the tables themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from shell.catalog.model import Column, TableDef
from shell.connectors import jdbc_client
from shell.connectors.jdbc_client import Endpoint
from shell.options import OptionSpec
from shell.secrets import declare_secret_keys

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")
SIMPLE_TYPES = {
    "smallint": "SMALLINT", "integer": "INT", "bigint": "BIGINT", "boolean": "BOOLEAN", "real": "FLOAT",
    "double precision": "DOUBLE", "text": "STRING", "character varying": "STRING", "character": "STRING",
    "date": "DATE", "bytea": "BYTES", "uuid": "STRING", "json": "STRING", "jsonb": "STRING",
}  # fmt: skip


def flink_type(data_type: str, precision: int | None, scale: int | None, fraction: int | None) -> str:
    """The Flink type of a PostgreSQL column, from information_schema.columns; STRING for a type with none."""
    if data_type in SIMPLE_TYPES:
        return SIMPLE_TYPES[data_type]
    if data_type == "numeric":
        return f"DECIMAL({precision}, {scale or 0})" if precision else "DECIMAL(38, 18)"
    if data_type == "timestamp without time zone":
        return f"TIMESTAMP({min(fraction if fraction is not None else 6, 9)})"
    if data_type == "timestamp with time zone":
        return f"TIMESTAMP({min(fraction if fraction is not None else 6, 9)}) WITH LOCAL TIME ZONE"
    if data_type.startswith("time"):
        return "TIME"
    return "STRING"


def identifier(name: str) -> str:
    """`name` as PostgreSQL reads it back unchanged: bare when lower-case and plain, else quoted."""
    return name if name.isidentifier() and name == name.lower() else '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class JdbcCatalog:
    """The schemas and tables of one PostgreSQL database (`url`), read as `username`."""

    def __init__(self, spark: "SparkSession", url: str, username: str | None = None, password: str | None = None,
                 name: str = "jdbc") -> None:
        jdbc_client.check_url(url, name)
        self.spark = spark
        self.name = name
        self.endpoint = Endpoint(url, username, password)

    def _query(self, sql: str) -> list[tuple]:
        with jdbc_client.connection(self.spark, self.endpoint, self.name) as conn:
            try:
                return jdbc_client.query(conn, sql)
            except Exception as exc:  # noqa: BLE001 - one line, as every jdbc failure
                raise jdbc_client.explained(exc, self.name, self.endpoint) from None

    def databases(self) -> list[str]:
        """The database's schemas, system schemas left out."""
        excluded = ", ".join(literal(s) for s in SYSTEM_SCHEMAS)
        rows = self._query(f"SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT IN ({excluded}) "
                           "AND schema_name NOT LIKE 'pg_temp_%' AND schema_name NOT LIKE 'pg_toast_temp_%' "
                           "ORDER BY schema_name")  # fmt: skip
        return [r[0] for r in rows]

    def tables(self, database: str) -> list[str]:
        """The tables and views of schema `database`."""
        rows = self._query(f"SELECT table_name FROM information_schema.tables WHERE table_schema = {literal(database)} "
                           "AND table_type IN ('BASE TABLE', 'VIEW') ORDER BY table_name")  # fmt: skip
        return [r[0] for r in rows]

    def table(self, database: str, name: str) -> TableDef | None:
        """Table `name` of schema `database` as a jdbc table, or None when there is none."""
        columns = self._query(
            "SELECT column_name, data_type, numeric_precision, numeric_scale, datetime_precision, is_nullable "
            f"FROM information_schema.columns WHERE table_schema = {literal(database)} AND table_name = {literal(name)} "
            "ORDER BY ordinal_position")  # fmt: skip
        if not columns:
            return None
        key = self._query(
            "SELECT k.column_name FROM information_schema.table_constraints AS c "
            "JOIN information_schema.key_column_usage AS k ON k.constraint_name = c.constraint_name "
            "AND k.constraint_schema = c.constraint_schema AND k.table_name = c.table_name "
            f"WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = {literal(database)} "
            f"AND c.table_name = {literal(name)} ORDER BY k.ordinal_position")  # fmt: skip
        options = {"connector": "jdbc", "url": self.endpoint.url, "table-name": f"{identifier(database)}.{identifier(name)}"}
        if self.endpoint.user is not None:
            options["username"] = self.endpoint.user
        if self.endpoint.password is not None:
            options["password"] = self.endpoint.password
        return TableDef(
            name=name,
            columns=[Column(c[0], flink_type(c[1], _int(c[2]), _int(c[3]), _int(c[4])), nullable=c[5] == "YES")
                     for c in columns],
            options=options,
            primary_key=[k[0] for k in key],
        )


def _int(value: object) -> int | None:
    return None if value is None else int(value)


OPTIONS: list[OptionSpec] = [
    OptionSpec("type", required=True, allowed=("jdbc",), description="'jdbc'"),
    OptionSpec("base-url", required=True, description="the server, without a database: 'jdbc:postgresql://host:5432'"),
    OptionSpec("default-database", required=True, description="the Postgres database USE CATALOG starts in"),
    OptionSpec("username", description="the user to connect as"),
    OptionSpec("password", secret=True, description="the user's password"),
]  # fmt: skip
declare_secret_keys(s.key for s in OPTIONS if s.secret)


class PostgresCatalog:
    """Flink's JDBC catalog over a Postgres server: the server's databases are the catalog's databases, and a
    table is named `schema.table` (`public` when the schema is left out), as Flink's PostgresCatalog names them:
    `SELECT * FROM pg.shop.\\`public.orders\\``. `spark` gives the Spark session whose driver connects."""

    def __init__(self, spark: Callable[[], "SparkSession"], base_url: str, default_database: str,
                 username: str | None, password: str | None, name: str = "jdbc") -> None:
        self.spark, self.base_url, self.default_database = spark, base_url.rstrip("/"), default_database
        self.username, self.password, self.name = username, password, name
        jdbc_client.check_url(self._url(default_database), name)

    @classmethod
    def from_options(cls, options: dict[str, str], spark: Callable[[], "SparkSession"], name: str = "jdbc") -> "PostgresCatalog":
        return cls(spark, options["base-url"], options["default-database"], options.get("username"),
                   options.get("password"), name)  # fmt: skip

    def _url(self, database: str) -> str:
        return f"{self.base_url}/{database}"

    def _in(self, database: str) -> JdbcCatalog:
        return JdbcCatalog(self.spark(), self._url(database), self.username, self.password, self.name)

    def databases(self) -> list[str]:
        rows = self._in(self.default_database)._query(
            "SELECT datname FROM pg_database WHERE NOT datistemplate AND datallowconn ORDER BY datname")
        return [r[0] for r in rows]

    def tables(self, database: str) -> list[str]:
        schemas = self._in(database)
        return [f"{schema}.{table}" for schema in schemas.databases() for table in schemas.tables(schema)]

    def table(self, database: str, name: str) -> TableDef | None:
        schema, _, table = name.rpartition(".")
        return self._in(database).table(schema or "public", table)
