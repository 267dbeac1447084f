"""One client of the gateway, from its startup packet to its Terminate: a streamshell session on a socket.

Why it exists: this is where the protocol's state machine meets the session. It answers the startup (TLS when
the gateway has a certificate, SCRAM when it needs a password), then runs simple queries and the extended
protocol's Parse/Bind/Describe/Execute/Sync, each statement through the connection's own `Session` (so a SET stays
with its client), keeps its cursors (DECLARE/FETCH/CLOSE over a live query), and sends results as
`results.Outcome`s. While a query streams it watches for the client's
cancel and for the client going away, and stops the Spark query behind it either way.

Anything a client sends that breaks the protocol ends that client alone (08P01); no exception leaves `run`.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import select
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

from shell.errors import StreamshellError
from shell.secrets import redact
from shell.gateway import compat, freshness, params, pgcatalog, pgtypes, protocol, sqlstate
from shell.gateway.protocol import ClientGone, ColumnDescription, MessageReader, ProtocolError
from shell.gateway.results import WITH_EFFECTS, Cancelled, Outcome, copy_line, describe, to_outcome
from shell.gateway.scram import MECHANISM, AuthFailed, ScramExchange
from shell.sql import statements as st
from shell.sql.parse import parse_script
from shell.sql.split import split_statements

log = logging.getLogger("streamshell.gateway")
TRACE = bool(os.environ.get("STREAMSHELL_GATEWAY_TRACE"))  # every message in and out, on the gateway's stderr

COPY_TO_STDOUT = re.compile(r"\s*COPY\s*\((?P<query>.*)\)\s*TO\s+STDOUT\s*(?P<options>.*?)\s*;?\s*", re.I | re.S)
IDENTIFIER = r"(?:[A-Za-z_][A-Za-z0-9_$]*|\"(?:[^\"]|\"\")+\"|`(?:[^`]|``)+`)"
# COPY t [(a, b)] TO STDOUT: a table's (or view's) rows, as COPY (SELECT a, b FROM t) TO STDOUT
COPY_TABLE_TO_STDOUT = re.compile(rf"\s*COPY\s+(?P<table>{IDENTIFIER}(?:\s*\.\s*{IDENTIFIER}){{0,2}})\s*"
                                  r"(?:\((?P<columns>[^()]*)\)\s*)?TO\s+STDOUT\b\s*(?P<options>.*?)\s*;?\s*", re.I | re.S)
COPY_OPTIONS = re.compile(r"(WITH\s*)?(\(\s*FORMAT\s+'?text'?\s*\)|FORMAT\s+'?text'?)?", re.I)
BLANK = re.compile(r"(\s|;|--[^\n]*(\n|$)|/\*.*?\*/)*", re.S)
NAME = r"(?P<name>[A-Za-z_][A-Za-z0-9_]*|\"[^\"]+\")"
DECLARE = re.compile(rf"\s*DECLARE\s+{NAME}\s+(BINARY\s+)?((INSENSITIVE|ASENSITIVE|NO\s+SCROLL)\s+)*CURSOR\s+"
                     r"((WITH|WITHOUT)\s+HOLD\s+)?FOR\s+(?P<query>.*?)\s*;?\s*", re.I | re.S)
FETCH = re.compile(rf"\s*FETCH\s+((?P<count>\d+|ALL|NEXT)\s+|FORWARD\s+(?P<forward>\d+|ALL)\s+|FORWARD\s+)?((FROM|IN)\s+)?{NAME}\s*;?\s*",
                   re.I | re.S)
CLOSE_CURSOR = re.compile(rf"\s*CLOSE\s+{NAME}\s*;?\s*", re.I)


class Terminating(Exception):
    """The gateway is stopping (SIGINT, SIGTERM): the client is told as PostgreSQL tells it (FATAL 57P01)."""


class StatementFailed(Exception):
    """An error to send as ErrorResponse: its fields are ready."""

    def __init__(self, fields: dict[str, str]):
        super().__init__(fields.get("M"))
        self.fields = fields


@dataclass
class Prepared:
    sql: str
    oids: list[int]


@dataclass
class Portal:
    sql: str
    formats: list[int]
    outcome: Outcome | None = None
    statement: st.Statement | None = None
    sent: int = 0
    done: bool = False
    has_effects: bool = False
    parameters: list[str | None] = field(default_factory=list)  # the text parameters bound, to name one in an error


@dataclass
class Running:
    """What the connection runs now, for the cancel request's thread."""

    outcome: Outcome | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class Connection:
    def __init__(self, server: Any, sock: socket.socket, address: Any, pid: int, secret: int):
        self.server = server
        self.sock = sock
        self.address = address
        self.pid, self.secret = pid, secret
        self.reader = MessageReader(self._recv, server.config.max_message)
        self.out = bytearray()
        self.session = None
        self.pg = compat.PgState()
        self.user = ""
        self.prepared: dict[str, Prepared] = {}
        self.cursors: dict[str, Outcome] = {}  # DECLARE ... CURSOR FOR <query>: read with FETCH until CLOSE
        self.portals: dict[str, Portal] = {}
        self.cancel_requested = threading.Event()
        self.terminating = threading.Event()  # the gateway stops: the client gets 57P01 and the connection ends
        self.thread: threading.Thread | None = None
        self.running = Running()
        self.skipping = False  # after an error in the extended protocol: until Sync
        self.parameters: list[str | None] = []  # the running portal's text parameters (an error may name one)
        self.initial_parameters: dict[str, str] = {}
        self.initial_settings: dict[str, str] = {}

    # bytes in and out ------------------------------------------------------------------------------------------

    def _recv(self, n: int) -> bytes:
        try:
            return self.sock.recv(n)
        except (ConnectionError, OSError):
            return b""

    def send(self, data: bytes) -> None:
        self.out += data

    def flush(self) -> None:
        if not self.out:
            return
        if TRACE:
            log.warning("%s -> %s", self.pid, redact(repr(bytes(self.out[:300]))))
        try:
            self.sock.sendall(self.out)
        except (ConnectionError, OSError) as exc:
            raise ClientGone(f"cannot write to the client: {exc}") from None
        finally:
            self.out.clear()

    # the whole life of a connection ----------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self.sock.settimeout(self.server.config.authentication_timeout_s)  # a silent client is let go
            if not self.startup():
                return
            self.sock.settimeout(None)  # a session may sit idle as long as its client likes
            self.loop()
        except (ClientGone, Terminating):
            if self.terminating.is_set():
                self._last_words(sqlstate.plain_error(sqlstate.ADMIN_SHUTDOWN, "terminating connection due to administrator command",
                                                      severity="FATAL"))
        except ProtocolError as exc:
            self.server.metrics.count("protocol_errors_total")
            self._last_words(sqlstate.plain_error(sqlstate.PROTOCOL_VIOLATION, str(exc), severity="FATAL"))
        except AuthFailed as exc:
            self.server.metrics.count("authentication_failures_total")
            self._last_words(sqlstate.plain_error(sqlstate.INVALID_PASSWORD, f'password authentication failed for user "{self.user}"'
                                                  if "password" in str(exc) else str(exc), severity="FATAL"))
        except StreamshellError as exc:  # the session could not be made (a broken home)
            self._last_words(sqlstate.error_fields(exc, severity="FATAL"))
        except Exception as exc:  # noqa: BLE001 - a bug ends this client with a clear line, never the gateway
            log.exception("connection %s failed", self.address)
            self._last_words(sqlstate.plain_error(sqlstate.INTERNAL, f"internal error: {exc!r}", severity="FATAL"))
        finally:
            self.close()

    def _last_words(self, fields: dict[str, str]) -> None:
        try:
            self.out.clear()
            self.send(protocol.error_response(fields))
            self.flush()
        except ClientGone:
            pass

    def close(self) -> None:
        for cursor in self.cursors.values():
            cursor.close()
        for portal in self.portals.values():
            if portal.outcome is not None:
                portal.outcome.close()
        self.portals.clear()
        if self.session is not None:
            try:
                self.session.close()  # its SELECTs; detached jobs go on
            except Exception:  # noqa: BLE001 - closing must not fail the gateway
                log.exception("closing the session of %s", self.address)
        try:
            self.sock.close()
        except OSError:
            pass
        self.server.forget(self)

    # startup ---------------------------------------------------------------------------------------------------

    def startup(self) -> bool:
        """Answer the startup packets; False for a cancel request (which has no session)."""
        first = self.reader.startup()
        while first.code in (protocol.SSL_REQUEST, protocol.GSSENC_REQUEST):
            if first.code == protocol.SSL_REQUEST and self.server.tls is not None:
                self.sock.sendall(b"S")
                if self.reader.buffered():
                    raise ProtocolError("data sent before the TLS handshake")
                self.sock = self.server.tls.wrap_socket(self.sock, server_side=True)
            else:
                self.sock.sendall(b"N")
            first = self.reader.startup()
        if first.code == protocol.CANCEL_REQUEST:
            self.server.cancel(first.cancel_pid, first.cancel_key)
            return False
        self.user = first.params.get("user", "")
        if not self.user:
            raise ProtocolError("no user name in the startup packet")
        if self.server.config.tls_required and self.server.tls is not None and not hasattr(self.sock, "cipher"):
            raise AuthFailed("this gateway takes TLS connections only (sslmode=require)")
        if self.server.verifier is not None:
            self.authenticate()
        self.send(protocol.authentication(0))
        self.session = self.server.new_session()
        for warning in self.session.warnings:
            self.send(protocol.notice_response(sqlstate.notice(warning, "WARNING")))
        self.use_database(first.params.get("database", ""))
        self.pg.parameters["search_path"] = self.session.catalog.current_database
        self.pg.parameters["session_authorization"] = self.user
        if first.params.get("application_name"):
            self.pg.parameters["application_name"] = first.params["application_name"]
        for name in compat.REPORTED:
            self.send(protocol.parameter_status(name, self.pg.parameters.get(name, "")))
        self.initial_parameters = dict(self.pg.parameters)  # what DISCARD ALL goes back to
        self.initial_settings = dict(self.session.settings.values)
        self.send(protocol.backend_key_data(self.pid, self.secret))
        self.send(protocol.ready_for_query(self.pg.status))
        self.flush()
        return True

    def discard_all(self) -> list[str]:
        """DISCARD ALL (what connection pools send before handing a connection to the next client): the connection
        is as it was when it had just connected: no cursors (closed by the caller), no prepared statements, its
        PostgreSQL parameters and streamshell settings as at the start (those SET since are gone), its search path's
        database current again. The parameters that changed, to report."""
        self.prepared.clear()
        changed = [name for name, value in self.pg.parameters.items() if self.initial_parameters.get(name) != value]
        self.pg.parameters.clear()
        self.pg.parameters.update(self.initial_parameters)
        self.session.settings.values.clear()
        self.session.settings.values.update(self.initial_settings)
        return changed + ["search_path"]

    def use_database(self, name: str) -> None:
        """The startup's database name: a catalog's name makes it current (USE CATALOG), a database's of the
        current catalog too (USE); any other name (`streamshell`, the user's name psql sends) selects nothing."""
        catalogs = self.session.catalog
        if not name or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            return
        if name.lower() in (c.lower() for c in catalogs.catalog_names()):
            statement = f"USE CATALOG `{name}`"
        elif name.lower() != catalogs.current_database.lower() and name.lower() in (d.lower() for d in catalogs.databases()):
            statement = f"USE `{name}`"
        else:
            return
        try:
            (parsed,) = parse_script(statement)
            self.session.execute(parsed)
        except StreamshellError as exc:  # an external catalog that cannot be opened: the connection goes on
            self.send(protocol.notice_response(sqlstate.notice(f"database {name}: {exc.message}", "WARNING")))

    def follow_search_path(self) -> None:
        """`SET search_path = x` (DBeaver's choice of a schema): the first database it names that the current catalog
        has becomes current, as USE does; names it does not have are left, as PostgreSQL leaves missing schemas."""
        catalogs = self.session.catalog
        for part in self.pg.parameters.get("search_path", "").split(","):
            name = part.strip().strip('"')
            if name and name != "$user" and name.lower() in (d.lower() for d in catalogs.databases()):
                if name.lower() != catalogs.current_database.lower():
                    (parsed,) = parse_script(f"USE `{name}`")
                    self.session.execute(parsed)
                return

    def authenticate(self) -> None:
        self.send(protocol.authentication(10, protocol.cstr(MECHANISM) + b"\0"))
        self.flush()
        kind, body = self.reader.message()
        if kind != b"p":
            raise ProtocolError("expected a SASL initial response")
        if body.cstring() != MECHANISM:
            raise AuthFailed("unsupported SASL mechanism: only SCRAM-SHA-256 is offered")
        length = body.int32()
        exchange = ScramExchange(self.server.verifier)
        self.send(protocol.authentication(11, exchange.first(body.raw(length) if length >= 0 else b"")))
        self.flush()
        kind, body = self.reader.message()
        if kind != b"p":
            raise ProtocolError("expected a SASL response")
        self.send(protocol.authentication(12, exchange.final(body.rest())))

    # the query loop --------------------------------------------------------------------------------------------

    def loop(self) -> None:
        handlers = {b"Q": self.simple_query, b"P": self.parse, b"B": self.bind, b"D": self.describe,
                    b"E": self.execute, b"C": self.close_object, b"S": self.sync, b"H": lambda body: self.flush()}  # fmt: skip
        while True:
            kind, body = self.reader.message()
            if TRACE:
                log.warning("%s <- %r %s", self.pid, kind, redact(repr(body.data[:100_000])))
            if kind == b"X":
                return
            if kind in (b"d", b"c", b"f"):  # copy-in data outside a COPY: ignored, as PostgreSQL does
                continue
            handler = handlers.get(kind)
            if handler is None:
                raise ProtocolError(f"unexpected message type {kind!r}")
            if self.skipping and kind not in (b"S", b"Q"):
                continue
            if handler(body) == "quit":
                return

    def check(self) -> None:
        """Called while rows are being made: send what is ready, stop on a cancel or when the client is gone."""
        self.flush()
        if self.terminating.is_set():
            raise Terminating()
        if self.cancel_requested.is_set():
            raise Cancelled()
        if self.reader.buffer[:1] == b"X":
            raise ClientGone("the client ended the connection")
        poller = select.poll()  # not select(): it fails past 1,024 open descriptors
        poller.register(self.sock, select.POLLIN | select.POLLHUP | select.POLLERR)
        if poller.poll(0):
            data = self._recv(65536)
            if not data:
                raise ClientGone("the client closed the connection")
            self.reader.buffer += data  # its next messages, read after this statement

    def terminate(self) -> None:
        """From the thread that stops the gateway: stop what runs, and wake a connection waiting for its client's
        next message (its socket's reading side is shut), so that it tells its client why it ends (57P01)."""
        self.terminating.set()
        self.cancel()
        try:
            socket.socket.shutdown(self.sock, socket.SHUT_RD)  # the plain socket's: a TLS one keeps its session to write on
        except OSError:
            pass

    def cancel(self) -> None:
        """From the cancel request's thread: stop the running statement (a query, or a live stream)."""
        self.cancel_requested.set()
        with self.running.lock:
            if self.running.outcome is not None:
                self.running.outcome.cancel()

    # statements ------------------------------------------------------------------------------------------------

    def outcomes(self, sql: str, single: bool = False) -> Iterator[Outcome]:
        """The outcome of each statement of `sql`, each run when the one before it has been sent. A query that mixes
        PostgreSQL's own commands (SET, BEGIN, ...), cursors, COPY or catalog queries with streamshell statements
        (`SET extra_float_digits = 3; SHOW TABLES`) is run statement by statement, each answered by its kind; each
        keeps its place in the text, so an error's position is still the query's."""
        if not single:
            pieces = split_statements(sql)
            if len(pieces) > 1 and any(self.answered_apart(p.text) for p in pieces):
                for piece in pieces:
                    yield from self.outcomes(re.sub(r"[^\r\n]", " ", sql[:piece.start]) + sql[piece.start:piece.end])
                return
        changed: list[str] = []
        answer = compat.handle(sql, self.pg, changed)
        if answer is not None and answer.tag(0) in ("CLOSE ALL", "DISCARD ALL"):
            for cursor in self.cursors.values():
                cursor.close()
            self.cursors.clear()
        if answer is not None and answer.tag(0) == "DISCARD ALL":
            changed += self.discard_all()
        if answer is not None and answer.tag(0).startswith("DEALLOCATE"):
            name = compat.stripped(sql).split()[-1]
            if name.upper() == "ALL":
                self.prepared.clear()
            else:
                for key in (name[1:-1], ) if name.startswith('"') else (name, name.lower()):
                    self.prepared.pop(key, None)
        if answer is not None:
            if "search_path" in changed:
                self.follow_search_path()
            for name in changed:
                if name in compat.REPORTED:
                    self.send(protocol.parameter_status(name, self.pg.parameters.get(name, "")))
            yield answer
            return
        if self.pg.status == "E":
            raise StatementFailed(sqlstate.plain_error(
                sqlstate.IN_FAILED_TRANSACTION, "current transaction is aborted, commands ignored until end of transaction block"))
        cursor = self.cursor_outcome(sql)
        if cursor is not None:
            yield cursor
            return
        freshness.refresh(self.session.catalog)  # tables other clients saved since this one connected
        copy = COPY_TO_STDOUT.fullmatch(sql)
        if copy is not None:
            yield self.copy_outcome(sql, copy)
            return
        copy = COPY_TABLE_TO_STDOUT.fullmatch(sql)
        if copy is not None:
            yield self.copy_table_outcome(copy)
            return
        if pgcatalog.is_catalog_query(sql):
            yield pgcatalog.answer(sql, self.session, self.pg, self.user)
            return
        statements = self.parse_statements(sql)
        if single and len(statements) > 1:
            raise StatementFailed(sqlstate.plain_error(sqlstate.SYNTAX, "cannot insert multiple commands into a prepared statement"))
        for statement in statements:
            yield self.run_statement(statement, sql)

    def parse_statements(self, sql: str, source: str | None = None) -> list[st.Statement]:
        try:
            return parse_script(sql)
        except StreamshellError as exc:
            raise StatementFailed(sqlstate.error_fields(exc, source or sql)) from None

    def run_statement(self, statement: st.Statement, source: str, copy: bool = False) -> Outcome:
        session = self.session
        try:
            if session.needs_spark(statement):
                session.start_spark()
            result = session.execute(statement)
        except StreamshellError as exc:  # positioned only where the error is (a runtime failure has no position)
            raise StatementFailed(sqlstate.error_fields(exc, source)) from None
        if isinstance(statement, WITH_EFFECTS) and self.pg.status == "T":
            self.pg.changed_in_transaction = True
        if isinstance(statement, (st.Use, st.UseCatalog)):  # PostgreSQL's search_path names the current database
            self.pg.parameters["search_path"] = session.catalog.current_database
        return to_outcome(statement, result, self.check, copy)

    def cursor_outcome(self, sql: str) -> Outcome | None:
        """DECLARE c CURSOR FOR <query>, FETCH [n | ALL] [FROM] c, CLOSE c (None: `sql` is none of them). A cursor
        over a live query hands out its changes (`op` first) as they come: FETCH n waits for n of them."""
        declare = DECLARE.fullmatch(sql)
        if declare is not None:
            name = _cursor_name(declare.group("name"))
            if name in self.cursors:
                raise StatementFailed(sqlstate.plain_error("42P03", f'cursor "{name}" already exists'))
            start, end = declare.span("query")
            masked = re.sub(r"[^\r\n]", " ", sql[:start]) + sql[start:end]
            statements = self.parse_statements(masked, sql)
            if len(statements) != 1 or not isinstance(statements[0], st.Select):
                raise StatementFailed(sqlstate.plain_error(sqlstate.FEATURE_NOT_SUPPORTED, "DECLARE ... CURSOR FOR takes one SELECT"))
            freshness.refresh(self.session.catalog)
            self.cursors[name] = self.run_statement(statements[0], sql)
            return Outcome(None, tag=lambda n: "DECLARE CURSOR")
        fetch = FETCH.fullmatch(sql)
        if fetch is not None:
            name = _cursor_name(fetch.group("name"))
            cursor = self.cursors.get(name)
            if cursor is None:
                raise StatementFailed(sqlstate.plain_error("34000", f'cursor "{name}" does not exist'))
            count = (fetch.group("count") or fetch.group("forward") or "1").upper()
            rows = cursor.rows if count == "ALL" else itertools.islice(cursor.rows, 1 if count == "NEXT" else int(count))
            return Outcome(cursor.columns, rows, tag=lambda n: f"FETCH {n}", reading=cursor.stream)
        close = CLOSE_CURSOR.fullmatch(sql)
        if close is not None and close.group("name").upper() != "ALL":
            name = _cursor_name(close.group("name"))
            cursor = self.cursors.pop(name, None)
            if cursor is None:
                raise StatementFailed(sqlstate.plain_error("34000", f'cursor "{name}" does not exist'))
            cursor.close()
            return Outcome(None, tag=lambda n: "CLOSE CURSOR")
        return None

    def copy_outcome(self, sql: str, match: re.Match) -> Outcome:
        self.copy_options(match)
        start, end = match.span("query")
        masked = re.sub(r"[^\r\n]", " ", sql[:start]) + sql[start:end]  # positions stay those of the whole text
        statements = self.parse_statements(masked, sql)
        if len(statements) != 1 or not isinstance(statements[0], st.Select):
            raise StatementFailed(sqlstate.plain_error(sqlstate.FEATURE_NOT_SUPPORTED, "COPY (...) TO STDOUT takes one SELECT"))
        return self.run_statement(statements[0], sql, copy=True)

    def copy_table_outcome(self, match: re.Match) -> Outcome:
        """`COPY t [(a, b)] TO STDOUT` runs as `COPY (SELECT a, b FROM t) TO STDOUT`. An error's position in that
        query is moved back onto the table's or the columns' place in the COPY's text."""
        self.copy_options(match)
        pieces: list[tuple[int, int, int]] = []  # (start in the query, start in the COPY, length)
        query = "SELECT "
        columns = match.group("columns")
        if columns is not None and columns.strip():
            pieces.append((len(query), match.start("columns"), len(columns)))
            query += _backquoted(columns)
        else:
            query += "*"
        query += " FROM "
        pieces.append((len(query), match.start("table"), len(match.group("table"))))
        query += _backquoted(match.group("table"))
        try:
            (statement,) = self.parse_statements(query)
            return self.run_statement(statement, query, copy=True)
        except StatementFailed as exc:
            fields = dict(exc.fields)
            at = int(fields.pop("P", "0")) - 1
            for start, original, length in pieces:
                if start <= at <= start + length:
                    fields["P"] = str(original + at - start + 1)
            raise StatementFailed(fields) from None

    def copy_options(self, match: re.Match) -> None:
        if not COPY_OPTIONS.fullmatch(match.group("options")):
            raise StatementFailed(sqlstate.plain_error(
                sqlstate.FEATURE_NOT_SUPPORTED, f"COPY option {match.group('options')[:60]!r} is not supported",
                hint="COPY (<query>) TO STDOUT writes text format, one change per line: the row kind, then the columns"))

    # sending an outcome ----------------------------------------------------------------------------------------

    def send_rows(self, outcome: Outcome, formats: list[int], limit: int = 0, already: int = 0) -> tuple[int, bool]:
        """Send up to `limit` rows (all when 0); (rows sent in all, whether the rows ended)."""
        columns = outcome.columns or []
        kinds = [_format(formats, i) for i in range(len(columns))]
        sent = already
        with self.running.lock:
            self.running.outcome = outcome
        try:
            for row in outcome.rows:
                if outcome.copy:
                    self.send(protocol.copy_data(copy_line(row)))
                else:
                    self.send(protocol.data_row(_encode(row, columns, kinds)))
                sent += 1
                self.server.metrics.count("rows_sent_total")
                if len(self.out) > 65536:
                    self.flush()
                if limit and sent - already >= limit:
                    return sent, False
            return sent, True
        finally:
            with self.running.lock:
                self.running.outcome = None

    def finish(self, outcome: Outcome, sent: int) -> None:
        if outcome.copy:
            self.send(protocol.COPY_DONE)
        self.send(protocol.command_complete(outcome.tag(sent)))
        for severity, text in outcome.notices:
            self.send(protocol.notice_response(sqlstate.notice(text, severity)))
        for text in outcome.notes_later():
            self.send(protocol.notice_response(sqlstate.notice(text, "WARNING")))

    def fail(self, exc: BaseException, sql: str) -> None:
        """The statement failed: ErrorResponse, and the transaction (if any) is failed."""
        if self.terminating.is_set():
            raise Terminating() from None  # not the statement's error: the whole connection ends (57P01)
        if isinstance(exc, StatementFailed):
            fields = exc.fields
        elif isinstance(exc, Cancelled):
            fields = sqlstate.plain_error(sqlstate.QUERY_CANCELED, "canceling statement due to user request")
        elif isinstance(exc, StreamshellError):
            fields = sqlstate.error_fields(exc, sql)
        elif isinstance(exc, params.ParameterError):
            fields = sqlstate.plain_error(exc.sqlstate, str(exc), hint=exc.hint)
        elif isinstance(exc, pgtypes.BinaryUnsupported):
            fields = sqlstate.plain_error(sqlstate.FEATURE_NOT_SUPPORTED, str(exc), hint="ask for this column in text format")
        else:
            log.exception("statement failed: %s", sql[:200])
            fields = sqlstate.plain_error(sqlstate.INTERNAL, f"internal error: {exc!r}")
        if fields.get("C") == sqlstate.INVALID_TEXT_REPRESENTATION and self.parameters:
            fields = sqlstate.about_parameter(fields, self.parameters)
        self.server.metrics.count("errors_total")
        self.send(protocol.error_response(fields))
        if self.pg.status == "T":
            self.pg.status = "E"

    def _run_guarded(self, work, sql: str) -> str | None:  # noqa: ANN001 - a callable
        self.server.metrics.query_started()
        try:
            return work()
        except (ClientGone, ProtocolError, AuthFailed, Terminating):
            raise
        except Exception as exc:  # noqa: BLE001 - every failure of a statement is an ErrorResponse
            self.fail(exc, sql)
            return "failed"
        finally:
            self.server.metrics.query_ended()

    # simple query ----------------------------------------------------------------------------------------------

    def simple_query(self, body: protocol.Fields) -> str | None:
        sql = body.cstring()
        self.skipping = False
        self.parameters = []
        self.cancel_requested.clear()
        quit_now = False

        def work() -> None:
            nonlocal quit_now
            if BLANK.fullmatch(sql):
                self.send(protocol.EMPTY_QUERY)
                return
            for outcome in self.outcomes(sql):
                try:
                    if outcome.copy:
                        self.send(protocol.copy_out_response(len(outcome.columns or [])))
                    elif outcome.columns is not None:
                        self.send(protocol.row_description(outcome.columns))
                    sent, _ = self.send_rows(outcome, [])
                    self.finish(outcome, sent)
                    quit_now = quit_now or outcome.quit
                finally:
                    outcome.close()

        self._run_guarded(work, sql)
        self.send(protocol.ready_for_query(self.pg.status))
        self.flush()
        return "quit" if quit_now else None

    # extended query --------------------------------------------------------------------------------------------

    def _failing(self, work, sql: str = "") -> None:  # noqa: ANN001 - a callable
        if self._run_guarded(work, sql) == "failed":
            self.skipping = True

    def parse(self, body: protocol.Fields) -> None:
        name, sql = body.cstring(), body.cstring()
        oids = [body.uint32() for _ in range(body.count(4))]
        self.prepared[name] = Prepared(sql, oids)
        self.send(protocol.PARSE_COMPLETE)

    def bind(self, body: protocol.Fields) -> None:
        portal_name, name = body.cstring(), body.cstring()
        formats = [body.int16() for _ in range(body.count(2))]
        values = []
        for _ in range(body.count(4)):
            length = body.int32()
            values.append(None if length == -1 else body.raw(length))
        result_formats = [body.int16() for _ in range(body.count(2))]
        prepared = self.prepared.get(name)
        self.cancel_requested.clear()

        def work() -> None:
            if prepared is None:
                raise StatementFailed(sqlstate.plain_error("26000", f'prepared statement "{name}" does not exist'))
            oids = prepared.oids + [0] * (len(values) - len(prepared.oids))
            literals = []
            for i, value in enumerate(values):
                try:
                    literals.append(params.literal(value, oids[i], _format(formats, i) == 1))
                except params.ParameterError as exc:
                    raise exc.about(i + 1) from None
            sql = params.substitute(prepared.sql, literals) if values else prepared.sql
            old = self.portals.pop(portal_name, None)
            if old is not None and old.outcome is not None:
                old.outcome.close()
            self.portals[portal_name] = Portal(sql, result_formats, parameters=[
                None if v is None or _format(formats, i) == 1 else v.decode("utf-8", "replace") for i, v in enumerate(values)])
            self.send(protocol.BIND_COMPLETE)

        self._failing(work, prepared.sql if prepared else "")

    def describe(self, body: protocol.Fields) -> None:
        kind, name = body.byte(), body.cstring()

        def work() -> None:
            if kind == b"S":
                prepared = self.prepared.get(name)
                if prepared is None:
                    raise StatementFailed(sqlstate.plain_error("26000", f'prepared statement "{name}" does not exist'))
                count = max(params.placeholders(prepared.sql), len(prepared.oids))
                oids = [(prepared.oids[i] if i < len(prepared.oids) and prepared.oids[i] else pgtypes.TEXT) for i in range(count)]
                self.send(protocol.parameter_description(oids))
                columns = self.statement_columns(params.substitute(prepared.sql, ["NULL"] * count) if count else prepared.sql)
                self.send(protocol.row_description(columns) if columns is not None else protocol.NO_DATA)
                return
            if kind != b"P":
                raise ProtocolError(f"Describe of {kind!r}: expected S or P")
            portal = self.portals.get(name)
            if portal is None:
                raise StatementFailed(sqlstate.plain_error("34000", f'portal "{name}" does not exist'))
            self.parameters = portal.parameters
            self.start_portal(portal, early=True)
            columns = portal.outcome.columns if portal.outcome is not None else None
            if columns is None:
                self.send(protocol.NO_DATA)
            else:
                self.send(protocol.row_description([_with_format(c, _format(portal.formats, i)) for i, c in enumerate(columns)]))

        self._failing(work, "")

    def answered_apart(self, sql: str) -> bool:
        """Whether one statement is answered by the gateway itself rather than run by streamshell's session."""
        return self.kind_of(sql) != "statement" or any(r.fullmatch(sql) for r in (DECLARE, FETCH, CLOSE_CURSOR))

    def kind_of(self, sql: str) -> str:
        """How `sql` is answered: 'session' (a PostgreSQL session command), 'copy', 'catalog', or 'statement'."""
        if compat.handle(sql, compat.PgState(parameters=dict(self.pg.parameters), status=self.pg.status), []) is not None:
            return "session"  # answered on a copy of the state: the real one changes when it runs
        if COPY_TO_STDOUT.fullmatch(sql) or COPY_TABLE_TO_STDOUT.fullmatch(sql):
            return "copy"
        return "catalog" if pgcatalog.is_catalog_query(sql) else "statement"

    def statement_columns(self, sql: str) -> list[ColumnDescription] | None:
        """The columns a prepared statement will return, without running anything that has effects."""
        kind = self.kind_of(sql)
        if kind == "session":
            answer = compat.handle(sql, compat.PgState(parameters=dict(self.pg.parameters)), [])
            return answer.columns if answer else None
        if kind == "copy":
            return None
        freshness.refresh(self.session.catalog)
        if kind == "catalog":
            return pgcatalog.answer(sql, self.session, self.pg, self.user).columns
        statements = self.parse_statements(sql)
        if len(statements) != 1 or isinstance(statements[0], WITH_EFFECTS):
            return None
        statement = statements[0]
        if isinstance(statement, st.Select):  # its columns from Spark's analysis of the plan; nothing starts
            from shell.engine.schema import result_columns
            from shell.functions import calls as function_calls
            from shell.planner.user_aggregates import plan_query

            self.session.start_spark()
            with function_calls.active(self.session.functions):  # its user functions, as the session's own run
                plan = plan_query(statement.query, self.session.catalog, self.session.state_ttl())
                produced = result_columns(self.session._run_context(self.session.home / "tmp"), plan)
            names = [(c, t if isinstance(t, str) else t.simpleString()) for c, t in produced]
            columns = [describe(c, pgtypes.oid_of_spark(t), pgtypes.typmod_of_spark(t)) for c, t in names]
            return columns if plan.bounded else [describe("op", pgtypes.TEXT), *columns]
        outcome = self.run_statement(statement, sql)  # SHOW, DESCRIBE, EXPLAIN...: no effects, cheap
        outcome.close()
        return outcome.columns

    def start_portal(self, portal: Portal, early: bool) -> None:
        """Run the portal's statement unless it ran already. `early` (a Describe) runs only what has no effects
        (a query, SHOW, a catalog query), so its columns can be described; the rest runs at Execute."""
        if portal.outcome is not None or portal.done:
            return
        if early:
            kind = self.kind_of(portal.sql)
            if kind == "session":
                return
            if kind == "statement":
                statements = self.parse_statements(portal.sql)
                if len(statements) != 1 or isinstance(statements[0], WITH_EFFECTS):
                    return
        portal.outcome = list(self.outcomes(portal.sql, single=True))[0]

    def execute(self, body: protocol.Fields) -> None:
        name, limit = body.cstring(), body.int32()
        portal = self.portals.get(name)
        self.parameters = portal.parameters if portal is not None else []

        def work() -> None:
            if portal is None:
                raise StatementFailed(sqlstate.plain_error("34000", f'portal "{name}" does not exist'))
            if portal.done:
                self.send(protocol.command_complete(portal.outcome.tag(portal.sent) if portal.outcome else "SELECT 0"))
                return
            if BLANK.fullmatch(portal.sql):
                portal.done = True
                self.send(protocol.EMPTY_QUERY)
                return
            self.start_portal(portal, early=False)
            outcome = portal.outcome
            try:
                if outcome.copy and portal.sent == 0:
                    self.send(protocol.copy_out_response(len(outcome.columns or [])))
                portal.sent, ended = self.send_rows(outcome, portal.formats, max(limit, 0), portal.sent)
                if not ended:
                    self.send(protocol.PORTAL_SUSPENDED)
                    return
                portal.done = True
                self.finish(outcome, portal.sent)
            except BaseException:
                portal.done = True
                outcome.close()
                raise
            if outcome.quit:
                raise ClientGone("QUIT")

        self._failing(work, portal.sql if portal else "")

    def close_object(self, body: protocol.Fields) -> None:
        kind, name = body.byte(), body.cstring()
        if kind == b"S":
            self.prepared.pop(name, None)
        elif kind == b"P":
            portal = self.portals.pop(name, None)
            if portal is not None and portal.outcome is not None:
                portal.outcome.close()
        else:
            raise ProtocolError(f"Close of {kind!r}: expected S or P")
        self.send(protocol.CLOSE_COMPLETE)

    def sync(self, body: protocol.Fields) -> None:
        self.skipping = False
        if self.pg.status == "I":  # the implicit transaction ends: its portals go, their queries stop
            for portal in self.portals.values():
                if portal.outcome is not None:
                    portal.outcome.close()
            self.portals.clear()
        self.send(protocol.ready_for_query(self.pg.status))
        self.flush()


def _backquoted(text: str) -> str:
    """PostgreSQL's "quoted" names as streamshell's `quoted` ones, of the same length (positions stay)."""
    return re.sub(r'"((?:[^"]|"")+)"', lambda m: "`" + m.group(1).replace('""', '"').replace("`", "``") + "`"
                  if '""' not in m.group(1) and "`" not in m.group(1) else m.group(0), text)


def _cursor_name(text: str) -> str:
    return text[1:-1] if text.startswith('"') else text.lower()


def _format(formats: list[int], i: int) -> int:
    if not formats:
        return 0
    return formats[0] if len(formats) == 1 else (formats[i] if i < len(formats) else 0)


def _with_format(column: ColumnDescription, fmt: int) -> ColumnDescription:
    return ColumnDescription(column.name, column.type_oid, column.type_size, column.type_modifier, fmt,
                             column.table_oid, column.column_number)


def _encode(row: tuple, columns: list[ColumnDescription], kinds: list[int]) -> list[bytes | None]:
    if not any(kinds):
        return [pgtypes.text(v) for v in row]
    return [pgtypes.binary(v, columns[i].type_oid) if kinds[i] == 1 else pgtypes.text(v) for i, v in enumerate(row)]

