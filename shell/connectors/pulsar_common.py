"""What the Pulsar reader and writer share: options, clients, the admin REST calls and message positions.

Why it exists: the Spark data source for Pulsar (`pulsar_source`, `pulsar_sink`) runs in three kinds of Python
process (the driver's planner, Spark's Python workers for reads and writes); each builds what it needs from the
same parsed options, so everything here is plain, picklable data and stateless helpers. Nothing is shared
between processes: a client is created where it is used and closed there.

Positions. A partition's position is the id of the last message consumed, kept in Spark's offset log as the
base64 of `MessageId.serialize()`, or the marker `earliest` (nothing consumed yet). A position whose batch index
is -1 means "the whole entry (ledger, entry) is consumed", whether or not that entry holds a producer batch: the
reader starts after the entry and stops at its end. Entry arithmetic (how many entries lie between two positions,
which entry is the k-th after a position) uses the ledger list of the admin `internalStats` endpoint.

The client library's own warnings and errors go to CLIENT_LOG (in the temporary directory), never to the console.
"""

from __future__ import annotations

import base64
import json
import os
import re
import ssl
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple

from shell.secrets import redact_url_passwords

SHORT_NAME = "streamshell-pulsar"
EARLIEST = "earliest"
LATEST = "latest"
STARTUP_MODES = (EARLIEST, LATEST)
SERVICE_URL_SCHEMES = ("pulsar://", "pulsar+ssl://", "http://", "https://")  # the client also looks up over HTTP
DEFAULT_MAX_MESSAGES = 100_000
DEFAULT_TENANT_NAMESPACE = "public/default"
PARTITION_SUFFIX = re.compile(r"^(?P<base>.+)-partition-(?P<index>\d+)$")
HTTP_TIMEOUT_S = 30
CLIENT_LOG = os.path.join(tempfile.gettempdir(), "streamshell-pulsar-client.log")
# Batch index meaning "after every message of this entry": a reader started there skips the whole entry.
AFTER_ENTRY = 2**31 - 1


class PulsarOptionError(ValueError):
    """A missing or malformed option; the message is one line, meant for the user."""


class PulsarAdminError(RuntimeError):
    """The Pulsar admin REST API answered with an error, or could not be reached."""


@dataclass(frozen=True)
class PulsarConfig:
    """The options of one read or write, validated; picklable so that Spark can ship it to workers."""

    service_url: str
    admin_url: str | None = None
    topics: tuple[str, ...] = ()
    topic_pattern: str | None = None
    startup_mode: str = LATEST
    max_messages: int = DEFAULT_MAX_MESSAGES
    auth_plugin: str | None = None
    auth_params: str = field(default="", repr=False)  # secrets stay out of reprs and error messages
    token: str | None = field(default=None, repr=False)
    tls_trust_certs_file_path: str | None = None
    tls_allow_insecure_connection: bool = False

    def require_admin(self) -> str:
        if not self.admin_url:
            raise PulsarOptionError(
                "option 'admin-url' is required to read from Pulsar (partition discovery and latest positions "
                "use the admin REST API), e.g. 'http://127.0.0.1:8080'"
            )
        return self.admin_url

    def single_topic(self) -> str:
        if self.topic_pattern or len(self.topics) != 1:
            raise PulsarOptionError("writing to Pulsar needs exactly one 'topic' (no list, no 'topic-pattern')")
        return self.topics[0]


