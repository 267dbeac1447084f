"""The gateway's listener: accepts clients, one thread and one session each, and routes cancel requests.

Why it exists apart from the connection: what all clients share lives here, once. That is the Spark runtime
(one JVM for every connection's SELECTs; each connection's session has its own settings and catalog state, and
detached jobs have their own Spark as from the CLI), the password verifier, the TLS context, the table of
running connections that a cancel request (a new connection carrying a process id and a secret) is matched
against, and the metrics.
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from shell.engine.spark import SparkRuntime
from shell.gateway.connection import Connection
from shell.gateway.metrics import GatewayMetrics, serve
from shell.gateway.protocol import MAX_MESSAGE
from shell.gateway.scram import Verifier

log = logging.getLogger("streamshell.gateway")


@dataclass
class GatewayConfig:
    home: Path
    host: str = "127.0.0.1"
    port: int = 5433
    master: str = "local[*]"
    settings: dict[str, str] = field(default_factory=dict)
    password: str | None = None
    require_password: bool = False  # a password also on loopback
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_required: bool = False
    metrics_port: int | None = 0  # 0: any free port; None: no metrics endpoint
    max_message: int = MAX_MESSAGE
    max_connections: int = 100  # as PostgreSQL's default: each connection is a session and a thread
    # as PostgreSQL's authentication_timeout: a client that has not finished its startup (and its password) by then
    # is let go, so clients that connect and say nothing cannot hold every place
    authentication_timeout_s: float = 60.0
    verbose: bool = False


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class GatewayError(Exception):
    """A configuration the gateway refuses to start with (one line, exit code 2)."""


class GatewayServer:
    def __init__(self, config: GatewayConfig, runtime: SparkRuntime | None = None):
        self.config = config
        self.password_needed = config.require_password or not is_loopback(config.host)
        if self.password_needed and not config.password:
            raise GatewayError(
                f"a gateway bound to {config.host} needs a password: set STREAMSHELL_GATEWAY_PASSWORD or "
                "--password-file (only loopback addresses are trusted without one)")
        self.verifier = Verifier.from_password(config.password) if self.password_needed else None
        self.tls = self._tls_context()
        self.metrics = GatewayMetrics(self._spark_queries)
        self.connections: dict[int, Connection] = {}
        self._lock = threading.Lock()
        self._next_pid = 1000
        self.runtime = runtime
        self.listener: socket.socket | None = None
        self.metrics_server = None
        self.metrics_url: str | None = None
        self._stopping = threading.Event()

    def _tls_context(self) -> ssl.SSLContext | None:
        if not (self.config.tls_cert or self.config.tls_key):
            if self.config.tls_required:
                raise GatewayError("--tls-required needs --tls-cert and --tls-key")
            return None
        if not (self.config.tls_cert and self.config.tls_key):
            raise GatewayError("TLS needs both --tls-cert and --tls-key")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(str(self.config.tls_cert), str(self.config.tls_key))
        except (OSError, ssl.SSLError) as exc:
            raise GatewayError(f"cannot use the certificate {self.config.tls_cert} and key {self.config.tls_key}: {exc}") from None
        return context

    # starting and stopping ---------------------------------------------------------------------------------------

    def start(self) -> None:
        """Bind the port (an error names it) and begin starting Spark in the background."""
        family = socket.AF_INET6 if ":" in self.config.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self.config.host, self.config.port))
        except (OSError, OverflowError) as exc:
            listener.close()
            reason = getattr(exc, "strerror", None) or exc
            raise GatewayError(f"cannot listen on {self.config.host}:{self.config.port}: {reason}") from None
        listener.listen(128)
        self.listener = listener
        if self.config.metrics_port is not None:
            metrics_host = "127.0.0.1"  # on loopback, as the jobs' metrics: they need no password to be read
            try:
                self.metrics_server, self.metrics_url = serve(self.metrics, metrics_host, self.config.metrics_port, self.health)
            except (OSError, OverflowError) as exc:
                listener.close()
                reason = getattr(exc, "strerror", None) or exc
                raise GatewayError(f"cannot serve metrics on {metrics_host}:{self.config.metrics_port}: {reason}") from None
        if self.runtime is None:
            from shell.config import Settings, read_config_file

            settings = Settings()
            for key, value in {**read_config_file(self.config.home / "config.properties", lambda w: None),
                               **self.config.settings}.items():
                settings.set(key, value)
            self.runtime = SparkRuntime(self.config.master, settings.spark_conf(), self.config.home / "log" / "spark.log")
        self.runtime.start()
        threading.Thread(target=self._jvm_stderr_to_log, name="gateway-jvm-stderr", daemon=True).start()

    def _jvm_stderr_to_log(self) -> None:
        """What the JVM writes to its stderr goes to Spark's log file, not to the gateway's stderr: a thread of
        Spark's that dies of an error (a StackOverflowError planning a huge expression in a query's thread) is
        printed there with its whole stack, and the gateway's stderr is for its own lines."""
        try:
            spark = self.runtime.get()
            jvm = spark.sparkContext._jvm
            log_file = getattr(self.runtime, "log_file", None)
            if jvm is None or log_file is None:
                return
            stream = jvm.java.io.PrintStream(jvm.java.io.FileOutputStream(str(log_file), True), True, "UTF-8")
            jvm.java.lang.System.setErr(stream)
        except Exception:  # noqa: BLE001 - a Spark that failed to start says so itself; the gateway serves on
            log.warning("the JVM's stderr stays the gateway's", exc_info=True)

    def health(self) -> dict:
        """ok while the gateway serves and its Spark runs or is starting; failing once Spark could not start."""
        runtime = self.runtime
        if runtime is None or runtime.starting:
            spark = "starting"
        elif runtime.started:
            spark = "started"
        else:
            spark = "failed"
        return {"status": "failing" if spark == "failed" or self._stopping.is_set() else "ok", "spark": spark,
                "connections": self.metrics.values["connections"]}

    def _spark_queries(self) -> int:
        if self.runtime is None or not self.runtime.started:
            return 0
        return len(self.runtime.get().streams.active)

    @property
    def port(self) -> int:
        assert self.listener is not None
        return self.listener.getsockname()[1]

    def serve_forever(self) -> None:
        assert self.listener is not None
        while not self._stopping.is_set():
            try:
                sock, address = self.listener.accept()
            except OSError:
                if self._stopping.is_set():
                    return
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            if len(self.connections) >= self.config.max_connections:
                threading.Thread(target=self._refuse, args=(sock,), daemon=True).start()
                continue
            connection = self._register(sock, address)
            connection.thread = threading.Thread(target=connection.run, name=f"gateway-{connection.pid}", daemon=True)
            connection.thread.start()

    def shutdown(self, grace_s: float = 10.0) -> None:
        """Stop serving: each client is told `terminating connection due to administrator command` (FATAL 57P01,
        as PostgreSQL's smart shutdown tells them), what it runs is stopped, then Spark stops."""
        self._stopping.set()
        if self.listener is not None:
            self.listener.close()
        connections = list(self.connections.values())
        for connection in connections:
            connection.terminate()
        deadline = time.monotonic() + grace_s
        for connection in connections:
            if connection.thread is not None:
                connection.thread.join(max(0.0, deadline - time.monotonic()))
        if self.metrics_server is not None:
            self.metrics_server.shutdown()
        if self.runtime is not None:
            self.runtime.stop()

    # connections -------------------------------------------------------------------------------------------------

    def _register(self, sock: socket.socket, address: object) -> Connection:
        with self._lock:
            self._next_pid += 1
            connection = Connection(self, sock, address, self._next_pid, secrets.randbits(31))
            self.connections[connection.pid] = connection
        self.metrics.connected()
        return connection

    def _refuse(self, sock: socket.socket) -> None:
        """Past --max-connections: the client is told (53300, as PostgreSQL says it) and the socket closed."""
        from shell.gateway import protocol, sqlstate

        try:
            sock.settimeout(5)
            reader = protocol.MessageReader(sock.recv)
            first = reader.startup()  # answered after the client's startup packet, as PostgreSQL does
            while first.code in (protocol.SSL_REQUEST, protocol.GSSENC_REQUEST):
                sock.sendall(b"N")
                first = reader.startup()
            if first.code == protocol.CANCEL_REQUEST:
                self.cancel(first.cancel_pid, first.cancel_key)  # a cancel needs no place of its own
                return
            sock.sendall(protocol.error_response(sqlstate.plain_error(
                "53300", f"sorry, too many clients already (the gateway takes {self.config.max_connections})",
                hint="streamshell gateway --max-connections N", severity="FATAL")))
        except (OSError, protocol.ProtocolError, protocol.ClientGone):
            pass
        finally:
            sock.close()

    def forget(self, connection: Connection) -> None:
        with self._lock:
            if self.connections.pop(connection.pid, None) is None:
                return
        self.metrics.disconnected()

    def cancel(self, pid: int, key: int) -> None:
        """A cancel request: stop what connection `pid` runs, if the secret matches (else nothing, as PostgreSQL)."""
        self.metrics.count("cancel_requests_total")
        with self._lock:
            target = self.connections.get(pid)
        if target is not None and secrets.compare_digest(target.secret.to_bytes(4, "big"), key.to_bytes(4, "big", signed=True)):
            target.cancel()

    def new_session(self):  # noqa: ANN201 - a shell.session.Session
        from shell.session import Session, SessionOptions

        return Session(SessionOptions(home=self.config.home, master=self.config.master, settings=dict(self.config.settings),
                                      verbose=self.config.verbose), runtime=self.runtime)
