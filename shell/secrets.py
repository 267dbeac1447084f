"""Which option keys hold secrets, and how SQL text is shown with their values hidden.

Why it exists: passwords and tokens are typed into `WITH (...)` and `SET` statements, and that text is kept (the
REPL's history file) or shown (SHOW CREATE TABLE, error messages). One test of "does this key look secret" keeps
the REPL, the session and the connectors in agreement; `redact_sql` applies it to free SQL text.
"""

from __future__ import annotations

import re

REDACTED = "****"

# A key is secret when one of these appears in it, ignoring case (`properties.sasl.jaas.config`, `authParams`).
SECRET_MARKERS = ("password", "passwd", "secret", "token", "auth", "sasl.jaas", "credential", "private-key", "private.key")

_QUOTED = r"'(?:[^']|'')*'"
# 'key' = 'value' (WITH options, SET 'k' = 'v'); an unterminated value runs to the end of the text.
_QUOTED_PAIR = re.compile(rf"(?P<key>{_QUOTED})(?P<eq>\s*=\s*)(?P<value>'(?:[^']|'')*(?:'|$))")
# SET key = value, without quotes (accepted by Flink's client).
_BARE_SET = re.compile(r"(?im)^(?P<head>\s*SET\s+)(?P<key>[\w.\-]+)(?P<eq>\s*=\s*)(?P<value>[^;\n]*)")


def is_secret_key(key: str) -> bool:
    """Whether values of the option or setting `key` must never be stored or shown."""
    lowered = key.strip().strip("'`\"").lower()
    return any(marker in lowered for marker in SECRET_MARKERS)


def redact_sql(text: str) -> str:
    """`text` with the values of secret-looking keys replaced by '****' (everything else unchanged)."""

    def quoted(match: re.Match) -> str:
        key = match.group("key")[1:-1].replace("''", "'")
        if not is_secret_key(key):
            return match.group(0)
        return f"{match.group('key')}{match.group('eq')}'{REDACTED}'"

    def bare(match: re.Match) -> str:
        if not is_secret_key(match.group("key")) or not match.group("value").strip():
            return match.group(0)
        return f"{match.group('head')}{match.group('key')}{match.group('eq')}{REDACTED}"

    return _BARE_SET.sub(bare, _QUOTED_PAIR.sub(quoted, text))
