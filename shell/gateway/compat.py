"""PostgreSQL's session commands that drivers and tools send on their own: BEGIN/COMMIT, `SET name TO value`,
`SHOW name`, DISCARD, DEALLOCATE.

Why it exists: psycopg wraps statements in BEGIN unless told otherwise, JDBC sends `SET extra_float_digits = 3`
and BEGIN when auto-commit is off, DBeaver asks `SHOW search_path`. These are not streamshell statements, and a
driver that gets an error for them does not connect. They are told apart from streamshell's own by their shape:
a PostgreSQL parameter is a bare word (`application_name`), a streamshell setting is quoted or has dots
(`SET 'table.dml-sync' = 'true'`), and streamshell's SHOW kinds are its own words.

streamshell has no transactions: each statement takes effect when it runs. BEGIN, COMMIT and ROLLBACK keep the
transaction status drivers track (a failed statement in a transaction makes the rest fail until ROLLBACK, as in
PostgreSQL), and a ROLLBACK after statements that changed something says that nothing was undone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shell import __version__
from shell.gateway.results import Outcome, rows_outcome

SERVER_VERSION = "15.0"
STREAMSHELL_SHOW_KINDS = {"TABLES", "VIEWS", "FUNCTIONS", "JOBS", "CATALOGS", "DATABASES", "COLUMNS", "CURRENT",
                          "CREATE", "ERRORS", "FULL"}  # fmt: skip

# reported to the client at start (ParameterStatus) and answered by SHOW / current_setting()
DEFAULT_PARAMETERS = {
    "server_version": SERVER_VERSION,
    "server_version_num": "150000",
    "server_encoding": "UTF8",
    "client_encoding": "UTF8",
    "DateStyle": "ISO, MDY",
    "IntervalStyle": "postgres",
    "TimeZone": "UTC",
    "integer_datetimes": "on",
    "standard_conforming_strings": "on",
    "is_superuser": "off",
    "application_name": "",
    "search_path": "",  # the connection sets it to its current database
    "default_transaction_read_only": "off",
    "in_hot_standby": "off",
    "extra_float_digits": "1",
    "transaction_isolation": "read committed",
    "default_transaction_isolation": "read committed",
    "statement_timeout": "0",
    "max_identifier_length": "63",
    "lc_messages": "C",
    "lc_collate": "C",
    "lc_ctype": "C",
    "bytea_output": "hex",
    "client_min_messages": "notice",
    "streamshell_version": __version__,
}
REPORTED = ("server_version", "server_encoding", "client_encoding", "DateStyle", "IntervalStyle", "TimeZone",
            "integer_datetimes", "standard_conforming_strings", "is_superuser", "application_name",
            "default_transaction_read_only", "in_hot_standby", "session_authorization")  # fmt: skip


@dataclass
class PgState:
    """A connection's PostgreSQL-side state: parameters, and the transaction status ReadyForQuery reports."""

    parameters: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PARAMETERS))
    status: str = "I"  # I idle, T in a transaction, E in a failed transaction
    changed_in_transaction: bool = False

    def get(self, name: str) -> str | None:
        for key, value in self.parameters.items():
            if key.lower() == name.lower():
                return value
        return None

    def put(self, name: str, value: str) -> str:
        for key in self.parameters:
            if key.lower() == name.lower():
                self.parameters[key] = value
                return key
        self.parameters[name.lower()] = value
        return name.lower()


