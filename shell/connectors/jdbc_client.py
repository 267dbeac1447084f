"""A short-lived JDBC connection from Spark's driver, and PostgreSQL's failures in one line each.

Why it exists: the `jdbc` connector moves rows with Spark's JDBC reader and writer (on the executors), but some
work is a handful of SQL statements: checking that the table is there before a query starts, reading its real
column names, merging a staged batch into the target in one transaction, and the catalog's listings. Those run
here, over a connection opened through py4j in the driver's JVM with the driver class Spark itself loads: only
SQL text goes through it, never rows. A failure (wrong URL, server down, wrong password, missing table) becomes
one `ExecutionError` that names the table and what to do; the password is never part of it.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from shell.catalog.model import TableDef
from shell.errors import ExecutionError, OptionError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

POSTGRES_DRIVER = "org.postgresql.Driver"
URL_PREFIX = "jdbc:postgresql:"
CONNECT_TIMEOUT_S = "10"  # the driver's connectTimeout/loginTimeout: a host that does not answer fails in seconds


@dataclass(frozen=True)
class Endpoint:
    """Where a jdbc table lives and who connects: what every connection needs."""

    url: str
    user: str | None
    password: str | None
    driver: str = POSTGRES_DRIVER

    @classmethod
    def of(cls, table: TableDef) -> "Endpoint":
        options = table.options
        return cls(options["url"], options.get("username"), options.get("password"),
                   options.get("driver") or POSTGRES_DRIVER)  # fmt: skip

    def properties(self) -> dict[str, str]:
        """The driver's connection properties (Spark's JDBC options pass the same ones on to it)."""
        found = {"connectTimeout": CONNECT_TIMEOUT_S, "loginTimeout": CONNECT_TIMEOUT_S}
        if self.user is not None:
            found["user"] = self.user
        if self.password is not None:
            found["password"] = self.password
        return found

    @property
    def where(self) -> str:
        """host:port/database of the URL, for messages (never its parameters, which may hold a password)."""
        rest = self.url[len(URL_PREFIX):] if self.url.startswith(URL_PREFIX) else self.url
        return rest.removeprefix("//").split("?", 1)[0] or self.url.split("?", 1)[0]


def check_url(url: str, table: str) -> None:
    """OptionError unless `url` is a PostgreSQL JDBC URL (the only driver the shell ships)."""
    if not url.startswith(URL_PREFIX):
        raise OptionError(
            f"table '{table}': 'url' must be a PostgreSQL JDBC URL, got '{url.split('?', 1)[0]}'",
            hint="write 'jdbc:postgresql://host:5432/database' (PostgreSQL is the database the jdbc connector supports)",
        )


# ---- connections ------------------------------------------------------------------------------------------------


@contextmanager
def connection(spark: "SparkSession", endpoint: Endpoint, table: str) -> Iterator[object]:
    """An open java.sql.Connection (a py4j proxy), closed on leaving; failures explained for `table`."""
    context = spark.sparkContext
    jvm = context._jvm  # noqa: SLF001 - the driver's JVM: the only way to Java from PySpark
    try:
        loader = jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader()
        no_types = context._gateway.new_array(jvm.java.lang.Class, 0)  # noqa: SLF001
        no_args = context._gateway.new_array(jvm.java.lang.Object, 0)  # noqa: SLF001
        driver_class = jvm.java.lang.Class.forName(endpoint.driver, True, loader)
        driver = driver_class.getDeclaredConstructor(no_types).newInstance(no_args)
        props = jvm.java.util.Properties()
        for key, value in endpoint.properties().items():
            props.setProperty(key, value)
        conn = driver.connect(endpoint.url, props)
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        raise explained(exc, table, endpoint) from None
    if conn is None:  # the driver does not take this URL
        raise OptionError(f"table '{table}': the PostgreSQL driver does not accept the URL '{endpoint.where}'",
                          hint="write 'jdbc:postgresql://host:5432/database'")
    try:
        yield conn
    finally:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - closing a broken connection says nothing new
            pass


def column_names(conn: object, table_name: str) -> list[str]:
    """The table's columns as the database spells them (`SELECT * ... WHERE 1 = 0` reads no row)."""
    statement = conn.createStatement()
    try:
        meta = statement.executeQuery(f"SELECT * FROM {table_name} WHERE 1 = 0").getMetaData()
        return [meta.getColumnName(i) for i in range(1, meta.getColumnCount() + 1)]
    finally:
        statement.close()