def parse_options(options: Mapping[str, str]) -> PulsarConfig:
    """Validate the data source options (keys are case-insensitive) into a PulsarConfig.

    Options this source does not use (`properties.*` from a Flink DDL, Spark's own such as `checkpointLocation`)
    are accepted and ignored; the SQL layer validates a table's options against its declaration.
    """
    opts = {str(k).lower(): v for k, v in options.items() if v is not None}
    service_url = (opts.get("service-url") or "").strip()
    if not service_url:
        raise PulsarOptionError("option 'service-url' is required, e.g. 'pulsar://127.0.0.1:6650'")
    if not service_url.startswith(SERVICE_URL_SCHEMES):
        shown = redact_url_passwords(service_url)
        raise PulsarOptionError(f"option 'service-url' must start with pulsar:// or pulsar+ssl://, got '{shown}'")
    admin_url = (opts.get("admin-url") or "").strip().rstrip("/") or None
    if admin_url and not admin_url.startswith(("http://", "https://")):
        shown = redact_url_passwords(admin_url)
        raise PulsarOptionError(f"option 'admin-url' must start with http:// or https://, got '{shown}'")
    topics, pattern = _parse_topics(opts)
    mode = (opts.get("scan.startup.mode") or LATEST).strip().lower()
    if mode not in STARTUP_MODES:
        raise PulsarOptionError(f"option 'scan.startup.mode' must be one of {', '.join(STARTUP_MODES)}, got '{mode}'")
    return PulsarConfig(
        service_url=service_url,
        admin_url=admin_url,
        topics=topics,
        topic_pattern=pattern,
        startup_mode=mode,
        max_messages=_positive_int(opts, "source.max-messages-per-trigger", DEFAULT_MAX_MESSAGES),
        auth_plugin=(opts.get("auth-plugin") or "").strip() or None,
        auth_params=opts.get("auth-params") or "",
        token=(opts.get("authentication.token") or "").strip() or None,
        tls_trust_certs_file_path=(opts.get("tls-trust-certs-file-path") or "").strip() or None,
        tls_allow_insecure_connection=_bool(opts, "tls-allow-insecure-connection"),
    )


def _parse_topics(opts: dict[str, str]) -> tuple[tuple[str, ...], str | None]:
    names = [t.strip() for t in (opts.get("topic") or "").split(",") if t.strip()]
    pattern = (opts.get("topic-pattern") or "").strip() or None
    if names and pattern:
        raise PulsarOptionError("options 'topic' and 'topic-pattern' exclude each other; give one")
    if not names and not pattern:
        raise PulsarOptionError("option 'topic' (one or a comma-separated list) or 'topic-pattern' is required")
    if pattern:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise PulsarOptionError(f"option 'topic-pattern' is not a valid regular expression: {exc}") from None
    return tuple(dict.fromkeys(normalize_topic(n) for n in names)), pattern


def _positive_int(opts: dict[str, str], key: str, default: int) -> int:
    raw = opts.get(key)
    if raw is None or not str(raw).strip():
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise PulsarOptionError(f"option '{key}' must be a positive integer, got '{raw}'")
    return value


def _bool(opts: dict[str, str], key: str) -> bool:
    raw = str(opts.get(key) or "false").strip().lower()
    if raw not in ("true", "false"):
        raise PulsarOptionError(f"option '{key}' must be true or false, got '{raw}'")
    return raw == "true"


# ---- topic names ---------------------------------------------------------------------------------------------


def normalize_topic(name: str) -> str:
    """'t' -> 'persistent://public/default/t'; 'tenant/ns/t' -> 'persistent://tenant/ns/t'."""
    if "://" in name:
        domain, rest = name.split("://", 1)
        if domain != "persistent":
            raise PulsarOptionError(f"only persistent topics can be used, got '{name}'")
        if rest.count("/") != 2:
            raise PulsarOptionError(f"topic '{name}' must look like persistent://tenant/namespace/topic")
        return name
    parts = name.split("/")
    if len(parts) == 1:
        return f"persistent://{DEFAULT_TENANT_NAMESPACE}/{name}"
    if len(parts) == 3:
        return f"persistent://{name}"
    raise PulsarOptionError(f"topic '{name}' must be 'topic', 'tenant/namespace/topic' or a full persistent:// name")


def pattern_namespace(pattern: str) -> tuple[str, re.Pattern[str]]:
    """The 'tenant/namespace' a topic pattern lists, and the regex matched against full topic names.

    'persistent://tenant/ns/regex' and 'tenant/ns/regex' name their namespace; a bare 'regex' means public/default.
    """
    body = pattern.split("://", 1)[1] if pattern.startswith("persistent://") else pattern
    parts = body.split("/", 2)
    if len(parts) == 3:
        namespace, local = f"{parts[0]}/{parts[1]}", parts[2]
    else:
        namespace, local = DEFAULT_TENANT_NAMESPACE, body
    return namespace, re.compile(f"persistent://{re.escape(namespace)}/(?:{local})")


