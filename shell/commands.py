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
    CommandHelp("ALTER TABLE t SET ('k' = 'v', ...)", "Change options of a table."),
    CommandHelp("SELECT ...", "Run a continuous query and watch its result change."),
    CommandHelp("INSERT INTO t SELECT ...", "Start a job, in a process of its own, that keeps table t updated."),
    CommandHelp(
        "EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END",
        "Start several INSERTs as one job (one process; stopped, saved and resumed together).",
    ),
    CommandHelp("EXPLAIN SELECT ... | INSERT ...", "Show the engine path chosen, why, and Spark's plan."),
    CommandHelp(
        "SHOW TABLES|VIEWS|FUNCTIONS|JOBS",
        "List catalog objects, or the jobs: status (RESTARTING, a stalled batch), rates, restarts, last failure.",
    ),
    CommandHelp("SHOW CREATE TABLE t", "Print the DDL of a table (secrets hidden)."),
    CommandHelp("DESCRIBE t", "Columns, types, key, watermark of a table."),
    CommandHelp("SHOW ERRORS FOR t [LIMIT n]", "Records of t that did not decode, with position and reason."),
    CommandHelp("PRINT 'topic' [FROM BEGINNING] [LIMIT n] [WITH (...)]", "Peek at a topic's raw messages."),
    CommandHelp("DESCRIBE TOPIC 'topic' SAMPLE n [WITH (...)]", "Propose a CREATE TABLE from sampled messages."),
    CommandHelp("INSERT INTO t VALUES (...), (...)", "Write rows to a table's topic or files at once."),
    CommandHelp("DELETE FROM t WHERE key = ...", "Write a tombstone for each key named (upsert tables)."),
    CommandHelp("STOP JOB 'id' [WITH SAVEPOINT]", "Stop a running job; WITH SAVEPOINT keeps its state for RESUME JOB."),
    CommandHelp("RESUME JOB 'id'", "Continue a job stopped WITH SAVEPOINT (or FAILED) from its checkpoint."),
    CommandHelp("DESCRIBE JOB 'id'", "Everything about a job: statement, settings, Spark UI, metrics, failures."),
    CommandHelp("SET ['key' = 'value']", "List the session settings, or change one."),
    CommandHelp("RESET ['key']", "Reset one setting, or all of them, to the default."),
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