def query(conn: object, sql: str) -> list[tuple]:
    """The rows of one query, as tuples of Java values converted by py4j (for small answers: listings, counts)."""
    statement = conn.createStatement()
    try:
        result = statement.executeQuery(sql)
        width = result.getMetaData().getColumnCount()
        rows = []
        while result.next():
            rows.append(tuple(result.getObject(i) for i in range(1, width + 1)))
        return rows
    finally:
        statement.close()


def run_in_transaction(conn: object, statements: list[str]) -> None:
    """Every statement, then one commit; on any failure a rollback, and the failure raised."""
    conn.setAutoCommit(False)
    statement = conn.createStatement()
    try:
        for sql in statements:
            statement.execute(sql)
        conn.commit()
    except Exception:
        try:
            conn.rollback()
        except Exception:  # noqa: BLE001 - the connection is gone; the first failure is the one to report
            pass
        raise
    finally:
        statement.close()


def existing_columns(spark: "SparkSession", table: TableDef) -> list[str]:
    """Connect and read the table's column names: the check every query and job of a jdbc table starts with."""
    endpoint = Endpoint.of(table)
    name = table.options["table-name"]
    with connection(spark, endpoint, table.name) as conn:
        try:
            return column_names(conn, name)
        except Exception as exc:  # noqa: BLE001
            raise explained(exc, table.name, endpoint, name) from None


# ---- failures ---------------------------------------------------------------------------------------------------

# (SQLSTATE or text that gives it away, message, hint): the first that matches explains the failure.
_KNOWN = (
    ("28P01|password authentication failed|no password was provided|authentication",
     "PostgreSQL refused the login of user '{user}' to {where}",
     "check the table's 'username' and 'password' options"),
    ("3D000|database \"[^\"]*\" does not exist",
     "database of {where} does not exist",
     "create it, or correct the database name at the end of 'url'"),
    ("42P01|relation \"[^\"]*\" does not exist",
     "table '{name}' does not exist in {where}",
     "create it in PostgreSQL (CREATE TABLE {name} ...), or correct 'table-name'"),
    ("42501|permission denied",
     "user '{user}' may not use table '{name}' in {where}",
     "GRANT the user SELECT (and INSERT, UPDATE, DELETE to write) on the table"),
    ("42703|column \"[^\"]*\" (of relation \"[^\"]*\" )?does not exist",
     "a column of table '{table}' is not in '{name}' in {where}",
     "declare the columns the PostgreSQL table has (same names)"),
    ("UnknownHostException|08001|08004|08006|Connection refused|connect timed out|attempt failed|Connection reset"
     "|terminating connection|SocketTimeoutException|No route to host|Network is unreachable",
     "cannot reach PostgreSQL at {where}",
     "is the server running and listening there? check the table's 'url'"),
)


def explained(exc: BaseException, table: str, endpoint: Endpoint, name: str | None = None) -> ExecutionError:
    """One line for a failure of jdbc table `table` (the database table `name`): what went wrong and what to do.
    Unknown failures keep the database's own first line; none of it shows the password."""
    texts = _texts(exc)
    fields = {"table": table, "name": name or table, "where": endpoint.where, "user": endpoint.user or ""}
    for pattern, message, hint in _KNOWN:
        if any(re.search(pattern, t) for t in texts):
            return ExecutionError(f"jdbc table '{table}': " + message.format(**fields), hint=hint.format(**fields))
    detail = next((_first_line(t) for t in texts if _first_line(t)), type(exc).__name__)
    if endpoint.password:
        detail = detail.replace(endpoint.password, "****")
    return ExecutionError(f"jdbc table '{table}': {detail}", hint=f"check the table's options ('url' is {endpoint.where})")


def _texts(exc: BaseException) -> list[str]:
    """SQLSTATEs and messages along the exception's Java cause chain (py4j) and its Python text."""
    found = [str(exc)]
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    seen = 0
    while java is not None and seen < 10:
        seen += 1
        try:
            state = java.getSQLState() if _is_sql_exception(java) else None
            found.append(f"{state or ''} {java.getClass().getName()}: {java.getMessage()}")
            java = java.getCause()
        except Exception:  # noqa: BLE001 - a proxy whose JVM is gone
            break
    return found


def _is_sql_exception(java: object) -> bool:
    try:
        return any(c.getName() == "java.sql.SQLException" for c in _superclasses(java.getClass()))
    except Exception:  # noqa: BLE001
        return False


def _superclasses(cls: object) -> Iterator[object]:
    while cls is not None:
        yield cls
        cls = cls.getSuperclass()


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "Traceback", "JVM stacktrace")):
            return re.sub(r"^An error occurred while calling [^.]*\.\s*:?\s*", "", line)
    return ""
