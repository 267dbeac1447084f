"""The class-data archive of Spark's driver classes (shell/engine/cds.py): written once, then mapped by every
Spark the shell or a job starts; a Spark without one starts as before."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from shell.engine import cds

pytestmark = pytest.mark.e2e

# A Spark started as the shell starts it, in a process of its own (one SparkContext per process): prints whether
# its JVM mapped the archive (its memory maps name the file) and the archive it was given.
PROBE = """
import sys
from pathlib import Path
from pyspark import SparkContext
from shell.engine import cds
from shell.engine.spark import SparkRuntime
runtime = SparkRuntime('local[1]', {}, Path(sys.argv[1]))
runtime.get().range(3).collect()
maps = Path(f'/proc/{SparkContext._gateway.proc.pid}/maps').read_text()
path = cds.archive_path()
print('mapped' if path is not None and str(path) in maps else 'not mapped')
runtime.stop()
"""


def probe(tmp_path, cache) -> str:
    env = {**os.environ, "STREAMSHELL_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "spark.log")], env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_without_an_archive_the_jvm_is_given_no_archive_option(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMSHELL_CACHE", str(tmp_path / "cache"))
    assert cds.java_options() == "", "no archive yet: Spark starts as it always did"


def test_another_environment_of_the_same_pyspark_gets_its_own_archive(tmp_path, monkeypatch):
    """The JVM maps an archive only on the class path it was written with (jar paths, sizes and times), so a
    clone with its own virtual environment must not pick up the archive another environment wrote."""
    monkeypatch.setenv("STREAMSHELL_CACHE", str(tmp_path / "cache"))
    paths = []
    for environment in ("one", "two"):  # the same jars, byte for byte and to the nanosecond, in two places
        home = tmp_path / environment / "pyspark"
        (home / "jars").mkdir(parents=True)
        for name in ("spark-core_2.13-4.0.1.jar", "scala-library-2.13.16.jar"):
            (home / "jars" / name).write_bytes(name.encode())
            os.utime(home / "jars" / name, ns=(1_700_000_000_000_000_000,) * 2)
        monkeypatch.setattr(cds, "_pyspark_home", lambda home=home: home)
        paths.append(cds.archive_path())
    assert paths[0] != paths[1]
    (tmp_path / "one" / "pyspark" / "jars" / "scala-library-2.13.16.jar").touch()  # reinstalled: a new time
    monkeypatch.setattr(cds, "_pyspark_home", lambda: tmp_path / "one" / "pyspark")
    assert cds.archive_path() != paths[0]


def test_the_archive_make_setup_writes_is_mapped_by_each_spark(tmp_path):
    from shell.paths import cache_dir

    cache = cache_dir()  # the machine's cache, where `make setup` wrote it (written here, as setup does, if not)
    written = subprocess.run([sys.executable, "-m", "shell.engine.cds"], capture_output=True, text=True, timeout=900)
    assert written.returncode == 0 and "class-data archive" in written.stdout, written.stderr
    path = cds.archive_path()
    assert path.is_file() and path.parent == cache / "cds" and path.stat().st_size > 10 * 2**20
    assert cds.java_options().startswith(f"-XX:SharedArchiveFile={path} ")
    assert not list(path.parent.glob("*.tmp")), "no partial archive is left"
    assert probe(tmp_path, cache) == "mapped"


def test_a_damaged_archive_is_ignored_quietly(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("STREAMSHELL_CACHE", str(cache))
    path = cds.archive_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(os.urandom(4096))
    env = {**os.environ, "STREAMSHELL_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "spark.log")], env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cds" not in (done.stdout + done.stderr).lower(), "no class-sharing warning reaches the terminal"
