"""A class-data-sharing archive of Spark's driver classes, so that a shell's or a job's Spark starts in about half
the time.

Why it exists: every job runs in a process of its own with a Spark of its own (shell/jobs/process.py), and most of
a Spark start is its JVM reading, parsing and verifying some ten thousand classes from pyspark's jars. Java's
application class-data sharing (AppCDS) keeps those classes, already parsed, in one file the JVM maps when it
starts: on this project's 2-core machine a local Spark and its first query took 6.2 s instead of 9.2 s
(docs/benchmarks.md, "Spark start with a class-data archive").

An archive belongs to one Java and one pyspark installation: its file name holds a digest of both (the paths,
sizes and times of pyspark's jars, which the JVM checks before it maps an archive), so an upgrade of either, or
another checkout with its own environment, simply leads to a new archive, and a Spark without one starts as it
always did. The JVM checks the archive itself and ignores one that does not match (quietly: its class-sharing log
is turned off). `python -m shell.engine.cds` writes it (`make setup` runs it): a Spark is started once with
`-XX:ArchiveClassesAtExit`, runs a query and ends, and the JVM writes the classes it loaded as it exits.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from shell.engine import local_fs
from shell.paths import cache_dir

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # a stale or foreign archive is ignored without a word


def _pyspark_home() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.exists():
        which = shutil.which("java")
        found = Path(which) if which else None
    return found.resolve() if found is not None else None


def archive_path(pyspark: Path | None = None) -> Path | None:
    """Where the archive for this Java and this pyspark (or the pyspark installed at `pyspark`) is, or would be;
    None when either cannot be found."""
    pyspark, java = pyspark or _pyspark_home(), _java()
    if pyspark is None or java is None or not pyspark.is_dir():
        return None
    # The JVM maps an archive only on the class path it was written with, jar for jar (path, size and time), so
    # each of those is in the name: a clone or a reinstalled venv elsewhere writes its own archive. The class path
    # starts with the local file system's jar when it was built (engine/local_fs.py).
    digest = hashlib.sha256()
    jars = sorted((pyspark / "jars").glob("*.jar")) if (pyspark / "jars").is_dir() else []
    for part in [java, *map(Path, local_fs.jars()), *jars]:
        stat = part.stat()
        digest.update(f"{part.resolve()}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return cache_dir() / "cds" / f"spark-driver-{digest.hexdigest()[:16]}.jsa"


def java_options() -> str:
    """The driver JVM's options that use the archive, or '' when there is none yet."""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path is not None and path.is_file() else ""


def build(path: Path) -> None:
    """Write the archive to `path`: one Spark started with `-XX:ArchiveClassesAtExit`, in a process of its own
    (the JVM writes the archive as it exits), written to a temporary name and renamed when complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):  # what an earlier build left (its JVM outlived it)
        stale.unlink(missing_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    log = path.parent / "build.log"
    try:
        subprocess.run([sys.executable, "-m", "shell.engine.cds", "--dump", str(partial), str(log)], check=True, timeout=600,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        if not partial.is_file():
            raise RuntimeError(f"the JVM wrote no archive (see {log})")
        os.replace(partial, path)
        _source(path).write_text(f"{_pyspark_home()}\n")
    finally:
        partial.unlink(missing_ok=True)
    remove_stale_archives(path.parent)


def _source(archive: Path) -> Path:
    """The file beside an archive naming the pyspark installation it was written for."""
    return archive.with_suffix(".source")


def remove_stale_archives(folder: Path) -> None:
    """Each environment writes its own archive (~150 MB): remove those whose pyspark installation is gone or has
    changed since (a removed clone, a venv made again), so the cache does not fill up with them."""
    for archive in folder.glob("spark-driver-*.jsa"):
        try:
            written_for = Path(_source(archive).read_text().strip())
        except (OSError, ValueError):
            written_for = None
        if written_for is None or archive_path(written_for) != archive:
            archive.unlink(missing_ok=True)
            _source(archive).unlink(missing_ok=True)


def dump(partial: str, log: str) -> None:
    """In the process `build` starts: a Spark whose JVM writes the classes it loaded to `partial` as it ends, after
    a batch aggregate and a stateful streaming query (RocksDB state, as jobs keep it) have loaded theirs."""
    import tempfile

    from pyspark import SparkContext
    from pyspark.sql import functions as F

    from shell.engine.spark import SparkRuntime

    runtime = SparkRuntime("local[1]", {}, Path(log), class_archive=False)
    runtime.extra_java_options = f"-XX:ArchiveClassesAtExit={partial}"
    session = runtime.get()
    session.range(10).selectExpr("id % 3 AS k").groupBy("k").count().collect()
    with tempfile.TemporaryDirectory() as folder:
        counts = session.readStream.format("rate").load().groupBy(F.col("value") % 3).count()
        query = counts.writeStream.format("noop").outputMode("update").option("checkpointLocation", folder)
        query.trigger(once=True).start().awaitTermination(120)
    jvm = SparkContext._gateway.proc
    runtime.stop()
    jvm.stdin.close()  # the JVM ends when its stdin does, and writes the archive as it ends
    jvm.wait(timeout=300)


def main() -> int:
    if sys.argv[1:2] == ["--dump"]:
        dump(*sys.argv[2:4])
        return 0
    path = archive_path()
    if path is None:
        print("streamshell: no pyspark or no java found: Spark starts without a class-data archive", file=sys.stderr)
        return 0
    if path.is_file():
        if not _source(path).exists():  # written before archives named their environment
            with contextlib.suppress(OSError):
                _source(path).write_text(f"{_pyspark_home()}\n")
        print(f"class-data archive for Spark's driver: {path} (present)")
        return 0
    try:
        build(path)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        print(f"streamshell: could not write the class-data archive ({exc}); Spark starts without it", file=sys.stderr)
        return 0
    print(f"class-data archive for Spark's driver: {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
