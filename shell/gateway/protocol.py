"""The PostgreSQL v3 wire protocol's messages as bytes: reading the client's, writing the server's.

Why it exists, and why it is ours: the codec is small (a byte for the type, four for the length, a few field
kinds), and no well-kept Python library serves it (docs/gateway.md, "Why its own codec"). Nothing here touches a
socket: `MessageReader` reads from any `recv`-like callable, and the writers return bytes, so the fuzz tests and
the unit tests drive it with plain byte strings.

Every malformed input raises `ProtocolError` (SQLSTATE 08P01, protocol_violation), which ends that connection
only; nothing here trusts a length it was sent beyond `MAX_MESSAGE`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Iterable

PROTOCOL_V3 = 196608  # 3.0
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
MAX_MESSAGE = 64 * 1024 * 1024  # a larger length is a protocol error, not an allocation
MAX_STARTUP = 10_000  # PostgreSQL's own limit on a startup packet


class ProtocolError(Exception):
    """The client broke the protocol: this connection is told (08P01) and closed; the gateway goes on."""

    sqlstate = "08P01"


class ClientGone(Exception):
    """The client closed the connection (at a message boundary or in the middle of one)."""


@dataclass(frozen=True)
class Startup:
    """The first packet: a startup message (`params`), an SSL/GSS request, or a cancel request."""

    code: int
    params: dict[str, str]
    cancel_pid: int = 0
    cancel_key: int = 0


class Fields:
    """Reads the fields of one message's payload; running past its end is a protocol error."""

    def __init__(self, data: bytes):
        self.data = data
        self.at = 0

    def _take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ProtocolError("message shorter than its fields")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def int16(self) -> int:
        return struct.unpack("!h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack("!i", self._take(4))[0]

    def uint32(self) -> int:
        return struct.unpack("!I", self._take(4))[0]

    def byte(self) -> bytes:
        return self._take(1)

    def raw(self, n: int) -> bytes:
        return self._take(n)

    def rest(self) -> bytes:
        return self._take(len(self.data) - self.at)

    def cstring(self) -> str:
        end = self.data.find(b"\0", self.at)
        if end < 0:
            raise ProtocolError("a string field has no terminating zero byte")
        text = self.data[self.at : end]
        self.at = end + 1
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"a string field is not UTF-8 (byte 0x{text[exc.start]:02x} at {exc.start})") from None

    def count(self, size_of_each: int) -> int:
        """An int16 count of items, checked against what is left (a huge count of nothing is refused at once)."""
        n = self.int16()
        if n < 0 or n * size_of_each > len(self.data) - self.at:
            raise ProtocolError(f"a count of {n} items does not fit the message")
        return n


class MessageReader:
    """Messages from a byte source. `recv(n)` returns up to n bytes, b'' at the end (a socket's recv)."""

    def __init__(self, recv: Callable[[int], bytes], max_message: int = MAX_MESSAGE):
        self.recv = recv
        self.max_message = max_message
        self.buffer = bytearray()

    def buffered(self) -> bool:
        return bool(self.buffer)

    def _exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise ClientGone("the client closed the connection" + (" in the middle of a message" if self.buffer else ""))
            self.buffer += chunk
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    def startup(self) -> Startup:
        (length,) = struct.unpack("!i", self._exactly(4))
        if length < 8 or length > MAX_STARTUP:
            raise ProtocolError(f"invalid startup packet length {length}")
        body = Fields(self._exactly(length - 4))
        code = body.int32()
        if code in (SSL_REQUEST, GSSENC_REQUEST):
            return Startup(code, {})
        if code == CANCEL_REQUEST:
            return Startup(code, {}, cancel_pid=body.int32(), cancel_key=body.int32())
        if code >> 16 != 3:
            raise ProtocolError(f"unsupported frontend protocol {code >> 16}.{code & 0xFFFF}: the gateway speaks 3.0")
        params: dict[str, str] = {}
        while True:
            key = body.cstring()
            if not key:
                break
            params[key] = body.cstring()
        return Startup(code, params)

    def message(self) -> tuple[bytes, Fields]:
        """The next typed message: its type byte and its payload."""
        kind = self._exactly(1)
        (length,) = struct.unpack("!i", self._exactly(4))
        if length < 4:
            raise ProtocolError(f"invalid message length {length}")
        if length - 4 > self.max_message:
            raise ProtocolError(f"message of {length} bytes is longer than the gateway's limit of {self.max_message}")
        return kind, Fields(self._exactly(length - 4))


# the server's messages ---------------------------------------------------------------------------------------


def message(kind: bytes, payload: bytes = b"") -> bytes:
    return kind + struct.pack("!i", len(payload) + 4) + payload


def cstr(text: str) -> bytes:
    return text.replace("\0", "").encode("utf-8") + b"\0"


def authentication(code: int, data: bytes = b"") -> bytes:
    """R: 0 ok, 10 SASL (mechanisms), 11 SASL continue, 12 SASL final."""
    return message(b"R", struct.pack("!i", code) + data)


def parameter_status(name: str, value: str) -> bytes:
    return message(b"S", cstr(name) + cstr(value))


def backend_key_data(pid: int, key: int) -> bytes:
    return message(b"K", struct.pack("!ii", pid, key))


def ready_for_query(status: str) -> bytes:
    return message(b"Z", status.encode())


@dataclass(frozen=True)
class ColumnDescription:
    name: str
    type_oid: int
    type_size: int = -1
    type_modifier: int = -1
    format: int = 0  # 0 text, 1 binary
    table_oid: int = 0
    column_number: int = 0


def row_description(columns: Iterable[ColumnDescription]) -> bytes:
    columns = list(columns)
    body = [struct.pack("!h", len(columns))]
    for c in columns:
        body.append(cstr(c.name) + struct.pack("!ihihih", c.table_oid, c.column_number, c.type_oid, c.type_size,
                                                c.type_modifier, c.format))
    return message(b"T", b"".join(body))


def data_row(values: Iterable[bytes | None]) -> bytes:
    values = list(values)
    body = [struct.pack("!h", len(values))]
    for value in values:
        if value is None:
            body.append(b"\xff\xff\xff\xff")
        else:
            body.append(struct.pack("!i", len(value)) + value)
    return message(b"D", b"".join(body))


def command_complete(tag: str) -> bytes:
    return message(b"C", cstr(tag))


def notice_or_error(kind: bytes, fields: dict[str, str]) -> bytes:
    return message(kind, b"".join(code.encode() + cstr(value) for code, value in fields.items() if value is not None) + b"\0")


def error_response(fields: dict[str, str]) -> bytes:
    return notice_or_error(b"E", fields)


def notice_response(fields: dict[str, str]) -> bytes:
    return notice_or_error(b"N", fields)


def parameter_description(oids: Iterable[int]) -> bytes:
    oids = list(oids)
    return message(b"t", struct.pack("!h", len(oids)) + b"".join(struct.pack("!I", o) for o in oids))


def copy_out_response(columns: int) -> bytes:
    """H: a COPY TO STDOUT in text format, `columns` columns."""
    return message(b"H", struct.pack("!bh", 0, columns) + struct.pack("!h", 0) * columns)


def copy_data(data: bytes) -> bytes:
    return message(b"d", data)


PARSE_COMPLETE = message(b"1")
BIND_COMPLETE = message(b"2")
CLOSE_COMPLETE = message(b"3")
NO_DATA = message(b"n")
EMPTY_QUERY = message(b"I")
PORTAL_SUSPENDED = message(b"s")
COPY_DONE = message(b"c")
