"""Which option keys hold secrets, and the one redaction that text passes through before it is shown or kept.

Why it exists: passwords, tokens and keys are typed into `WITH (...)` and `SET` statements, and that text is kept
(the REPL's history file) or shown (SHOW CREATE TABLE, `SET;`, error messages). One test of "does this key look
secret" (`is_secret_key`) keeps the REPL, the session, the settings and the connectors in agreement, and one
function (`redact`) hides secrets in free text: values of secret-looking keys (`'k' = 'v'`, `SET k = v`,
`k=v`) and passwords inside URLs (`scheme://user:****@host`, and `user:****@host:9093` without a scheme, as
Kafka's bootstrap servers are written; `host:9093` and `user@example.com` hold no password and stay).

A key is secret when its connector declares it so (`declare_secret_keys`, from the connectors' option specs), or
when it looks secret: one of SECRET_MARKERS appears in it (separators ignored), or its last part is `key` and the
part before does not name a data key (`access-key`, `api-key`, `ssl.keystore.key`, `fs.s3a.access.key` are
secret; `primary-key`, `message.key`, `key.fields` are not).
"""

from __future__ import annotations

import re
from typing import Iterable

REDACTED = "****"

# A key is secret when one of these appears in it, ignoring case and the separators '.', '-' and '_'
# (`properties.sasl.jaas.config`, `authParams`, `auth-params`, `basic.auth.user.info`, `fs.azure.account.key.<a>`).
SECRET_MARKERS = (
    "password", "passwd", "passphrase", "secret", "token", "authparams", "sasljaas", "credential", "privatekey",
    "userinfo", "accountkey", "accesskey", "apikey",
)  # fmt: skip

# `<word> key` names a data key, not a credential, for these words (`primary-key`, `message.key`, `map-null-key`).
DATA_KEY_WORDS = frozenset(
    {
        "primary", "message", "partition", "record", "row", "sort", "routing", "foreign", "unique", "group", "join",
        "hash", "order", "ordering", "bucket", "shard", "event", "lookup", "cache", "state", "null", "map", "dedup",
        "upsert", "missing",
    }
)  # fmt: skip

_DECLARED: set[str] = set()  # exact keys the connectors declare secret (lower-cased)

# Secret values this process has been given (options of its tables, settings, values seen by `redact`): hidden
# wherever they appear, also where no key names them (a JVM exception quoting a URL or a connection string).
MIN_KNOWN_LENGTH = 6  # shorter values ('kafka', '1000') would hide ordinary words
MAX_KNOWN = 1000  # the newest kept: a shell holds a handful; the bound keeps `redact` fast whatever happens
_KNOWN: dict[str, None] = {}  # in the order they were given
_known_pattern: re.Pattern | None = None

_SEPARATORS = re.compile(r"[.\-_\s/]+")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")  # camelCase: apiKey -> api, Key