def split_partition(topic: str) -> tuple[str, int]:
    """'...t-partition-2' -> ('...t', 2); a non-partitioned topic -> (topic, -1), as Pulsar numbers it."""
    match = PARTITION_SUFFIX.match(topic)
    if match is None:
        return topic, -1
    return match.group("base"), int(match.group("index"))


def partition_names(topic: str, count: int) -> list[str]:
    return [topic] if count <= 0 else [f"{topic}-partition-{i}" for i in range(count)]


# ---- positions -----------------------------------------------------------------------------------------------


class Position(NamedTuple):
    """Where a partition was read up to: the last consumed (ledger, entry, batch index); -1 = whole entry."""

    ledger: int
    entry: int
    batch: int = -1

    def sort_key(self) -> tuple[int, int, int]:
        return (self.ledger, self.entry, self.batch if self.batch >= 0 else AFTER_ENTRY)

    def entry_key(self) -> tuple[int, int]:
        return (self.ledger, self.entry)

    def message_id(self, partition: int = -1):
        import _pulsar

        return _pulsar.MessageId(partition, self.ledger, self.entry, self.batch)

    def start_id(self, partition: int = -1):
        """The id to start a Reader at (exclusive) so that it returns the first message after this position."""
        import _pulsar

        batch = AFTER_ENTRY if self.batch < 0 else self.batch
        return _pulsar.MessageId(partition, self.ledger, self.entry, batch)


def encode_position(position: Position | None, partition: int = -1) -> str:
    if position is None:
        return EARLIEST
    return base64.b64encode(position.message_id(partition).serialize()).decode("ascii")


def decode_position(value: str) -> Position | None:
    """The inverse of encode_position: None stands for `earliest` (nothing consumed)."""
    if value == EARLIEST:
        return None
    import _pulsar

    try:
        mid = _pulsar.MessageId.deserialize(base64.b64decode(value))
    except Exception as exc:  # a corrupt or foreign offset: say which
        raise ValueError(f"not a Pulsar position: {value!r} ({exc})") from None
    return Position(mid.ledger_id(), mid.entry_id(), mid.batch_index())


def is_after(latest: Position | None, start: Position | None) -> bool:
    """Whether `latest` lies beyond `start`, i.e. there are messages to read in (start, latest]."""
    if latest is None:
        return False
    return start is None or latest.sort_key() > start.sort_key()


# ---- entry arithmetic over the ledger list -------------------------------------------------------------------


def ledger_entries(internal_stats: Mapping[str, Any]) -> list[tuple[int, int]]:
    """[(ledger id, number of entries)] in order, from an `internalStats` answer.

    The ledger being written shows 0 entries in the list; its count comes from `lastConfirmedEntry`.
    """
    lce_ledger, lce_entry = _parse_lce(internal_stats.get("lastConfirmedEntry"))
    result = []
    for ledger in internal_stats.get("ledgers") or []:
        lid, entries = int(ledger["ledgerId"]), int(ledger.get("entries") or 0)
        if lid == lce_ledger:
            entries = lce_entry + 1
        elif lce_ledger is not None and lid > lce_ledger:
            entries = 0
        result.append((lid, max(0, entries)))
    return result


def _parse_lce(value: Any) -> tuple[int | None, int]:
    try:
        ledger, entry = str(value).split(":")
        return int(ledger), int(entry)
    except (ValueError, AttributeError):
        return None, -1


def _entry_range(ledger: int, size: int, start: Position | None, end: Position) -> tuple[int, int]:
    """The entries [lo, hi] of one ledger that lie in (start, end]; empty when lo > hi."""
    if start is None or ledger > start.ledger:
        lo = 0
    elif ledger == start.ledger:
        lo = start.entry + 1
    else:
        lo = size
    if ledger < end.ledger:
        hi = size - 1
    elif ledger == end.ledger:
        hi = min(end.entry, size - 1)
    else:
        hi = -1
    return lo, hi


