"""Bad input on the wire: each is a protocol error for that connection only, and the gateway serves on.

Garbage instead of a startup packet, a message of an unknown type, a truncated message, a length past the limit,
a huge query, random well-framed messages (hypothesis), and a client that vanishes in the middle of a live
result (whose Spark query must stop). After each, a real client (psycopg) connects and gets an answer.
"""

from __future__ import annotations

import os
import socket
import struct
import time

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shell.gateway import protocol

pytestmark = pytest.mark.e2e

EXAMPLES = int(os.environ.get("STREAMSHELL_FUZZ_EXAMPLES", "25"))


def startup_packet(user: str = "fuzzer") -> bytes:
    body = struct.pack("!i", protocol.PROTOCOL_V3) + b"user\0" + user.encode() + b"\0database\0streamshell\0\0"
    return struct.pack("!i", len(body) + 4) + body


class RawClient:
    """A client that speaks the protocol by hand, to say what no driver would."""

    def __init__(self, gw, start: bool = True):  # noqa: ANN001
        self.sock = socket.create_connection((gw.host, gw.port), timeout=60)
        self.buffer = b""
        if start:
            self.sock.sendall(startup_packet())
            self.until(b"Z")

    def read(self) -> tuple[bytes, bytes] | None:
        """The next message, or None when the gateway closed the connection."""
        while len(self.buffer) < 5 or len(self.buffer) < 1 + struct.unpack("!i", self.buffer[1:5])[0]:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionError:
                return None
            if not chunk:
                return None
            self.buffer += chunk
        length = struct.unpack("!i", self.buffer[1:5])[0]
        kind, body, self.buffer = self.buffer[:1], self.buffer[5 : 1 + length], self.buffer[1 + length :]
        return kind, body

    def until(self, kind: bytes) -> list[tuple[bytes, bytes]]:
        seen = []
        while True:
            message = self.read()
            if message is None:
                return seen
            seen.append(message)
            if message[0] == kind:
                return seen

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def vanish(self) -> None:
        """Close with a reset, as a killed process or a dropped network does."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


def fatal_then_closed(messages: list[tuple[bytes, bytes]]) -> bytes:
    """The SQL state of the FATAL error the gateway sent before closing."""
    errors = [body for kind, body in messages if kind == b"E"]
    assert errors, messages
    fields = {part[:1]: part[1:] for part in errors[-1].split(b"\0") if part}
    assert fields[b"S"] == b"FATAL"
    return fields[b"C"]


def still_serving(gw) -> None:  # noqa: ANN001
    with psycopg.connect(gw.dsn(), autocommit=True, connect_timeout=60) as conn:
        assert conn.execute("SHOW TABLES").fetchall() is not None


def test_garbage_instead_of_a_startup_packet_ends_that_connection_only(gateway):
    noise = bytearray(os.urandom(64))
    noise[0] = 0x7F  # random bytes, but their length field past the startup limit: not a wait for more of them
    for garbage in [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", bytes(noise), b"\x00\x00\x00\x08\x00\x02\x00\x00", b"\xff" * 12]:
        client = RawClient(gateway, start=False)
        client.send(garbage)
        messages = client.until(b"never")
        assert fatal_then_closed(messages) == b"08P01", garbage  # told why, then closed: never a silent close
    still_serving(gateway)


def test_an_unknown_message_type_a_truncated_message_and_a_huge_length(gateway):
    client = RawClient(gateway)
    client.send(protocol.message(b"z", b"what"))
    assert fatal_then_closed(client.until(b"never")) == b"08P01"

    client = RawClient(gateway)
    client.send(b"Q" + struct.pack("!i", 1000) + b"SELECT 1")  # 8 bytes of 996, then gone (the client's close)
    client.sock.close()
    still_serving(gateway)

    client = RawClient(gateway)
    client.send(b"Q" + struct.pack("!i", 0x7FFFFFF0))
    messages = client.until(b"never")
    assert fatal_then_closed(messages) == b"08P01"
    assert b"longer than the gateway's limit" in messages[-1][1]

    client = RawClient(gateway)
    client.send(protocol.message(b"B", b"portal\0stmt\0" + struct.pack("!h", 30000)))  # a count that does not fit
    assert fatal_then_closed(client.until(b"never")) == b"08P01"
    still_serving(gateway)


def test_a_huge_query_is_an_error_for_that_statement_and_the_connection_goes_on(gateway):
    with psycopg.connect(gateway.dsn(), autocommit=True) as conn:
        huge = "SELECT " + " + ".join(["1"] * 300_000) + " AS x"  # 1.2 MB, past the front end's token limit
        with pytest.raises(psycopg.Error) as caught:
            conn.execute(huge)
        assert caught.value.sqlstate in ("54000", "42601")
        assert conn.execute("SHOW TABLES").fetchall() is not None


def test_a_huge_expression_that_spark_cannot_parse_is_statement_too_complex_and_nothing_is_dumped(gateway):
    """200,000 terms (400,000 tokens: within the front end's limits) that Spark's parser runs out of stack on: a
    clean error of that statement (54001, one line, a hint), no Java trace on the gateway's stderr, and the
    connection and the gateway serve on."""
    before = gateway.log.read_text()
    with psycopg.connect(gateway.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.StatementTooComplex) as caught:
            conn.execute("SELECT " + "+".join(["1"] * 200_000))
        diag = caught.value.diag
        assert diag.message_primary.startswith("statement too complex") and "\n" not in diag.message_primary
        assert "split the expression" in diag.message_hint and diag.statement_position is None
        assert conn.execute("SELECT 1 + 1 AS two").fetchall() == [(2,)]
    added = gateway.log.read_text()[len(before):]
    assert "StackOverflowError" not in added and "\tat " not in added, added[:3000]
    still_serving(gateway)


def test_notices_come_after_a_statements_rows_never_between_them(gateway):
    """A query of several statements: each one's RowDescription, DataRows and CommandComplete come together, and the
    notice of the CREATE TABLE between them comes after its own CommandComplete, before the next RowDescription."""
    client = RawClient(gateway)
    client.send(protocol.message(b"Q", b"SHOW DATABASES; CREATE TABLE IF NOT EXISTS noted (x INT) WITH "
                                       b"('connector' = 'datagen'); SHOW TABLES\0"))
    kinds = [kind for kind, _ in client.until(b"Z")]
    client.sock.close()
    text = b"".join(kinds).decode()
    assert text.count("T") == 2 and text.count("C") == 3 and "N" in text and text.endswith("Z"), text
    first, create, second = text[: text.index("C") + 1], text[text.index("C") + 1 : text.rindex("T")], text[text.rindex("T") :]
    assert first.startswith("T") and set(first[1:-1]) <= {"D"}  # rows, and nothing else, until the statement ends
    assert create.startswith("C") and "N" in create and "D" not in create
    assert set(second[1 : second.index("C")]) <= {"D"} and second.index("C") > 1


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(b"QPBDEHSCXpdcfz!"), st.binary(max_size=64)), min_size=1, max_size=6))
def test_random_well_framed_messages_never_stop_the_gateway(gateway, messages):
    client = RawClient(gateway)
    client.send(b"".join(protocol.message(bytes([kind]), body) for kind, body in messages) + protocol.message(b"S"))
    try:
        answered = client.until(b"Z")  # the Sync at the end is answered, unless the connection was ended
    finally:
        client.sock.close()
    if not answered or answered[-1][0] != b"Z":
        # closed before the final Sync's answer: either it said why (FATAL 08P01, the last thing sent), or the
        # client's own Terminate ('X') ended it, the one close without a word (as PostgreSQL's)
        errors = [body for kind, body in answered if kind == b"E"]
        said_why = bool(errors) and b"SFATAL\0" in errors[-1] and answered[-1][0] == b"E"
        if said_why:
            assert fatal_then_closed(answered) == b"08P01", answered
        else:
            assert any(kind == ord("X") for kind, _ in messages), (messages, answered)
    still_serving(gateway)


def test_a_client_that_vanishes_in_the_middle_of_a_live_result_leaves_no_spark_query(gateway):
    with psycopg.connect(gateway.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS ticking (n INT) WITH ('connector' = 'datagen', 'rows-per-second' = '5')")
    client = RawClient(gateway)
    client.send(protocol.message(b"Q", b"COPY (SELECT n FROM ticking) TO STDOUT\0"))
    kinds = []
    while b"d" not in kinds:  # CopyOutResponse, then the first change
        message = client.read()
        assert message is not None and message[0] != b"E", message
        kinds.append(message[0])
    assert gateway.metrics()["streamshell_gateway_spark_queries"] >= 1
    client.vanish()
    assert gateway.wait_for_metric("streamshell_gateway_spark_queries", 0)["streamshell_gateway_spark_queries"] == 0
    still_serving(gateway)
    assert gateway.process.poll() is None
    time.sleep(0)  # nothing else: the gateway is alive and answering


def test_clients_past_max_connections_are_told_so_and_the_others_go_on(tmp_path):
    from tests.gateway.gateways import start_gateway

    gw = start_gateway(tmp_path / "home", "--max-connections", "2", "--metrics-port", "-1")
    try:
        first, second = psycopg.connect(gw.dsn(), autocommit=True), psycopg.connect(gw.dsn(), autocommit=True)
        with pytest.raises(psycopg.OperationalError, match="too many clients already"):
            psycopg.connect(gw.dsn())
        first.close()
        deadline = time.monotonic() + 60
        while True:  # the first one's place is free once the gateway has seen it go
            try:
                third = psycopg.connect(gw.dsn(), autocommit=True)
                break
            except psycopg.OperationalError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert second.execute("SHOW TABLES").fetchall() == [] and third.execute("SHOW TABLES").fetchall() == []
        second.close(), third.close()
    finally:
        gw.stop()


def test_clients_that_connect_and_say_nothing_are_let_go_and_cannot_hold_every_place(tmp_path):
    """As PostgreSQL's authentication_timeout: a silent client's connection is closed once the timeout passes, so a
    flood of them (here: as many as the gateway takes) does not keep the next real client out."""
    import socket

    from tests.gateway.gateways import start_gateway

    gw = start_gateway(tmp_path / "home", "--max-connections", "2", "--authentication-timeout", "1",
                       "--metrics-port", "-1")  # fmt: skip
    silent = [socket.create_connection((gw.host, gw.port)) for _ in range(2)]
    try:
        for sock in silent:
            sock.settimeout(30)
            assert sock.recv(1) == b""  # closed by the gateway, not by this client
        with psycopg.connect(gw.dsn(), autocommit=True) as conn:
            assert conn.execute("SHOW TABLES").fetchall() == []
    finally:
        for sock in silent:
            sock.close()
        gw.stop()
