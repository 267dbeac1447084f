"""Session settings: defaults, validation, config file, and the keys that reach Spark."""

import pytest

from shell.config import Settings, check_setting, read_config_file
from shell.errors import OptionError
from shell.units import parse_duration_ms


@pytest.mark.parametrize(
    "text, ms",
    [("1 s", 1000), ("500ms", 500), ("500", 500), ("5 min", 300_000), ("2 h", 7_200_000), ("1.5s", 1500)],
)
def test_durations(text, ms):
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["", "s", "5 fortnights", "-1 s", "one second"])
def test_bad_durations_name_the_accepted_form(text):
    with pytest.raises(ValueError, match="duration such as"):
        parse_duration_ms(text)


def test_defaults_and_overrides():
    settings = Settings()
    assert settings.get("sql-client.execution.max-table-result.rows") == "10000"
    settings.set("sql-client.execution.max-table-result.rows", "50")
    assert settings.get("sql-client.execution.max-table-result.rows") == "50"
    settings.reset("sql-client.execution.max-table-result.rows")
    assert settings.get("sql-client.execution.max-table-result.rows") == "10000"


def test_result_mode_is_normalized_and_checked():
    assert check_setting("sql-client.execution.result-mode", "TABLEAU") == "tableau"
    with pytest.raises(OptionError, match="must be one of table, changelog, tableau, json"):
        check_setting("sql-client.execution.result-mode", "grid")


def test_unknown_key_suggests_the_close_one():
    with pytest.raises(OptionError) as info:
        check_setting("sql-client.execution.result-mod", "table")
    assert info.value.hint == "did you mean sql-client.execution.result-mode?"


def test_spark_keys_pass_through_and_parallelism_maps_to_shuffle_partitions():
    settings = Settings()
    settings.set("spark.sql.ansi.enabled", "true")
    settings.set("parallelism.default", "3")
    assert settings.spark_conf() == {"spark.sql.ansi.enabled": "true", "spark.sql.shuffle.partitions": "3",
                                     "spark.sql.session.timeZone": "UTC"}


def test_config_file(tmp_path):
    path = tmp_path / "config.properties"
    path.write_text("# comment\n\nsql-client.display.max-column-width = 20\n")
    assert read_config_file(path) == {"sql-client.display.max-column-width": "20"}
    path.write_text("no equals sign here\n")
    with pytest.raises(OptionError, match="config.properties:1: expected key=value"):
        read_config_file(path)
    assert read_config_file(tmp_path / "missing") == {}


def test_dead_letter_queries_run_less_often_than_their_job_unless_bounded(tmp_path):
    """A stateful job's dead-letter query reads the sources again: by default every 10 s, never more often than
    the job, and to the end of a bounded input like the job."""
    from types import SimpleNamespace

    from shell.engine.dead_letter_queries import dead_letter_trigger
    from shell.engine.run_context import RunContext

    assert Settings().get("table.exec.errors.interval") == "10 s"
    unbounded, bounded = SimpleNamespace(bounded=False), SimpleNamespace(bounded=True)
    run = RunContext(spark=None, work_dir=tmp_path, trigger_ms=1000, errors_trigger_ms=10_000)
    assert dead_letter_trigger(unbounded, run) == {"processingTime": "10000 milliseconds"}
    assert dead_letter_trigger(bounded, run) == {"availableNow": True}
    slow_job = RunContext(spark=None, work_dir=tmp_path, trigger_ms=30_000, errors_trigger_ms=10_000)
    assert dead_letter_trigger(unbounded, slow_job) == {"processingTime": "30000 milliseconds"}
    with pytest.raises(OptionError):
        check_setting("table.exec.errors.interval", "often")


def test_the_local_time_zone_reaches_spark_and_a_wrong_zone_is_refused(monkeypatch):
    settings = Settings()
    assert settings.get("table.local-time-zone") == "UTC"
    settings.set("table.local-time-zone", "Asia/Shanghai")
    assert settings.spark_conf()["spark.sql.session.timeZone"] == "Asia/Shanghai"
    settings.set("table.local-time-zone", "GMT+08:00")
    assert settings.spark_conf()["spark.sql.session.timeZone"] == "GMT+08:00"
    monkeypatch.setenv("TZ", "Europe/Berlin")
    settings.set("table.local-time-zone", "default")
    assert settings.spark_conf()["spark.sql.session.timeZone"] == "Europe/Berlin", "'default' is the machine's"
    with pytest.raises(OptionError, match="time zone id"):
        check_setting("table.local-time-zone", "Mars/Olympus")


def test_flinks_newer_column_width_key_wins_over_the_older_one(tmp_path):
    from shell.session import Session, SessionOptions

    session = Session(SessionOptions(home=tmp_path, settings={"sql-client.display.max-column-width": "20"}))
    assert session.max_column_width() == 20
    session.settings.set("table.display.max-column-width", "12")
    assert session.max_column_width() == 12
    session.close()


def test_reset_returns_to_the_values_the_session_started_with_not_past_them():
    """As Flink's SQL client: RESET goes back to the initial configuration (config file, -D), so a gateway's or a
    shell's start-up settings survive a client's RESET."""
    from shell.config import Settings

    settings = Settings()
    settings.set("sql-client.display.max-rows-per-batch", "1000000")  # as -D or config.properties give it
    settings.keep_as_initial()
    settings.set("sql-client.display.max-rows-per-batch", "5")
    settings.set("sql-client.execution.result-mode", "changelog")

    settings.reset("sql-client.display.max-rows-per-batch")
    assert settings.get("sql-client.display.max-rows-per-batch") == "1000000"
    settings.reset("sql-client.execution.result-mode")  # not set at the start: back to its default
    assert settings.get("sql-client.execution.result-mode") == Settings().get("sql-client.execution.result-mode")

    settings.set("sql-client.display.max-rows-per-batch", "5")
    settings.set("sql-client.execution.result-mode", "changelog")
    settings.reset()
    assert settings.values == {"sql-client.display.max-rows-per-batch": "1000000"}
