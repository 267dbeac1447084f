"""Session settings: the keys `SET` and `RESET` understand, their defaults, and how values are checked.

Flink's SQL client exposes its configuration as `SET 'key' = 'value'`; users bring those keys with them, so we
accept Flink's names where they mean the same thing here. Keys under `spark.` are passed to Spark unchanged.
Settings come, in increasing priority, from the defaults below, the config file (`<home>/config.properties`,
`key=value` lines), `-D key=value` on the command line, and `SET` in the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from shell import flink_settings
from shell.errors import OptionError
from shell.files import FileProblem, read_text
from shell.secrets import REDACTED, is_secret_key, remember_secret_options
from shell.sql.hints import suggest

if TYPE_CHECKING:
    import argparse

RESULT_MODES = ("table", "changelog", "tableau", "json", "csv")


def _positive_int(value: str) -> str:
    if not value.isdigit() or int(value) <= 0:
        raise ValueError("a positive integer")
    return value


def _one_of(*allowed: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value.lower() not in allowed:
            raise ValueError("one of " + ", ".join(allowed))
        return value.lower()

    return check


def _duration(value: str) -> str:
    from shell.units import parse_duration_ms

    parse_duration_ms(value)  # raises ValueError with a readable message
    return value


def _any(value: str) -> str:
    return value


def _count(value: str) -> str:
    if not value.strip().isdigit():
        raise ValueError("a whole number, 0 or more")
    return value.strip()


def _number_at_least(low: float, high: float | None = None) -> Callable[[str], str]:
    def check(value: str) -> str:
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is None or number < low or (high is not None and number > high):
            raise ValueError(f"a number from {low:g}" + (f" to {high:g}" if high is not None else " up"))
        return value.strip()

    return check


def _restart_kind(value: str) -> str:
    from shell.restart import strategy_kind

    return strategy_kind(value)


def machine_time_zone() -> str:
    """The machine's time zone id (TZ, else /etc/timezone, else the /etc/localtime link), UTC when none says."""
    import os

    zone = os.environ.get("TZ", "").lstrip(":")
    if not zone:
        try:
            zone = Path("/etc/timezone").read_text(encoding="utf-8").strip()
        except OSError:
            link = Path("/etc/localtime")
            zone = str(link.resolve()).split("zoneinfo/", 1)[1] if "zoneinfo/" in str(link.resolve()) else ""
    return zone or "UTC"


def _time_zone(value: str) -> str:
    import re
    import zoneinfo

    zone = value.strip()
    if zone == "default" or re.fullmatch(r"(GMT|UTC)?[+-]\d{1,2}(:\d{2})?", zone) or zone in ("UTC", "GMT", "Z"):
        return zone
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError("'default' or a time zone id such as 'UTC', 'Europe/Berlin' or 'GMT+08:00'") from None
    return zone


@dataclass(frozen=True)
class SettingSpec:
    """One known key: its default (None: unset) and a checker that normalizes a value or raises ValueError."""

    key: str
    default: str | None
    description: str
    check: Callable[[str], str] = _any


