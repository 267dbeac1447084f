"""SCRAM-SHA-256 (RFC 5802, RFC 7677), the server's side, as PostgreSQL runs it.

Why it exists: a gateway bound beyond loopback must not take any client, and SCRAM is the password method every
current PostgreSQL driver speaks without sending the password itself. The gateway keeps only a verifier (salt,
iterations, stored key, server key), made once from the password at start. Channel binding (SCRAM-SHA-256-PLUS)
is not offered; a client that could use it says so in its header ('y') and goes on without it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass

MECHANISM = "SCRAM-SHA-256"
ITERATIONS = 4096


class AuthFailed(Exception):
    """Wrong password or a malformed exchange: 28P01 to the client, whose connection ends."""


@dataclass(frozen=True)
class Verifier:
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes

    @classmethod
    def from_password(cls, password: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> "Verifier":
        salt = salt or os.urandom(16)
        salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
        client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
        server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
        return cls(salt, iterations, hashlib.sha256(client_key).digest(), server_key)


def _attributes(text: str) -> dict[str, str]:
    pairs = {}
    for part in text.split(","):
        if len(part) < 2 or part[1] != "=":
            raise AuthFailed(f"malformed SCRAM attribute {part[:20]!r}")
        pairs[part[0]] = part[2:]
    return pairs


class ScramExchange:
    """One client's exchange: `first(client_first) -> server_first`, `final(client_final) -> server_final`."""

    def __init__(self, verifier: Verifier):
        self.verifier = verifier
        self.client_first_bare = ""
        self.server_first = ""
        self.nonce = ""
        self.gs2_header = ""

    def first(self, client_first: bytes) -> bytes:
        text = client_first.decode("utf-8", "replace")
        parts = text.split(",", 2)
        if len(parts) != 3 or parts[0] not in ("n", "y") or parts[1]:
            raise AuthFailed("unsupported SCRAM header (channel binding is not offered)")
        self.gs2_header = f"{parts[0]},{parts[1]},"
        self.client_first_bare = parts[2]
        attributes = _attributes(self.client_first_bare)
        client_nonce = attributes.get("r")
        if not client_nonce:
            raise AuthFailed("SCRAM client-first message has no nonce")
        self.nonce = client_nonce + base64.b64encode(secrets.token_bytes(18)).decode()
        salt = base64.b64encode(self.verifier.salt).decode()
        self.server_first = f"r={self.nonce},s={salt},i={self.verifier.iterations}"
        return self.server_first.encode()

    def final(self, client_final: bytes) -> bytes:
        text = client_final.decode("utf-8", "replace")
        without_proof, _, proof_part = text.rpartition(",p=")
        if not without_proof:
            raise AuthFailed("SCRAM client-final message has no proof")
        attributes = _attributes(without_proof)
        if attributes.get("r") != self.nonce:
            raise AuthFailed("SCRAM nonce mismatch")
        if attributes.get("c") != base64.b64encode(self.gs2_header.encode()).decode():
            raise AuthFailed("SCRAM channel binding mismatch")
        auth_message = f"{self.client_first_bare},{self.server_first},{without_proof}".encode()
        signature = hmac.new(self.verifier.stored_key, auth_message, hashlib.sha256).digest()
        try:
            proof = base64.b64decode(proof_part, validate=True)
        except ValueError:
            raise AuthFailed("SCRAM proof is not base64") from None
        if len(proof) != len(signature):
            raise AuthFailed("password authentication failed")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), self.verifier.stored_key):
            raise AuthFailed("password authentication failed")
        server_signature = hmac.new(self.verifier.server_key, auth_message, hashlib.sha256).digest()
        return b"v=" + base64.b64encode(server_signature)