_QUOTED = r"'(?:[^']|'')*'"
# 'key' = 'value' (WITH options, SET 'k' = 'v'); an unterminated value runs to the end of the text.
_QUOTED_PAIR = re.compile(rf"(?P<key>{_QUOTED})(?P<eq>\s*=\s*)(?P<value>'(?:[^']|'')*(?:'|$))")
# SET key = value, without quotes (accepted by Flink's client).
_BARE_SET = re.compile(r"(?im)^(?P<head>\s*SET\s+)(?P<key>[\w.\-]+)(?P<eq>\s*=\s*)(?P<value>[^;\n]*)")
# key=value inside free text (JAAS configs, URL query strings, `-D` pairs): no space around '='.
_INLINE_PAIR = re.compile(r"(?P<key>(?<![\w.\-])[A-Za-z][\w.\-]*)=(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;&'\"]+)")
# scheme://user:password@host; a password as RFC 3986 allows it (no raw '/', '@' or space).
# The scheme starts where a word does (the look-behind keeps a long run of letters linear, not quadratic).
_URL_PASSWORD = re.compile(
    r"(?P<head>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"]*:)(?P<password>[^\s/@'\"]+)(?=@)"
)

# user:password@host without a scheme (`bob:secret@broker:9093`, `a:s1@h1:9093,b:s2@h2:9093`): the user starts the
# text or follows a blank, a quote, ',', ';', '=' or '(' (none of which a user or a password here holds, so each run
# of them is tried from its start only: linear), and a host follows the '@'. `mailto:x@host` is an address.
_BARE_USERINFO = re.compile(
    r"(?P<head>(?:^|(?<=[\s'\",;=(]))(?!mailto:)[^\s/@'\",;=():]+:)(?P<password>[^\s/@'\",;=()]+)"
    r"(?=@[A-Za-z0-9\[])"
)


def declare_secret_keys(keys: Iterable[str]) -> None:
    """Add option keys a connector declares secret (exact names; patterns with '*' or '#' are skipped)."""
    _DECLARED.update(k.lower() for k in keys if "*" not in k and "#" not in k)


def is_secret_key(key: str) -> bool:
    """Whether values of the option or setting `key` must never be stored or shown."""
    cleaned = key.strip().strip("'`\"")
    if cleaned.lower() in _DECLARED:
        return True
    squeezed = _SEPARATORS.sub("", cleaned).lower()
    if any(marker in squeezed for marker in SECRET_MARKERS):
        return True
    words = [w.lower() for part in _SEPARATORS.split(cleaned) for w in _WORDS.findall(part)]
    return len(words) >= 2 and words[-1] == "key" and words[-2] not in DATA_KEY_WORDS


def remember_secret(value: str) -> None:
    """Hide `value` wherever it appears in text passed to `redact` from now on (in this process)."""
    global _known_pattern
    value = value.strip()
    if len(value) >= MIN_KNOWN_LENGTH and value != REDACTED and "${env:" not in value and value not in _KNOWN:
        _KNOWN[value] = None
        while len(_KNOWN) > MAX_KNOWN:
            del _KNOWN[next(iter(_KNOWN))]
        _known_pattern = re.compile("|".join(re.escape(v) for v in sorted(_KNOWN, key=len, reverse=True)))


def remember_secret_options(options: dict[str, str]) -> None:
    """Remember the values of the secret options (or settings) in `options`."""
    for key, value in options.items():
        if isinstance(value, str) and is_secret_key(key):
            remember_secret(value)


def redact_url_passwords(text: str) -> str:
    """`text` with the password of every `scheme://user:password@host` and `user:password@host` replaced by '****'."""
    for pattern in (_URL_PASSWORD, _BARE_USERINFO):
        text = pattern.sub(lambda m: f"{m.group('head')}{REDACTED}", text)
    return text


def redact_value(key: str, value: str) -> str:
    """How the value of option or setting `key` may be shown: '****' for a secret, else without URL passwords."""
    return REDACTED if is_secret_key(key) else redact_url_passwords(value)


def redact(text: str) -> str:
    """`text` (SQL, a message, a log line) with every secret this module can recognize replaced by '****'.

    Values of secret-looking keys in `'k' = 'v'`, `SET k = v` and `k=v` pairs, passwords in URLs, and every
    secret value this process was given or has hidden before (`remember_secret`); everything else is unchanged.
    """
    return redact_with_positions(text, ())[0]


def redact_with_positions(text: str, positions: Iterable[int]) -> tuple[str, list[int]]:
    """`redact(text)`, and where each 0-based index of `text` in `positions` is in it: an index after a hidden
    value moves by what the redaction removed, one inside a hidden value stays within its '****'. An error's
    faulty line is shown redacted, with its caret still under the fault (shell/errors.py)."""

    def quoted(match: re.Match) -> str:
        key = match.group("key")[1:-1].replace("''", "'")
        if not is_secret_key(key):
            return match.group(0)
        remember_secret(match.group("value").strip("'").replace("''", "'"))
        return f"{match.group('key')}{match.group('eq')}'{REDACTED}'"

    def bare(match: re.Match) -> str:
        if not is_secret_key(match.group("key")) or not match.group("value").strip():
            return match.group(0)
        remember_secret(match.group("value"))
        return f"{match.group('head')}{match.group('key')}{match.group('eq')}{REDACTED}"

    def inline(match: re.Match) -> str:
        if not is_secret_key(match.group("key")):
            return match.group(0)
        value = match.group("value")
        quote = value[0] if value[:1] in ("'", '"') else ""
        remember_secret(value.strip(quote) if quote else value)
        return f"{match.group('key')}={quote}{REDACTED}{quote}"

    def url(match: re.Match) -> str:
        remember_secret(match.group("password"))
        return f"{match.group('head')}{REDACTED}"

    def known(match: re.Match) -> str:
        return REDACTED

    moved = list(positions)
    for pattern, replace in ((_QUOTED_PAIR, quoted), (_BARE_SET, bare), (_INLINE_PAIR, inline), (_URL_PASSWORD, url),
                             (_BARE_USERINFO, url)):
        text, moved = _substitute(pattern, replace, text, moved)
    if _known_pattern is not None:
        text, moved = _substitute(_known_pattern, known, text, moved)
    return text, moved


def _substitute(pattern: re.Pattern, replace, text: str, positions: list[int]) -> tuple[str, list[int]]:  # noqa: ANN001
    """`pattern.sub(replace, text)`, with `positions` moved as the text around them moved."""
    pieces: list[str] = []
    changes: list[tuple[int, int, int]] = []  # (start, end, length of the replacement) in the text before
    last = 0
    for match in pattern.finditer(text):
        new = replace(match)
        if new == match.group(0):
            continue
        pieces += [text[last : match.start()], new]
        changes.append((match.start(), match.end(), len(new)))
        last = match.end()
    if not changes:
        return text, positions

    def moved(position: int) -> int:
        shift = 0
        for start, end, size in changes:
            if position < start:
                break
            if position < end:
                return start + shift + min(position - start, size - 1)
            shift += size - (end - start)
        return position + shift

    return "".join(pieces) + text[last:], [moved(p) for p in positions]
