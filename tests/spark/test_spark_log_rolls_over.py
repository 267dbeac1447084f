"""Spark's log rolls over while a session runs, its JVM's lines and Python's alike (engine/log4j2.properties and
engine/spark.py's SharedLogHandler). A JVM of its own, with a small size to roll at: the tests' shared Spark
keeps the real one (10 MB)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import logging, sys
from pathlib import Path
from shell.engine.spark import SparkRuntime

folder = Path(sys.argv[1])
spark = SparkRuntime("local[1]", {}, folder / "spark.log", log_max_bytes=4096).get()
jvm = spark._jvm.org.apache.logging.log4j.LogManager.getLogger("streamshell.test")
for number in range(200):
    jvm.error(f"jvm line {number:03d} " + "x" * 80)
    if number % 20 == 0:
        logging.getLogger("streamshell.test").warning("python line %03d %s", number, "y" * 80)
spark.stop()
"""


def test_sparks_log_rolls_over_by_size_while_the_session_runs(tmp_path):
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    files = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert sorted(files) == ["spark.log", "spark.log.1", "spark.log.2", "spark.log.3"]
    assert all(len(text) < 4096 + 1024 for text in files.values()), {k: len(v) for k, v in files.items()}
    assert "jvm line 199" in files["spark.log"]

    def first_line(name: str) -> int:
        return int(files[name].split("line ", 1)[1][:3])

    assert first_line("spark.log.3") < first_line("spark.log.2") < first_line("spark.log.1") < first_line("spark.log")
    everything = "".join(files.values())
    assert "python line 180" in everything, "Python's records go to the current file after log4j rolled it"


SECRETS_SCRIPT = """
import sys
from pathlib import Path
from shell.engine.spark import SparkRuntime

spark = SparkRuntime("local[1]", {}, Path(sys.argv[1]) / "spark.log").get()
log = spark._jvm.org.apache.logging.log4j.LogManager.getLogger("streamshell.test")
log.error("connect failed: password=hunter22, url=jdbc:postgresql://bob:pw-1234@db:5432/x token: 'tok-99' ok")
log.error("with an exception", spark._jvm.java.lang.RuntimeException("boom: sasl.jaas.config=jaas-55 inside"))
log.error("an ordinary line: topic=orders key.fields=id")
spark.stop()
"""


def test_the_jvms_log_lines_hide_secrets_by_pattern(tmp_path):
    """log4j writes spark.log itself, so its layout hides what shell/secrets.py hides by pattern: the value of a
    secret-looking key and a URL's password, in messages and in exceptions' text (printed once, redacted)."""
    run = subprocess.run([sys.executable, "-c", SECRETS_SCRIPT, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    text = (tmp_path / "spark.log").read_text()
    assert "connect failed: password=****, url=jdbc:postgresql://bob:****@db:5432/x token: '****' ok" in text
    assert text.count("RuntimeException: boom: sasl.jaas.config=**** inside") == 1
    assert "an ordinary line: topic=orders key.fields=id" in text
    for secret in ("hunter22", "pw-1234", "tok-99", "jaas-55"):
        assert secret not in text