def count_entries(ledgers: list[tuple[int, int]], start: Position | None, end: Position) -> int:
    """How many entries lie after `start` up to and including `end`."""
    total = 0
    for ledger, size in ledgers:
        lo, hi = _entry_range(ledger, size, start, end)
        total += max(0, hi - lo + 1)
    return total


def advance(ledgers: list[tuple[int, int]], start: Position | None, end: Position, k: int) -> Position | None:
    """The k-th entry after `start` (not beyond `end`), as a whole-entry position; None if there is none."""
    remaining = k
    for ledger, size in ledgers:
        lo, hi = _entry_range(ledger, size, start, end)
        available = max(0, hi - lo + 1)
        if available >= remaining:
            return Position(ledger, lo + remaining - 1, -1)
        remaining -= available
    return None


def last_entry_before(ledgers: list[tuple[int, int]], ledger: int) -> Position | None:
    """The last entry stored in a ledger older than `ledger` (used when the current ledger is still empty)."""
    for lid, size in reversed(ledgers):
        if lid < ledger and size > 0:
            return Position(lid, size - 1, -1)
    return None


# ---- clients -------------------------------------------------------------------------------------------------


def client_logger():
    """Where the client's C++ library logs: warnings and errors only, to CLIENT_LOG, never to the console.

    A Python `logging.Logger` would be quiet too, but the library then formats every DEBUG line and calls into
    Python for it (two per message sent: measured to cost more than the send itself); a FileLogger filters by
    level in C++.
    """
    import pulsar

    return pulsar.FileLogger(pulsar.LoggerLevel.Warn, CLIENT_LOG)


def authentication(config: PulsarConfig):
    import pulsar

    if config.token:
        return pulsar.AuthenticationToken(config.token)
    if config.auth_plugin:
        return pulsar.Authentication(config.auth_plugin, config.auth_params)
    return None


def create_client(config: PulsarConfig):
    """A new pulsar.Client for this process; the caller closes it."""
    import pulsar

    kwargs: dict[str, Any] = {"logger": client_logger(), "authentication": authentication(config)}
    if config.tls_trust_certs_file_path:
        kwargs["tls_trust_certs_file_path"] = config.tls_trust_certs_file_path
    if config.tls_allow_insecure_connection:
        kwargs["tls_allow_insecure_connection"] = True
    return pulsar.Client(config.service_url, **kwargs)


# ---- admin REST ----------------------------------------------------------------------------------------------


