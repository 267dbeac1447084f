"""The Spark session behind a shell: configured once, started in the background, shared by every query.

Starting a JVM takes seconds, and the prompt must not wait for it: `SparkRuntime.start()` begins the start-up
on a thread and `get()` blocks only the first statement that needs Spark. The same configuration is used for
`local[*]` and for `--master spark://...`, so a job that runs here runs on a cluster unchanged. On a cluster two
things are added (docs/cluster.md): the `shell` package is shipped to the executors' Python workers
(engine/pyfiles.py), and the driver stays on loopback when the cluster does. The jars (`spark.jars`) reach the
executors the same way everywhere: Spark serves them from the driver.
"""

from __future__ import annotations

import importlib
import logging.handlers
import os
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path

from shell.engine import local_fs
from shell.errors import ExecutionError
from shell.logfiles import BACKUPS, MAX_BYTES
from shell.paths import jvm_bundle_jars
from shell.secrets import redact

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")

# Spark settings that make a streaming shell behave: RocksDB for keyed state (not the JVM heap), a small
# number of shuffle partitions (the default of 200 costs 200 tasks per micro-batch), no console progress bar.
BASE_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": str(max(2, os.cpu_count() or 2)),
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stateStore.providerClass": (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    ),
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    # A job restarts from its last batch, never an older one; Spark keeps the last 100 batches' offsets and state
    # files by default, which for the user count at 1M keys was 2.9 GB of checkpoint (docs/benchmarks.md, "Memory
    # over a long run at a fixed rate"). Ten is enough to recover and keeps far less.
    "spark.sql.streaming.minBatchesToRetain": "10",
    # A job's micro-batch starts as soon as input is waiting (execution.checkpointing.interval unset): with none
    # waiting, Spark looks again after this delay. Its default, 10 ms, cost an idle job 0.09 cores of JVM time in
    # offset requests; 250 ms keeps an idle job near nothing and adds at most that to the first change after a lull
    # (docs/changelog-engine.md, "Latency").
    "spark.sql.streaming.pollingDelay": "250ms",
    "spark.sql.adaptive.enabled": "false",
    "spark.python.worker.reuse": "true",
    # A query that reads a table twice (Nexmark q5: two window aggregates of one table, joined) may have one
    # branch read through a reused exchange, and then the stateful operators above that branch are never given
    # the watermark: they never emit. Each branch reads for itself instead.
    "spark.sql.exchange.reuse": "false",
}


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def is_local(master: str) -> bool:
    """`local`, `local[N]`, `local[*]`, `local[N,F]`: the executors are threads of the driver's JVM, and its Python
    workers are started beside it, with its environment. Any other master has executors of their own."""
    return master == "local" or master.startswith("local[")


def on_this_machine(master: str) -> bool:
    """Whether every executor runs on this machine, so the driver may stay on loopback: a local master,
    `local-cluster[...]`, or a standalone master (or masters, `spark://h1:7077,h2:7077`) on loopback."""
    if is_local(master) or master.startswith("local-cluster["):
        return True
    if master.startswith("spark://"):
        hosts = [address.rsplit(":", 1)[0] for address in master[len("spark://"):].split(",")]
        return all(host in LOOPBACK_HOSTS for host in hosts)
    return False


def python_for_workers() -> None:
    """Make Spark's Python workers run the interpreter (and so the virtual environment) that runs us."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


class SharedLogHandler(logging.handlers.RotatingFileHandler):
    """Python's log records appended to Spark's log, which rolls over by size as log4j's appender does (10 MB,
    `spark.log.1` ... `spark.log.3`; shell/logfiles.py at a session's start).

    Both write the same file, and either may roll it over. So this handler opens the file for each record and
    closes it after (Python's records are few: py4j's broken calls, PySpark's warnings), and decides by the size
    of the file on disk, never by what it wrote itself: it never writes into a file log4j has moved away.
    """

    def __init__(self, path: Path, max_bytes: int = MAX_BYTES, backups: int = BACKUPS):
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True)

    def format(self, record: logging.LogRecord) -> str:
        """The record as text, secrets hidden (shell/secrets.py): a py4j error may quote an option's value."""
        return redact(super().format(record))

    def shouldRollover(self, record: logging.LogRecord) -> bool:  # noqa: N802 - logging's name
        try:
            size = os.path.getsize(self.baseFilename)
        except OSError:  # not there yet (or not readable): nothing to roll over
            return False
        return size > 0 and size + len(self.format(record)) + 1 > self.maxBytes

    def emit(self, record: logging.LogRecord) -> None:
        try:
            super().emit(record)
        finally:
            if self.stream is not None:
                stream, self.stream = self.stream, None
                stream.close()


def quiet_python_loggers(log_file: Path) -> None:
    """PySpark logs every analysis error it raises, with a JVM stack trace, to stderr; we report errors ourselves.
    And py4j logs a broken call to the JVM (a query interrupted by Ctrl-C) with `logging.exception`, which, with
    no handler set up, installs one that prints the traceback to the terminal: Python's log records go to the log
    file instead, unless the program that uses us set up logging itself."""
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
    root = logging.getLogger()
    if not root.handlers:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = SharedLogHandler(log_file)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)