WORD = r"[A-Za-z_][A-Za-z_0-9]*"
BEGIN = re.compile(r"(BEGIN|START\s+TRANSACTION)(\s+(WORK|TRANSACTION))?(\s+.*)?", re.I | re.S)
COMMIT = re.compile(r"(COMMIT|END)(\s+(WORK|TRANSACTION))?(\s+AND\s+NO\s+CHAIN)?", re.I)
ROLLBACK = re.compile(r"(ROLLBACK|ABORT)(\s+(WORK|TRANSACTION))?(\s+AND\s+NO\s+CHAIN)?", re.I)
SAVEPOINT = re.compile(r"(SAVEPOINT|RELEASE(\s+SAVEPOINT)?|ROLLBACK\s+(WORK\s+|TRANSACTION\s+)?TO(\s+SAVEPOINT)?)\s+" + WORD, re.I)
SET_PARAM = re.compile(rf"SET\s+(?:(SESSION|LOCAL)\s+)?({WORD})\s*(?:=|\s+TO\s+)\s*(.+)", re.I | re.S)
SET_TIMEZONE = re.compile(r"SET\s+(?:(?:SESSION|LOCAL)\s+)?TIME\s+ZONE\s+(.+)", re.I | re.S)
SET_TRANSACTION = re.compile(r"SET\s+(SESSION\s+CHARACTERISTICS\s+AS\s+)?TRANSACTION\s+.*", re.I | re.S)
SHOW_PARAM = re.compile(rf"SHOW\s+({WORD}(?:\s+ISOLATION\s+LEVEL)?)", re.I)
RESET_PARAM = re.compile(rf"RESET\s+({WORD})", re.I)
DISCARD = re.compile(r"DISCARD\s+(ALL|PLANS|SEQUENCES|TEMP|TEMPORARY)", re.I)
DEALLOCATE = re.compile(rf"DEALLOCATE\s+(PREPARE\s+)?({WORD}|ALL)", re.I)
CLOSE_CURSORS = re.compile(r"CLOSE\s+ALL|UNLISTEN\s+\*", re.I)


def stripped(sql: str) -> str:
    """The statement without leading comments, surrounding blanks and a final semicolon."""
    text = sql.strip()
    while True:
        if text.startswith("--"):
            text = text.partition("\n")[2].strip()
        elif text.startswith("/*") and "*/" in text:
            text = text.partition("*/")[2].strip()
        else:
            break
    return text.rstrip(";").strip()


def _value(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


def _done(tag: str) -> Outcome:
    return Outcome(None, tag=lambda n: tag)


def handle(sql: str, state: PgState, changed: list[str]) -> Outcome | None:
    """The answer to a PostgreSQL session command, or None when `sql` is not one. Parameters changed are
    appended to `changed` (the connection reports them with ParameterStatus)."""
    text = stripped(sql)
    if SAVEPOINT.fullmatch(text):
        return _done(text.split()[0].upper())
    if BEGIN.fullmatch(text):
        if state.status == "I":
            state.status, state.changed_in_transaction = "T", False
        return _done("BEGIN")
    if COMMIT.fullmatch(text):
        tag = "ROLLBACK" if state.status == "E" else "COMMIT"
        state.status = "I"
        return _done(tag)
    if ROLLBACK.fullmatch(text):
        outcome = _done("ROLLBACK")
        if state.changed_in_transaction:
            outcome.notices.append(("WARNING", "nothing was undone: each statement took effect when it ran "
                                               "(streamshell has no transactions)"))
        state.status, state.changed_in_transaction = "I", False
        return outcome
    if SET_TRANSACTION.fullmatch(text):
        return _done("SET")
    match = SET_TIMEZONE.fullmatch(text)
    if match:
        changed.append(state.put("TimeZone", _value(match.group(1))))
        return _done("SET")
    match = SET_PARAM.fullmatch(text)
    if match:
        changed.append(state.put(match.group(2), _value(match.group(3))))
        return _done("SET")
    match = SHOW_PARAM.fullmatch(text)
    if match and match.group(1).split()[0].upper() not in STREAMSHELL_SHOW_KINDS:
        name = "_".join(match.group(1).lower().split()[:2]).replace("_isolation", "_isolation")
        if name == "all":
            return rows_outcome(["name", "setting", "description"], [(k, v, "") for k, v in sorted(state.parameters.items())])
        if name == "transaction_isolation" or match.group(1).lower().startswith("transaction isolation"):
            name = "transaction_isolation"
        value = state.get(name)
        if value is None:
            return None  # not ours: streamshell's parser says what is wrong
        return rows_outcome([name], [(value,)])
    match = RESET_PARAM.fullmatch(text)
    if match and match.group(1).upper() != "ALL" and state.get(match.group(1)) is not None:
        changed.append(state.put(match.group(1), DEFAULT_PARAMETERS.get(match.group(1), "")))
        return _done("RESET")
    if DISCARD.fullmatch(text):
        return _done("DISCARD " + text.split()[1].upper())
    if DEALLOCATE.fullmatch(text):
        return _done("DEALLOCATE" + (" ALL" if text.split()[-1].upper() == "ALL" else ""))
    if CLOSE_CURSORS.fullmatch(text):
        return _done(" ".join(text.split()[:1]).upper() + (" ALL" if text.upper().startswith("CLOSE") else ""))
    return None