class PulsarAdmin:
    """The few admin REST calls the reader needs; one HTTP request each, no state but the URL and headers."""

    def __init__(self, config: PulsarConfig):
        self.base = config.require_admin()
        self.headers = admin_auth_headers(config)
        self.ssl_context = _ssl_context(config) if self.base.startswith("https://") else None

    def get(self, path: str, missing: Any = None) -> Any:
        """GET a JSON document; `missing` when the broker answers 404 (no such topic)."""
        answer = self._request(path)
        if answer is None:
            return missing
        body = answer[1]
        return json.loads(body) if body else None

    def _request(self, path: str) -> tuple[Any, bytes] | None:
        """(headers, body) of a GET, None on 404; other failures raise PulsarAdminError."""
        url = self.base + path
        request = urllib.request.Request(url, headers={"Accept": "application/json", **self.headers})
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S, context=self.ssl_context) as response:
                return response.headers, response.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise PulsarAdminError(f"Pulsar admin GET {url} failed: HTTP {exc.code} {_reason(exc)}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise PulsarAdminError(f"cannot reach the Pulsar admin API at {self.base}: {reason}") from None

    def partition_count(self, topic: str) -> int:
        """N for a partitioned topic, 0 for a non-partitioned (or not yet existing) one."""
        answer = self.get(f"{topic_path(topic)}/partitions", missing={})
        return int((answer or {}).get("partitions") or 0)

    def namespace_topics(self, namespace: str) -> list[str]:
        """Every persistent topic of the namespace: partitioned topics by their base name, others as they are."""
        quoted = urllib.parse.quote(namespace)
        partitioned = set(self.get(f"/admin/v2/persistent/{quoted}/partitioned", missing=[]) or [])
        plain = self.get(f"/admin/v2/persistent/{quoted}", missing=[]) or []
        names = set(partitioned)
        for name in plain:
            base, index = split_partition(name)
            if index < 0 or base not in partitioned:
                names.add(name)
        return sorted(n for n in names if not n.rsplit("/", 1)[-1].startswith("__"))  # no system topics

    def last_message_id(self, topic: str) -> dict | None:
        return self.get(f"{topic_path(topic)}/lastMessageId")

    def internal_stats(self, topic: str) -> dict | None:
        return self.get(f"{topic_path(topic)}/internalStats")

    def messages_per_entry(self, topic: str, internal_stats: Mapping[str, Any] | None, latest: Position) -> float:
        """About how many messages an entry of this topic holds (producers batch messages into entries).

        The broker's own counters since the topic was loaded when it has taken writes since; otherwise the size of
        the latest entry's batch. Admission control needs it to turn a message budget into an entry budget.
        """
        entries = int((internal_stats or {}).get("entriesAddedCounter") or 0)
        if entries > 0:
            stats = self.get(f"{topic_path(topic)}/stats") or {}
            return max(1.0, int(stats.get("msgInCounter") or 0) / entries)
        return float(latest.batch + 1) if latest.batch >= 0 else 1.0

    def entry_batch_size(self, topic: str, ledger: int, entry: int) -> int:
        """How many messages one stored entry holds (1 unless a producer batched them)."""
        answer = self._request(f"{topic_path(topic)}/ledger/{ledger}/entry/{entry}")
        if answer is None:
            return 1
        return int(answer[0].get("X-Pulsar-num-batch-message") or 1)

    def latest_position(self, topic: str) -> Position | None:
        """The position of the last message stored in a (partition) topic; None when it holds none."""
        answer = self.last_message_id(topic)
        if not answer:
            return None
        position = Position(int(answer["ledgerId"]), int(answer["entryId"]), int(answer.get("batchIndex", -1)))
        if position.entry >= 0:
            return position
        # The current ledger is empty (a new topic, or one just reloaded): the last entry is in an older ledger,
        # and its last batch index is read from the entry itself.
        last = last_entry_before(ledger_entries(self.internal_stats(topic) or {}), position.ledger)
        if last is None:
            return None
        size = self.entry_batch_size(topic, last.ledger, last.entry)
        return Position(last.ledger, last.entry, size - 1 if size > 1 else -1)


def topic_path(topic: str) -> str:
    domain, rest = topic.split("://", 1)
    return f"/admin/v2/{domain}/" + "/".join(urllib.parse.quote(part, safe="") for part in rest.split("/"))


def admin_auth_headers(config: PulsarConfig) -> dict[str, str]:
    """The Authorization header for the admin API: tokens and basic auth; other plugins send none."""
    if config.token:
        return {"Authorization": f"Bearer {config.token}"}
    plugin = (config.auth_plugin or "").lower()
    params = config.auth_params or ""
    if plugin == "token" or plugin.endswith("authenticationtoken"):
        token = params.split("token:", 1)[1] if params.startswith("token:") else ""
        if params.startswith("file:"):
            with open(params[len("file:"):].removeprefix("//"), encoding="utf-8") as handle:
                token = handle.read().strip()
        return {"Authorization": f"Bearer {token}"} if token else {}
    if plugin == "basic" or plugin.endswith("authenticationbasic"):
        try:
            values = json.loads(params)
        except ValueError:
            return {}
        user = values.get("username", values.get("userId", ""))  # the C++ client's key, then Java's
        pair = f"{user}:{values.get('password', '')}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
    return {}


def _ssl_context(config: PulsarConfig) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=config.tls_trust_certs_file_path)
    if config.tls_allow_insecure_connection:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _reason(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read().decode("utf-8", "replace")
        return str(json.loads(body).get("reason") or body).splitlines()[0][:300]
    except Exception:
        return str(exc.reason)