SETTINGS: dict[str, SettingSpec] = {
    s.key: s
    for s in (
        SettingSpec(
            "sql-client.execution.result-mode",
            None,
            "How SELECT results are shown: table, changelog, tableau, json or csv (default: table on a terminal, "
            "tableau otherwise).",
            _one_of(*RESULT_MODES),
        ),
        SettingSpec(
            "sql-client.execution.max-table-result.rows",
            "10000",
            "The most rows a SELECT result keeps for display; older rows are dropped first.",
            _positive_int,
        ),
        SettingSpec(
            "sql-client.display.max-rows-per-batch",
            "10000",
            "The most rows of one micro-batch a SELECT brings to the shell to show; the rest of the batch is "
            "counted, not shown, and the status line says so (\"showing N of M rows of batch K\"). Bounds the "
            "shell's memory when a batch is large (the first one over a long topic). Flink has no such key.",
            _positive_int,
        ),
        SettingSpec(
            "sql-client.display.max-column-width", "40", "Wider values are cut with an ellipsis.", _positive_int
        ),
        SettingSpec(
            "table.display.max-column-width",
            None,
            "Flink 1.20's name for sql-client.display.max-column-width; when set, it wins.",
            _positive_int,
        ),
        SettingSpec(
            "table.local-time-zone",
            "UTC",
            "The time zone of TIMESTAMP_LTZ values and of the functions that read or print local time "
            "(CURRENT_TIMESTAMP, DATE_FORMAT, TO_TIMESTAMP...): a zone id such as 'UTC', 'Europe/Berlin' or "
            "'GMT+08:00', or 'default' for the machine's (Spark's spark.sql.session.timeZone). Flink's default is "
            "the machine's zone; UTC here makes results the same on every machine.",
            _time_zone,
        ),
        SettingSpec(
            "python.files",
            None,
            "Python files (.py, .zip, .egg, .whl or folders, comma-separated) that user functions (CREATE FUNCTION "
            "... LANGUAGE PYTHON) import: put first on the shell's import path and given to Spark, whose executors "
            "import them too. Unset: the functions' modules must be installed.",
        ),
        SettingSpec("sql-client.verbose", "false", "Show tracebacks with errors.", _one_of("true", "false")),
        SettingSpec(
            "execution.runtime-mode", "streaming", "Only streaming is supported.", _one_of("streaming")
        ),
        SettingSpec(
            "execution.checkpointing.interval",
            None,
            "The least time between two micro-batches of a job (each is a checkpoint). Unset: a micro-batch starts "
            "as soon as input is waiting and the one before has ended, so results follow their input at once; a "
            "job with no input looks for some every spark.sql.streaming.pollingDelay (250 ms).",
            _duration,
        ),
        SettingSpec(
            "execution.latency",
            "normal",
            "'low' runs a query in Spark's real-time mode: each row is read, computed and written as it arrives "
            "(milliseconds, not a micro-batch's tenths of a second), in long-running batches of "
            "execution.checkpointing.interval (5 s when unset; a shorter one counts as 5 s, Spark's minimum) that "
            "each end in a checkpoint. It takes a query over Kafka tables ('connector' = 'kafka'; one, or several "
            "with UNION ALL) that filters and projects their rows, into a Kafka topic or a SELECT's view, and holds "
            "a task slot per partition for the query's life; any other query is refused with the reason. 'normal': "
            "micro-batches.",
            _one_of("normal", "low"),
        ),
        SettingSpec(
            "parallelism.default", None, "Partitions for shuffles (spark.sql.shuffle.partitions).", _positive_int
        ),
        SettingSpec("pipeline.name", None, "The name of the next job started by INSERT.", _any),
        SettingSpec(
            "execution.target",
            "detached",
            "Where INSERT and EXECUTE STATEMENT SET run their job: 'detached', a process of its own that outlives "
            "the shell (as Flink's application mode; any shell on the same home lists and stops it); 'embedded', "
            "inside the shell's own Spark (the job ends with the shell, as Flink's local mini-cluster).",
            _one_of("detached", "embedded"),
        ),
        SettingSpec(
            "table.dml-sync",
            None,
            "Whether an INSERT waits for its job to end before the next statement (and a script fails with a job that "
            "failed). Unset or 'false', as in Flink: an INSERT returns once its job runs, and a script ends after its "
            "last statement while its jobs run on (jobs inside the shell, 'execution.target' = 'embedded', are waited "
            "for at the end, since they end with it).",
            _one_of("true", "false"),
        ),
        SettingSpec(
            "table.exec.changelog.buckets",
            "16",
            "Key buckets of the changelog path's keyed stage (one Python call per touched bucket per micro-batch). "
            "A job keeps the count it first ran with (restarts, RESUME JOB and savepoints too).",
            _positive_int,
        ),
        SettingSpec(
            "table.exec.changelog.sub-buckets",
            "64",
            "Parts of a key bucket's state that a micro-batch reads and writes separately (only those it touches). "
            "A job keeps the count it first ran with.",
            _positive_int,
        ),
        SettingSpec(
            "table.exec.changelog.local-copies",
            "true",
            "The keyed stage also writes each sub-bucket it changes to a file on the executor, and reads that "
            "file instead of Spark's state store while it holds the version the state store holds (faster "
            "micro-batches; disk about the size of the job's state). false: read the state store only.",
            _one_of("true", "false"),
        ),
        SettingSpec(
            "table.exec.changelog.jvm-stages",
            "true",
            "The keyed join stage (an upsert table's current rows; joins of changelogs and upsert tables) runs on the "
            "JVM, as Spark's own operators do, instead of in Python: its micro-batches are shorter. It needs "
            "jvm/stages, which make setup builds; without it the Python stage runs. A job keeps what it first ran "
            "with (restarts, RESUME JOB and savepoints too). false: the Python stage.",
            _one_of("true", "false"),
        ),
        SettingSpec(
            "table.exec.changelog.sink-netting",
            "true",
            "A keyed join on the JVM whose rows go, column for column, to an upsert sink keyed by them gives one "
            "change per sink key and micro-batch itself (the row now, or its deletion), which the sink writes as "
            "it comes; false: the micro-batch is cached and netted per key before it is written (slower).",
            _one_of("true", "false"),
        ),
        SettingSpec(
            "table.exec.state.ttl",
            None,
            "How long a row of a keyed join's state (a join of changelogs or upsert tables, an upsert table's "
            "current rows) is kept without being written: then it is gone, as if it had never arrived, and nothing "
            "is emitted for it (Flink's state TTL, in processing time). A later change of its key finds no row to "
            "replace, so results may then differ from a job without it, as in Flink. A number alone is milliseconds, "
            "as in Flink. Unset or 0: kept for as long as "
            "the job runs. With a TTL, a join on keys of append-only tables runs in the keyed stage (Spark's "
            "stream-stream join keeps its rows for ever), and a join the Python stage would run is refused. "
            "Aggregations, Top-N, OVER and deduplication keep their state regardless. A job keeps the TTL its first "
            "run had (restarts, RESUME JOB).",
            _duration,
        ),
        SettingSpec(
            "table.exec.errors.interval",
            "10 s",
            "How often a stateful job's dead-letter query takes a micro-batch; never more often than the job. "
            "Only a table the job cannot read again by offset range has one (a topic pattern, a topic another "
            "table of the query reads, a filesystem table): it reads the table again to keep its bad records. "
            "Longer leaves the job more of the machine; SHOW ERRORS shows such a bad record up to this late.",
            _duration,
        ),
        SettingSpec(
            "execution.savepoint.path",
            None,
            "Start the next INSERT job from a copy of this savepoint (a job's directory or checkpoint, as STOP JOB "
            "... WITH SAVEPOINT prints it); used once.",
            _any,
        ),
        SettingSpec(
            "restart-strategy.type",
            "exponential-delay",
            "What a job does when its query fails: none, fixed-delay or exponential-delay (restarted from its "
            "checkpoint; exponential-delay is Flink's default for a job that checkpoints).",
            _restart_kind,
        ),
        SettingSpec(
            "restart-strategy.fixed-delay.attempts", "3", "Restarts before a failing job is FAILED.", _count
        ),
        SettingSpec("restart-strategy.fixed-delay.delay", "10 s", "Wait before each restart.", _duration),
        SettingSpec(
            "restart-strategy.exponential-delay.initial-backoff", "1 s", "Wait before the first restart.", _duration
        ),
        SettingSpec(
            "restart-strategy.exponential-delay.max-backoff", "1 min", "The longest wait between restarts.", _duration
        ),
        SettingSpec(
            "restart-strategy.exponential-delay.backoff-multiplier",
            "1.5",
            "Each wait is this many times the one before.",
            _number_at_least(1),
        ),
        SettingSpec(
            "restart-strategy.exponential-delay.jitter-factor",
            "0.1",
            "Each wait moves by up to this fraction of itself, at random.",
            _number_at_least(0, 1),
        ),
        SettingSpec(
            "restart-strategy.exponential-delay.attempts-before-reset-backoff",
            "15",
            "Restarts before a failing job is FAILED (counted again after reset-backoff-threshold).",
            _count,
        ),
        SettingSpec(
            "restart-strategy.exponential-delay.reset-backoff-threshold",
            "1 h",
            "A job that ran this long since its last restart starts with the initial backoff again.",
            _duration,
        ),
    )
}