def import_pyspark(attempts: int = 100) -> None:
    """Import pyspark's SQL modules on this (background) thread, again if another thread was importing them at the
    same moment: Python then hands one of the two a partly initialized module ("cannot import name ... from
    partially initialized module") to break the cycle, and a moment later the other has finished."""
    for attempt in range(attempts):
        try:
            for module in ("pyspark.sql", "pyspark.logger"):
                importlib.import_module(module)
            return
        except ImportError as exc:
            if "partially initialized" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05)


class SparkRuntime:
    """Owns the SparkSession: background start, one shared instance, clean stop."""

    def __init__(self, master: str, conf: dict[str, str], log_file: Path, app_name: str = "streamshell",
                 log_max_bytes: int = MAX_BYTES, class_archive: bool = True):
        self.master = master
        self.class_archive = class_archive  # use the class-data archive of Spark's classes when there is one (cds.py)
        self.extra_java_options = ""
        self.app_name = app_name
        self.log_file = log_file
        self.log_max_bytes = log_max_bytes  # where log4j rolls the log over (engine/log4j2.properties)
        self.conf = {**BASE_CONF, **conf}
        # the Kafka connector and the other jars; the exactly-once Kafka sink's writer (jvm/kafkatx) and the JVM's keyed
        # stages (jvm/stages) when they are built
        self.jars = jvm_bundle_jars("spark") + jvm_bundle_jars("kafkatx") + jvm_bundle_jars("stages")
        self._future: Future | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Begin starting Spark on a background thread (idempotent)."""
        with self._lock:
            if self._future is not None:
                return
            self._future = Future()
            threading.Thread(target=self._run_start, name="spark-start", daemon=True).start()

    @property
    def started(self) -> bool:
        return self._future is not None and self._future.done() and self._future.exception() is None

    @property
    def starting(self) -> bool:
        return self._future is not None and not self._future.done()

    def get(self, timeout: float | None = None):
        """The SparkSession, waiting for the background start if needed."""
        self.start()
        assert self._future is not None
        return self._future.result(timeout)

    def stop(self) -> None:
        if self.started:
            self.get().stop()

    def _run_start(self) -> None:
        assert self._future is not None
        try:
            self._future.set_result(self._build())
        except BaseException as exc:  # reported by get(); the thread must not die silently
            self._future.set_exception(
                ExecutionError(
                    f"Spark failed to start: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}",
                    hint=f"see {self.log_file}",
                )
            )

    def java_options(self) -> str:
        """The driver JVM's options: our log4j configuration, the log file and where it rolls over, the class-data
        archive that halves the JVM's start (shell/engine/cds.py) when it has been written, then the user's own
        (`SET 'spark.driver.extraJavaOptions'`): added to ours, not instead of them, so the log stays where the shell
        reads it and the archive stays in use."""
        from shell.engine import cds

        options = (f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG} -Dstreamshell.log.file={self.log_file}"
                   f" -Dstreamshell.log.max-size={self.log_max_bytes}")
        archive = cds.java_options() if self.class_archive else ""
        user = self.conf.get("spark.driver.extraJavaOptions", "")
        return " ".join(o for o in (options, archive, self.extra_java_options, user) if o)

    def session_conf(self) -> dict[str, str]:
        """Every setting the SparkSession is built with, in the order given: ours, then the user's (a user's
        `-D spark.driver.host=...` wins), with the JVM options and class paths merged rather than replaced."""
        conf = {"spark.driver.extraJavaOptions": self.java_options()}
        if self.jars:  # served by the driver; a cluster's executors fetch them (and put them on their class path)
            conf["spark.jars"] = ",".join(self.jars)
        if on_this_machine(self.master):  # stay on loopback; a remote cluster needs the driver's real address
            conf.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
        conf.update({k: v for k, v in self.conf.items() if k != "spark.driver.extraJavaOptions"})
        # Hadoop's local file system without a process per file (local_fs.py): the class paths are the user's with
        # the jar first, and the file system is not set where the user set one
        conf.update(local_fs.settings(self.conf, executors_here=on_this_machine(self.master)))
        return conf

    def _build(self):
        import_pyspark()
        python_for_workers()
        quiet_python_loggers(self.log_file)
        from pyspark.sql import SparkSession

        from shell.engine.pyfiles import package_zip

        # On a cluster the executors' Python workers import `shell` from this zip (made before the JVM starts, so
        # a failure to make it is reported as Spark's start failure).
        shipped = None if is_local(self.master) else package_zip()
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        builder = SparkSession.builder.master(self.master).appName(self.app_name)
        for key, value in self.session_conf().items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        if shipped is not None:  # before any Python function is made: each takes the includes known then
            spark.sparkContext.addPyFile(str(shipped))
        return spark
