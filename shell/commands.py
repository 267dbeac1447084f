"""The statements the shell understands, as a table: HELP is generated from it and the REPL completes from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandHelp:
    syntax: str
    description: str


COMMANDS: tuple[CommandHelp, ...] = (
    CommandHelp("CREATE [TEMPORARY] TABLE [IF NOT EXISTS] t (...) WITH (...)", "Register a topic, file or generator as a table."),
    CommandHelp("CREATE [TEMPORARY] VIEW v AS SELECT ...", "Name a query."),
    CommandHelp("DROP TABLE|VIEW [IF EXISTS] name", "Remove a table or view from the catalog."),
    CommandHelp("CREATE TABLE t WITH (...) AS SELECT ...", "Create a table with a query's columns and start a job filling it."),
    CommandHelp("ALTER TABLE t SET ('k' = 'v', ...)", "Change options of a table."),
    CommandHelp(
        "ALTER TABLE t ADD|MODIFY|DROP|RENAME|RESET ...",
        "Add, change, drop or rename columns, the key or the watermark; rename the table; reset options.",
    ),
    CommandHelp("ALTER VIEW v RENAME TO w | AS SELECT ...", "Rename a view or change its query."),
    CommandHelp("CREATE CATALOG c WITH ('type' = ...)", "Add a catalog: generic_in_memory, streamshell, pulsar or jdbc."),
    CommandHelp("USE CATALOG c | USE [c.]db", "Change the catalog or database that unqualified names are looked up in."),
    CommandHelp("CREATE DATABASE [c.]db | DROP DATABASE [c.]db [CASCADE]", "Add or remove a database."),
    CommandHelp("DROP CATALOG c | ALTER CATALOG c SET (...)", "Remove a catalog, or change its options."),
    CommandHelp(
        "SHOW CATALOGS|DATABASES|CURRENT CATALOG|CURRENT DATABASE",
        "List the catalogs or the databases; name the current ones.",
    ),
    CommandHelp("SHOW COLUMNS FROM t [[NOT] LIKE 'p%']", "List a table's columns (those whose names match)."),
    CommandHelp("DESCRIBE CATALOG [EXTENDED] c", "A catalog's type and comment; EXTENDED adds its options and databases."),
    CommandHelp("SELECT ...", "Run a continuous query and watch its result change."),
    CommandHelp("INSERT INTO t SELECT ...", "Start a job, in a process of its own, that keeps table t updated."),
    CommandHelp(
        "EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END",
        "Start several INSERTs as one job (one process; stopped, saved and resumed together).",
    ),
    CommandHelp("EXPLAIN SELECT ... | INSERT ...", "Show the engine path chosen, why, and Spark's plan."),
    CommandHelp(
        "SHOW TABLES|VIEWS|FUNCTIONS [FROM db] [[NOT] LIKE 'p%']",
        "List the catalog objects (those whose names match).",
    ),
    CommandHelp(
        "SHOW JOBS [[NOT] LIKE 'p%']",
        "List the jobs (those whose names match): status (RESTARTING, a stalled batch), rates, restarts, last failure.",
    ),
    CommandHelp("SHOW CREATE TABLE t", "Print the DDL of a table (secrets hidden)."),
    CommandHelp("DESCRIBE t", "Columns, types, key, watermark of a table."),
    CommandHelp(
        "CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] f AS 'module.function' LANGUAGE PYTHON",
        "Register a Python function (scalar, table or aggregate) for SQL; python.files ships its module.",
    ),
    CommandHelp("DROP [TEMPORARY] FUNCTION [IF EXISTS] f", "Remove a user function."),
    CommandHelp("DESCRIBE FUNCTION [EXTENDED] f", "A user function's kind, language, target and result type."),
    CommandHelp("SHOW ERRORS FOR t [LIMIT n]", "Records of t that did not decode, with position and reason."),
    CommandHelp("PRINT 'topic' [FROM BEGINNING] [LIMIT n] [WITH (...)]", "Peek at a topic's raw messages."),
    CommandHelp("DESCRIBE TOPIC 'topic' SAMPLE n [WITH (...)]", "Propose a CREATE TABLE from sampled messages."),
    CommandHelp("INSERT INTO t VALUES (...), (...)", "Write rows to a table's topic or files at once."),
    CommandHelp("DELETE FROM t WHERE key = ...", "Write a tombstone for each key named (upsert tables)."),
    CommandHelp("STOP JOB 'id' [WITH SAVEPOINT]", "Stop a running job; WITH SAVEPOINT keeps its state for RESUME JOB."),
    CommandHelp("RESUME JOB 'id'", "Continue a job stopped WITH SAVEPOINT (or FAILED) from its checkpoint."),
    CommandHelp("DESCRIBE JOB 'id'", "Everything about a job: statement, settings, Spark UI, metrics, failures."),
    CommandHelp("SET ['key' = 'value']", "List the session settings, or change one."),
    CommandHelp("RESET ['key']", "Reset one setting, or all of them, to the value the session started with."),
    CommandHelp("HELP", "Show this help."),
    CommandHelp("CLEAR", "Clear the terminal."),
    CommandHelp("QUIT | EXIT", "Leave the shell."),
)


def help_text(topic: str | None = None) -> str:
    chosen = [c for c in COMMANDS if topic is None or c.syntax.upper().startswith(topic.upper())] or list(COMMANDS)
    width = max(len(c.syntax) for c in chosen)
    lines = ["Statements end with ';'. Keys: Enter runs a complete statement, Ctrl-C cancels, Ctrl-D quits; in a "
             "live table PgUp/PgDn page, / searches, o opens a row, End follows, q stops.", ""]
    lines += [f"  {c.syntax:<{width}}  {c.description}" for c in chosen]
    return "\n".join(lines)