@dataclass
class Settings:
    """The session's current values. `values` holds only what differs from the defaults."""

    values: dict[str, str] = field(default_factory=dict)
    # What RESET returns to: the values the session started with (its home's config.properties, -D, the command
    # line's options), as Flink's SQL client resets to its initial configuration, not past it to the defaults.
    initial: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        remember_secret_options(self.values)  # hidden wherever they show up in this process (shell/secrets.py)

    def keep_as_initial(self) -> None:
        """The current values are what RESET returns to from now on."""
        self.initial = dict(self.values)

    def get(self, key: str) -> str | None:
        if key in self.values:
            return self.values[key]
        spec = SETTINGS.get(key)
        return spec.default if spec else None

    def set(self, key: str, value: str) -> str | None:
        """Set `key` (a Flink name of one of our settings sets ours); returns a notice when the key is a Flink
        setting that has no effect here."""
        checked = check_setting(key, value)
        self.values[setting_key(key)] = checked
        remember_secret_options({key: value})
        return flink_notice(key, checked)

    def reset(self, key: str | None = None) -> None:
        """RESET: every value, or `key`'s, back to what the session started with (`initial`)."""
        if key is None:
            self.values = dict(self.initial)
            return
        name = setting_key(key)  # a Flink name of one of ours resets ours
        if name in self.initial:
            self.values[name] = self.initial[name]
        else:
            self.values.pop(name, None)

    def effective(self) -> dict[str, str]:
        """Every key that has a value, defaults included, sorted by key."""
        merged = {k: s.default for k, s in SETTINGS.items() if s.default is not None}
        merged.update(self.values)
        return dict(sorted(merged.items()))

    def trigger_ms(self) -> int:
        """A job's least time between micro-batches (`execution.checkpointing.interval`; 0 when unset)."""
        from shell.units import parse_duration_ms

        interval = self.get("execution.checkpointing.interval")
        return parse_duration_ms(interval) if interval else 0

    def spark_conf(self) -> dict[str, str]:
        """Settings that go to Spark: `spark.*` keys as they are, plus the Flink keys that map onto Spark's."""
        conf = {k: v for k, v in self.values.items() if k.startswith("spark.")}
        parallelism = self.get("parallelism.default")
        if parallelism:
            conf["spark.sql.shuffle.partitions"] = parallelism
        zone = self.get("table.local-time-zone")  # always given: a RESET must reach a running Spark too
        if zone:
            conf["spark.sql.session.timeZone"] = machine_time_zone() if zone == "default" else zone
        return conf


