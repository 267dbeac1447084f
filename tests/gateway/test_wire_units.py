"""The gateway's pieces that need no server: the byte codec, SCRAM-SHA-256, parameters, values and error fields.

The SCRAM client side here is written from RFC 5802's formulas, apart from the server's code; the real clients
(libpq, psycopg, JDBC) are exercised in test_clients.py.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import hashlib
import hmac
import struct

import pytest

from shell.errors import CatalogError, SqlSyntaxError, UnsupportedFeatureError
from shell.gateway import compat, params, pgtypes, protocol, sqlstate
from shell.gateway.protocol import ClientGone, MessageReader, ProtocolError
from shell.gateway.scram import AuthFailed, ScramExchange, Verifier

pytestmark = pytest.mark.unit


def reader(data: bytes, max_message: int = protocol.MAX_MESSAGE) -> MessageReader:
    chunks = [data[i : i + 3] for i in range(0, len(data), 3)]  # a socket gives bytes in small pieces

    def recv(n: int) -> bytes:
        return chunks.pop(0) if chunks else b""

    return MessageReader(recv, max_message)


def startup(params: dict[str, str]) -> bytes:
    body = struct.pack("!i", protocol.PROTOCOL_V3) + b"".join(k.encode() + b"\0" + v.encode() + b"\0" for k, v in params.items()) + b"\0"
    return struct.pack("!i", len(body) + 4) + body


def test_a_startup_message_and_then_a_query_are_read_from_pieces():
    r = reader(startup({"user": "alice", "database": "streamshell"}) + protocol.message(b"Q", b"SELECT 1\0"))
    first = r.startup()
    assert first.code == protocol.PROTOCOL_V3 and first.params == {"user": "alice", "database": "streamshell"}
    kind, body = r.message()
    assert kind == b"Q" and body.cstring() == "SELECT 1"


def test_ssl_and_cancel_requests_are_told_apart():
    assert reader(struct.pack("!ii", 8, protocol.SSL_REQUEST)).startup().code == protocol.SSL_REQUEST
    cancel = reader(struct.pack("!iiii", 16, protocol.CANCEL_REQUEST, 1234, -5)).startup()
    assert (cancel.code, cancel.cancel_pid, cancel.cancel_key) == (protocol.CANCEL_REQUEST, 1234, -5)


@pytest.mark.parametrize("data, says", [
    (struct.pack("!i", 3), "invalid startup packet length"),
    (struct.pack("!ii", 8, 2 << 16), "unsupported frontend protocol 2.0"),
    (struct.pack("!i", 1_000_000), "invalid startup packet length"),
])  # fmt: skip
def test_a_bad_startup_packet_is_a_protocol_error(data, says):
    with pytest.raises(ProtocolError, match=says):
        reader(data).startup()


def test_a_message_longer_than_the_limit_is_refused_before_it_is_read():
    with pytest.raises(ProtocolError, match="longer than the gateway's limit"):
        reader(b"Q" + struct.pack("!i", 2_000_000_000), max_message=1024).message()


def test_a_truncated_message_is_the_client_gone_and_fields_past_the_end_are_a_protocol_error():
    with pytest.raises(ClientGone, match="in the middle of a message"):
        reader(b"Q" + struct.pack("!i", 100) + b"SELECT").message()
    kind, body = reader(protocol.message(b"B", b"\0\0\x00\x05")).message()
    body.cstring(), body.cstring()
    with pytest.raises(ProtocolError, match="items does not fit|shorter than its fields"):
        body.count(2)
    with pytest.raises(ProtocolError, match="no terminating zero"):
        reader(protocol.message(b"Q", b"SELECT 1")).message()[1].cstring()


def test_backend_messages_have_their_lengths_and_nulls():
    row = protocol.data_row([b"1", None, b""])
    assert row[:1] == b"D" and struct.unpack("!i", row[1:5])[0] == len(row) - 1
    assert row[5:] == struct.pack("!h", 3) + struct.pack("!i", 1) + b"1" + b"\xff\xff\xff\xff" + struct.pack("!i", 0)
    error = protocol.error_response({"S": "ERROR", "C": "42601", "M": "bad"})
    assert error.endswith(b"C42601\0Mbad\0\0")


def scram_client(password: str, server: ScramExchange, nonce: str = "rOprNGfwEbeRWgbNEkqO") -> tuple[bytes, bytes]:
    """RFC 5802's client: the final message it sends and the server signature it expects."""
    first_bare = f"n=,r={nonce}"
    server_first = server.first(f"n,,{first_bare}".encode()).decode()
    attributes = dict(part.split("=", 1) for part in server_first.split(","))
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(attributes["s"]), int(attributes["i"]))
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    without_proof = f"c={base64.b64encode(b'n,,').decode()},r={attributes['r']}"
    auth = f"{first_bare},{server_first},{without_proof}".encode()
    signature = hmac.new(hashlib.sha256(client_key).digest(), auth, hashlib.sha256).digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    expected = b"v=" + base64.b64encode(hmac.new(server_key, auth, hashlib.sha256).digest())
    return f"{without_proof},p={proof}".encode(), expected


