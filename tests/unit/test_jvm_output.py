"""The JVM's own output (the shell's stderr.log, a job's process.log) reaches its file only through a pipe whose
reader redacts each line and rolls the file over by size (shell/stdio.py, shell/logfiles.py), and secret values
the process was given are hidden wherever they appear, also where no key names them (shell/secrets.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shell.catalog.model import Column, TableDef
from shell.jobs.record import JOB_FILE, PROCESS_LOG
from shell.logfiles import LogWriter
from shell.secrets import redact, remember_secret

pytestmark = pytest.mark.unit


def test_a_secret_option_value_is_hidden_where_no_key_names_it():
    TableDef("t", [Column("a", "INT")], {"connector": "kafka", "properties.sasl.password": "pw-Zq81xLm"})
    message = "org.apache.kafka.common.errors.SaslAuthenticationException: bad credentials pw-Zq81xLm for user u"
    assert "pw-Zq81xLm" not in redact(message)
    assert "SaslAuthenticationException: bad credentials **** for user u" in redact(message)


def test_a_short_or_ordinary_value_is_not_hidden_everywhere():
    remember_secret("abc")  # too short to hide in free text: it would hide parts of ordinary words
    TableDef("t", [Column("a", "INT")], {"connector": "kafka", "topic": "orders-Yq7"})  # not a secret option
    assert redact("abcdef orders-Yq7") == "abcdef orders-Yq7"


def test_what_the_jvm_writes_to_descriptor_2_reaches_stderr_log_redacted(tmp_path):
    """In a process of its own, as the shell's JVM writes it: a child process inheriting descriptor 2."""
    log = tmp_path / "log" / "stderr.log"
    program = f"""
import subprocess, sys
from pathlib import Path
from shell.secrets import remember_secret
from shell.stdio import divert_native_stderr
remember_secret('jdbc-Pw-77aa')
with divert_native_stderr(Path({str(log)!r})):
    subprocess.run(['sh', '-c', 'echo "Exception: login failed, password=hunter22 url=jdbc:postgresql://u:s3cr3t@h/db" >&2; '
                    'echo "Caused by: auth jdbc-Pw-77aa refused" >&2; printf "no newline at the end" >&2'], check=True)
    print('to the terminal', file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "to the terminal\n", "only Python's own stderr reaches the terminal"
    text = log.read_text()
    assert "password=****" in text and "u:****@h/db" in text and "auth **** refused" in text
    assert "hunter22" not in text and "s3cr3t" not in text and "jdbc-Pw-77aa" not in text
    assert text.endswith("no newline at the end\n"), "a last line without its newline is kept"
    assert log.stat().st_mode & 0o777 == 0o600


def test_the_log_writer_rolls_its_file_over_by_size(tmp_path):
    log = tmp_path / "stderr.log"
    writer = LogWriter(log, max_bytes=100, backups=3)
    for number in range(40):
        writer.write_lines(f"line {number:02d} " + "x" * 20 + "\n")
    writer.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["stderr.log", "stderr.log.1", "stderr.log.2", "stderr.log.3"]
    assert all(p.stat().st_size <= 100 + 30 for p in tmp_path.iterdir()), "rolled once past the size"
    assert "line 39" in log.read_text() + (tmp_path / "stderr.log.1").read_text(), "the newest lines are kept"
    assert "line 00" not in "".join(p.read_text() for p in tmp_path.iterdir()), "the oldest beyond three are gone"


def test_a_job_process_output_is_redacted_with_its_records_secrets(tmp_path, monkeypatch):
    """The monitor of a job process reads the job's output through a pipe: the values of its record's secret
    options (a `${env:X}` resolved as the job resolves it) and settings are hidden in process.log."""
    from shell.jobs.process import _copy_output

    monkeypatch.setenv("SINK_TOKEN_X", "tok-from-env-5521")
    folder = tmp_path / "jobs" / "j1"
    folder.mkdir(parents=True)
    table = {"name": "t", "columns": [{"name": "a", "type": "INT"}],
             "options": {"connector": "pulsar", "token": "${env:SINK_TOKEN_X}", "sasl.password": "plain-9Xq2"}}  # fmt: skip
    (folder / JOB_FILE).write_text(json.dumps({
        "job_id": "j1", "name": "j", "statement": "INSERT INTO t SELECT 1", "checkpoint": str(folder / "cp"),
        "settings": {"spark.hadoop.fs.s3a.secret.key": "s3-secret-0042"},
        "catalog": [{"kind": "table", "definition": table}],
    }))  # fmt: skip
    read_fd, write_fd = os.pipe()
    copying = _copy_output(folder, read_fd)
    os.write(write_fd, b"ERROR auth failed: tok-from-env-5521 / plain-9Xq2 / s3-secret-0042\n")
    os.close(write_fd)
    copying.thread.join(10)
    text = (folder / PROCESS_LOG).read_text()
    assert text == "ERROR auth failed: **** / **** / ****\n"


def test_the_shells_stderr_log_keeps_no_more_than_its_backups(tmp_path):
    """stderr.log rolls over while the session runs, not only when the next one starts."""
    log = tmp_path / "log" / "stderr.log"
    program = f"""
import os
from pathlib import Path
import shell.logfiles as logfiles
from shell.stdio import divert_native_stderr
logfiles.MAX_BYTES = 1000
with divert_native_stderr(Path({str(log)!r})):
    for n in range(400):
        os.write(2, f"jvm line {{n:03d}} ".encode() + b"y" * 40 + b"\\n")
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in log.parent.iterdir())
    assert names == ["stderr.log", "stderr.log.1", "stderr.log.2", "stderr.log.3"]
    assert sum(p.stat().st_size for p in log.parent.iterdir()) < 5 * 1000