def setting_key(key: str) -> str:
    """The setting a key names: ours, or the one a Flink key means here (an old name: 'restart-strategy')."""
    meant = flink_settings.canonical(key)
    return meant if meant in SETTINGS else key


PARTLY_CARRIED_OUT = {  # our settings that carry out only part of what Flink's key of that name does
    "table.exec.state.ttl": "it expires the keyed join's rows (regular joins, an upsert table's current rows); "
                            "aggregations, Top-N, OVER and deduplication keep their state",
}


def _is_zero_duration(value: str) -> bool:
    from shell.units import parse_duration_ms

    try:
        return parse_duration_ms(value) == 0
    except ValueError:
        return False


def flink_notice(key: str, value: str | None = None) -> str | None:
    """What SET says of a Flink key that has no effect here, or of `value` of one carried out in part (None for a
    key that sets one of ours in full, or a duration of 0 that turns the partial one off)."""
    if setting_key(key) in SETTINGS:
        partly = PARTLY_CARRIED_OUT.get(setting_key(key))
        return None if partly is None or value is not None and _is_zero_duration(value) else partly
    return flink_settings.notice(key)


def check_setting(key: str, value: str) -> str:
    """Validate one `SET` pair; unknown keys are refused unless they are Spark's own (`spark.*`) or a Flink key
    that has no effect here (taken as it is: `flink_settings.notice` says why)."""
    if key.startswith("spark."):
        return value
    spec = SETTINGS.get(setting_key(key))
    if spec is None and flink_settings.no_effect(key) is not None:
        return value
    if spec is None:
        hint = suggest(key, [*SETTINGS, *flink_settings.KEYS])
        raise OptionError(
            f"unknown setting '{key}'",
            hint=hint or "SET; lists the known keys; keys under 'spark.' are passed to Spark",
        )
    try:
        return spec.check(value)
    except ValueError as exc:
        shown = REDACTED if is_secret_key(key) else value
        raise OptionError(f"setting '{key}' must be {exc}, got '{shown}'") from None


def read_config_file(path: Path, warn: Callable[[str], None] | None = None) -> dict[str, str]:
    """Read `key=value` lines (blank lines and `#` comments ignored) from an optional config file.

    With `warn`, what cannot be used is ignored and `warn` gets one line saying which file (and line) and what is
    wrong: a file that cannot be read at all (not UTF-8, a directory, no permission), a line that is not
    `key=value`, an unknown key or a bad value. The file is left as it is. Without `warn`, the first such problem
    is an OptionError.
    """

    def problem(message: str) -> None:
        if warn is None:
            raise OptionError(message)
        warn(message)

    if not path.exists():
        return {}
    try:
        text = read_text(path)
    except FileProblem as exc:
        problem(f"ignored {exc} (the shell starts without the settings in it)")
        return {}
    ignored = "; the line is ignored" if warn else ""
    pairs: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            shown = REDACTED if is_secret_key(line) else line
            problem(f"{path}:{number}: expected key=value, got '{shown}'{ignored}")
            continue
        try:
            check_setting(key.strip(), value.strip())
        except OptionError as exc:
            problem(f"{path}:{number}: {exc.message}{ignored}")
            continue
        said = flink_notice(key.strip(), value.strip())
        if said is not None and warn is not None:
            warn(f"{path}:{number}: {said}")
        pairs[setting_key(key.strip())] = value.strip()
    return pairs


def parse_defines(parser: "argparse.ArgumentParser", defines: list[str]) -> dict[str, str]:
    """The -D key=value flags of the command line (the shell's and the gateway's) as settings."""
    pairs = {}
    for item in defines:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            parser.error(f"-D expects key=value, got '{item}'")
        pairs[key.strip()] = value.strip()
    return pairs