def test_scram_accepts_the_right_password_and_proves_the_server_knows_it():
    server = ScramExchange(Verifier.from_password("s3cret"))
    final, expected = scram_client("s3cret", server)
    assert server.final(final) == expected


def test_scram_refuses_a_wrong_password_and_a_changed_nonce():
    server = ScramExchange(Verifier.from_password("s3cret"))
    final, _ = scram_client("wrong", server)
    with pytest.raises(AuthFailed, match="password authentication failed"):
        server.final(final)
    server = ScramExchange(Verifier.from_password("s3cret"))
    final, _ = scram_client("s3cret", server)
    with pytest.raises(AuthFailed, match="nonce"):
        server.final(final.replace(b",r=", b",r=x"))
    with pytest.raises(AuthFailed, match="header"):
        ScramExchange(Verifier.from_password("s3cret")).first(b"p=tls-server-end-point,,n=,r=abc")


def test_parameters_become_literals_of_their_type_and_placeholders_in_strings_stay():
    sql = "SELECT $1, '$2 is not one', $2 -- $3\n FROM t WHERE a = $3"
    assert params.placeholders(sql) == 3
    values = [params.literal(b"42", pgtypes.INT4, False), params.literal(b"it's", pgtypes.TEXT, False),
              params.literal(struct.pack("!q", -7), pgtypes.INT8, True)]
    assert params.substitute(sql, values) == "SELECT 42, '$2 is not one', 'it''s' -- $3\n FROM t WHERE a = (-7)"
    assert params.substitute("SELECT $1", [None]) == "SELECT NULL"
    with pytest.raises(params.ParameterError, match="invalid input syntax for type integer"):
        params.literal(b"1; DROP TABLE t", pgtypes.INT4, False)
    with pytest.raises(params.ParameterError, match="there is no parameter \\$2"):
        params.substitute("SELECT $2", ["1"])


def test_values_in_text_and_binary_as_postgresql_writes_them():
    assert pgtypes.text(True) == b"t" and pgtypes.text(None) is None
    assert pgtypes.text(dt.datetime(2024, 5, 1, 10, 0, 0, 500000)) == b"2024-05-01 10:00:00.5"
    assert pgtypes.text(b"\x01\xff") == b"\\x01ff"
    assert pgtypes.text(decimal.Decimal("1E+2")) == b"100"
    assert pgtypes.binary(dt.date(2000, 1, 2), pgtypes.DATE) == struct.pack("!i", 1)
    assert pgtypes.binary(dt.datetime(2000, 1, 1, 0, 0, 1), pgtypes.TIMESTAMP) == struct.pack("!q", 1_000_000)
    # numeric 12345.678: digits 1 2345 6780 in base 10000, weight 1, display scale 3
    assert pgtypes.binary(decimal.Decimal("12345.678"), pgtypes.NUMERIC) == struct.pack("!hhHhHHH", 3, 1, 0, 3, 1, 2345, 6780)
    assert pgtypes.oid_of_spark("decimal(10,2)") == pgtypes.NUMERIC and pgtypes.oid_of_spark("array<int>") == pgtypes.TEXT


def test_an_error_carries_sql_state_hint_and_the_position_psql_draws_its_caret_at():
    source = "SELECT 1;\nSELECT nope\nFROM t"
    error = CatalogError("unknown column 'nope'", line=2, col=8, hint="DESCRIBE t lists its columns")
    fields = sqlstate.error_fields(error, source)
    assert fields["C"] == "42703" and fields["H"] == "DESCRIBE t lists its columns"
    assert source[int(fields["P"]) - 1 :].startswith("nope")
    assert sqlstate.error_fields(SqlSyntaxError("x"))["C"] == "42601"
    assert sqlstate.error_fields(UnsupportedFeatureError("x"))["C"] == "0A000"
    redacted = sqlstate.error_fields(SqlSyntaxError("cannot reach sasl_ssl://user:hunter2@broker:9093"), None)
    assert "hunter2" not in redacted["M"] and "****" in redacted["M"]


def test_session_commands_drivers_send_are_answered_and_streamshell_statements_are_not_taken():
    state, changed = compat.PgState(), []
    assert compat.handle("SET extra_float_digits = 3", state, changed).tag(0) == "SET" and changed == ["extra_float_digits"]
    assert list(compat.handle("SHOW search_path", state, []).rows) == [("",)]
    assert compat.handle("BEGIN", state, []).tag(0) == "BEGIN" and state.status == "T"
    state.changed_in_transaction = True
    rollback = compat.handle("ROLLBACK", state, [])
    assert state.status == "I" and "nothing was undone" in rollback.notices[0][1]
    for streamshell in ["SET 'table.dml-sync' = 'true'", "SET", "SHOW TABLES", "SHOW JOBS", "RESET", "SELECT 1"]:
        assert compat.handle(streamshell, state, []) is None, streamshell


