"""The gateway's start options and its stop, each on a gateway of its own: `--tls-required`, the password from
`$STREAMSHELL_GATEWAY_PASSWORD`, and SIGTERM, which tells every client `terminating connection due to administrator
command` (FATAL 57P01) as PostgreSQL does, a streaming one and an idle one alike.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess

import psycopg
import pytest

from shell.gateway import protocol
from tests.gateway.gateways import start_gateway

pytestmark = pytest.mark.e2e


def certificate(home) -> tuple[str, str]:  # noqa: ANN001
    key, cert = home / "key.pem", home / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=localhost"], check=True, capture_output=True, timeout=120)
    return str(cert), str(key)


def test_tls_required_refuses_a_clear_connection_and_the_password_comes_from_the_environment(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    cert, key = certificate(home)
    gw = start_gateway(home, "--require-password", "--tls-cert", cert, "--tls-key", key, "--tls-required",
                       "--metrics-port", "-1", env={"STREAMSHELL_GATEWAY_PASSWORD": "from the environment"})
    try:
        with pytest.raises(psycopg.OperationalError, match="takes TLS connections only"):
            psycopg.connect(gw.dsn(user="alice", password="'from the environment'", sslmode="disable"))
        with pytest.raises(psycopg.OperationalError, match='password authentication failed for user "alice"'):
            psycopg.connect(gw.dsn(user="alice", password="wrong", sslmode="require"))
        with psycopg.connect(gw.dsn(user="alice", password="'from the environment'", sslmode="require"),
                             autocommit=True) as conn:
            assert conn.pgconn.ssl_in_use
            assert conn.execute("SHOW TABLES").fetchall() == []
        run = subprocess.run(["psql", gw.dsn(user="bob", sslmode="require"), "-X", "-c", "SHOW TABLES"], capture_output=True,
                             text=True, timeout=120, env={**os.environ, "PGPASSWORD": "from the environment"})
        assert run.returncode == 0 and "table name" in run.stdout, run.stderr
    finally:
        assert gw.stop() == 0


def startup_packet() -> bytes:
    body = struct.pack("!i", protocol.PROTOCOL_V3) + b"user\0idle\0database\0streamshell\0\0"
    return struct.pack("!i", len(body) + 4) + body


def messages_until_closed(sock: socket.socket) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """The messages the gateway sends until it closes the connection: (type, fields of an error or notice)."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    out = []
    while len(data) >= 5:
        length = struct.unpack("!i", data[1:5])[0]
        kind, body, data = data[:1], data[5 : 1 + length], data[1 + length :]
        fields = {part[:1]: part[1:] for part in body.split(b"\0") if part} if kind in (b"E", b"N") else {}
        out.append((kind, fields))
    return out


def test_sigterm_tells_each_client_the_administrator_ended_its_connection(tmp_path):
    gw = start_gateway(tmp_path / "home", "--metrics-port", "-1")
    idle = socket.create_connection((gw.host, gw.port), timeout=120)
    idle.sendall(startup_packet())
    ready = b""
    while not ready.endswith(b"Z\x00\x00\x00\x05I"):  # ReadyForQuery, idle: it waits for a statement
        ready += idle.recv(65536)
    streamed, error = [], None
    try:
        with psycopg.connect(gw.dsn(), autocommit=True) as conn:
            conn.execute("CREATE TABLE ticks (n INT) WITH ('connector' = 'datagen', 'rows-per-second' = '5')")
            with conn.cursor().copy("COPY (SELECT n FROM ticks) TO STDOUT") as copy:
                for row in copy.rows():
                    streamed.append(row)
                    if len(streamed) == 2:
                        gw.process.send_signal(signal.SIGTERM)
    except psycopg.Error as exc:
        error = exc
    assert isinstance(error, psycopg.errors.AdminShutdown), error  # 57P01, not 57014 (query_canceled)
    assert error.diag.severity == "FATAL" and error.diag.message_primary == "terminating connection due to administrator command"
    assert len(streamed) >= 2
    said = messages_until_closed(idle)
    assert [kind for kind, _ in said] == [b"E"], said
    fields = said[0][1]
    assert (fields[b"S"], fields[b"C"], fields[b"M"]) == (b"FATAL", b"57P01", b"terminating connection due to administrator command")
    idle.close()
    assert gw.stop() == 0
