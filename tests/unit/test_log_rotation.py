"""Spark's log rolls over by size while a session runs: log4j's appender and Python's handler both write it, and
both roll it the way shell/logfiles.py does at a session's start (spark.log.1 newest ... spark.log.3, 10 MB)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from shell.engine.spark import LOG4J_CONFIG, SharedLogHandler, SparkRuntime
from shell.logfiles import BACKUPS, MAX_BYTES

pytestmark = pytest.mark.unit


def record(text: str) -> logging.LogRecord:
    return logging.LogRecord("py4j", logging.WARNING, __file__, 1, text, None, None)


def handler_for(path: Path, max_bytes: int) -> SharedLogHandler:
    handler = SharedLogHandler(path, max_bytes=max_bytes)
    handler.setFormatter(logging.Formatter("%(message)s"))
    return handler


def test_python_records_roll_over_keeping_three_old_files(tmp_path):
    log = tmp_path / "spark.log"
    handler = handler_for(log, max_bytes=100)
    for number in range(40):
        handler.handle(record(f"record {number:02d} " + "x" * 20))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["spark.log", "spark.log.1", "spark.log.2", "spark.log.3"]
    assert all(p.stat().st_size <= 100 for p in tmp_path.iterdir())
    assert "record 39" in log.read_text()
    first = [int(line.split()[1]) for line in (tmp_path / "spark.log.1").read_text().splitlines()]
    third = [int(line.split()[1]) for line in (tmp_path / "spark.log.3").read_text().splitlines()]
    assert max(third) < min(first), "spark.log.1 is the newest old file, as log4j's fileIndex=min and logfiles.py"


def test_python_records_follow_the_file_after_log4j_rolled_it_over(tmp_path):
    """log4j renames spark.log while Python's handler is set up: the next record goes to the new spark.log, not
    into the file that was moved away (a handler that kept it open would write there until it was deleted)."""
    log = tmp_path / "spark.log"
    handler = handler_for(log, max_bytes=10_000)
    handler.handle(record("before"))
    os.replace(log, tmp_path / "spark.log.1")  # what log4j's rollover does
    log.write_text("jvm line\n")
    handler.handle(record("after"))
    assert (tmp_path / "spark.log.1").read_text() == "before\n"
    assert log.read_text() == "jvm line\nafter\n"
    assert handler.stream is None, "the file is not held open between records"


def test_python_records_roll_over_a_file_log4j_has_filled(tmp_path):
    log = tmp_path / "spark.log"
    log.write_text("j" * 95 + "\n")  # log4j's lines: the size on disk decides, not what the handler wrote
    handler_for(log, max_bytes=100).handle(record("python"))
    assert (tmp_path / "spark.log.1").read_text() == "j" * 95 + "\n"
    assert log.read_text() == "python\n"


def properties() -> dict[str, str]:
    pairs = {}
    for line in LOG4J_CONFIG.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            pairs[key.strip()] = value.strip()
    return pairs


def test_log4j_rolls_the_same_files_at_the_same_size():
    config = properties()
    assert config["appender.file.type"] == "RollingFile"
    assert config["appender.file.filePattern"] == config["appender.file.fileName"] + ".%i"
    assert config["appender.file.policies.size.type"] == "SizeBasedTriggeringPolicy"
    assert config["appender.file.policies.size.size"] == "${sys:streamshell.log.max-size:-10MB}"
    assert MAX_BYTES == 10 * 1024 * 1024, "log4j's default above is 10MB"
    assert config["appender.file.strategy.type"] == "DefaultRolloverStrategy"
    assert config["appender.file.strategy.max"] == str(BACKUPS)
    assert config["appender.file.strategy.fileIndex"] == "min", "spark.log.1 is the newest, as logfiles.py"
    assert config["rootLogger.appenderRef.file.ref"] == config["appender.file.name"]


def test_the_jvm_is_told_where_the_log_rolls_over(tmp_path):
    runtime = SparkRuntime("local[1]", {}, tmp_path / "spark.log")
    options = runtime.java_options()
    assert f"-Dstreamshell.log.file={tmp_path / 'spark.log'}" in options
    assert f"-Dstreamshell.log.max-size={MAX_BYTES}" in options.split()


def test_the_users_jvm_options_come_after_ours_and_do_not_replace_them(tmp_path):
    runtime = SparkRuntime("local[1]", {"spark.driver.extraJavaOptions": "-XX:+UseParallelGC -Dx=1"}, tmp_path / "spark.log")
    options = runtime.java_options().split()
    assert f"-Dstreamshell.log.file={tmp_path / 'spark.log'}" in options, "the log stays where the shell reads it"
    assert options[-2:] == ["-XX:+UseParallelGC", "-Dx=1"], "the user's last: a -D of theirs wins over ours"


def test_python_records_reach_sparks_log_with_secrets_hidden(tmp_path):
    from shell.secrets import remember_secret

    remember_secret("bare-Secret-731")
    log = tmp_path / "spark.log"
    handler_for(log, max_bytes=10_000).handle(
        record("py4j error: jdbc:postgresql://bob:pw-1234@db/x password=hunter22 and bare-Secret-731 alone")
    )
    assert log.read_text() == "py4j error: jdbc:postgresql://bob:****@db/x password=**** and **** alone\n"