def test_a_failure_while_running_has_its_own_sql_state_and_no_position():
    from shell.errors import ExecutionError

    source = "SELECT 1 / 0"
    by_zero = sqlstate.error_fields(ExecutionError("Division by zero. Use `try_divide` to tolerate divisor being 0"), source)
    assert by_zero["C"] == "22012" and "P" not in by_zero  # no caret at column 1: the error has no place
    cast = sqlstate.error_fields(ExecutionError("CAST of 'abc' to INT failed: Flink cannot read this text as INT"), source)
    assert cast["C"] == "22P02" and "P" not in cast
    for spark_said in ["The statement, including potential SQL functions and referenced views, was too complex to parse.",
                       "StackOverflowError"]:
        fields = sqlstate.error_fields(ExecutionError(spark_said), source)
        assert fields["C"] == "54001" and "P" not in fields
        assert fields["M"].startswith("statement too complex") and "\n" not in fields["M"]
        assert "split the expression" in fields["H"]
    assert sqlstate.error_fields(ExecutionError("broker gone"), source)["C"] == "58000"


def test_a_parameter_that_is_not_of_its_type_is_22p02_naming_it():
    with pytest.raises(params.ParameterError) as caught:
        params.literal(b"abc", pgtypes.INT4, False)
    named = caught.value.about(1)
    assert named.sqlstate == "22P02" and str(named) == 'parameter $1: invalid input syntax for type integer: "abc"'
    spark = {"C": "22P02", "M": "The value 'abc' of the type \"STRING\" cannot be cast to \"BIGINT\" because it is malformed."}
    fields = sqlstate.about_parameter(spark, ["7", "abc"])
    assert fields["M"] == 'parameter $2: invalid input syntax for type bigint: "abc"' and "$2" in fields["H"]
    assert sqlstate.about_parameter(spark, ["7"]) == spark  # not a parameter's value: Spark's message stays


def test_float_parameters_are_double_literals_and_negative_numbers_keep_their_sign():
    assert params.literal(b"1.5", pgtypes.FLOAT8, False) == "1.5E0"
    assert params.literal(struct.pack("!d", -2.5), pgtypes.FLOAT8, True) == "(-2.5E0)"
    assert params.literal(b"NaN", pgtypes.FLOAT8, False) == "CAST('NaN' AS DOUBLE)"
    assert params.literal(b"1e300", pgtypes.FLOAT8, False) == "1e+300"
    assert params.literal(b"0.25", pgtypes.FLOAT4, False) == "CAST(0.25E0 AS FLOAT)"
    assert params.substitute("SELECT 1-$1", [params.literal(b"-7", pgtypes.INT4, False)]) == "SELECT 1-(-7)"  # not 1--7


def test_decimal_and_varchar_columns_have_their_type_modifier_as_postgresql_shows_it():
    assert pgtypes.typmod_of_flink("DECIMAL(10, 2)") == (10 << 16 | 2) + 4
    assert pgtypes.display_name(pgtypes.NUMERIC, pgtypes.typmod_of_flink("DECIMAL(10, 2)")) == "numeric(10,2)"
    assert pgtypes.display_name(pgtypes.NUMERIC, pgtypes.typmod_of_flink("DECIMAL")) == "numeric(10,0)"  # Flink's default
    assert pgtypes.display_name(pgtypes.VARCHAR, pgtypes.typmod_of_flink("VARCHAR(20)")) == "character varying(20)"
    assert pgtypes.typmod_of_flink("STRING") == -1 and pgtypes.display_name(pgtypes.NUMERIC) == "numeric"
    assert pgtypes.typmod_of_spark("decimal(12,3)") == (12 << 16 | 3) + 4 and pgtypes.typmod_of_spark("int") == -1


def test_the_metrics_have_help_and_type_lines_for_each_metric():
    from shell.gateway.metrics import COUNTERS, GAUGES, GatewayMetrics

    lines = GatewayMetrics(lambda: 2).text().splitlines()
    samples = [line for line in lines if not line.startswith("#")]
    assert len(samples) == len(GAUGES + COUNTERS) + 1
    for sample in samples:
        name = sample.split()[0]
        at = lines.index(sample)
        assert lines[at - 2].startswith(f"# HELP {name} ") and len(lines[at - 2]) > len(f"# HELP {name} ") + 5
        assert lines[at - 1] in (f"# TYPE {name} gauge", f"# TYPE {name} counter")
        assert name.endswith("_total") == lines[at - 1].endswith("counter")
