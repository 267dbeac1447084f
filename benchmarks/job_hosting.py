"""Where a job runs: one detached job process per job (its own local Spark driver), or Spark Connect.

Why it exists: a job (INSERT INTO ... SELECT) must outlive the shell that started it and survive kill -9 with
exact recovery, and the project chose one detached job process per job (shell/jobs/process.py). The alternative
is one long-running Spark Connect server (shipped in the pyspark wheel) to which a client submits each job's
query. This command measures both on this machine, so the choice rests on figures rather than on memory of the
docs (docs/jobs-hosting.md has the figures, what each experiment showed and the conclusion):

1. start cost, wall time and CPU seconds of the whole process tree, from "start the job" to its first completed
   micro-batch: (a) a fresh `python -c` that builds a local SparkSession with the shell's configuration
   (shell.engine.spark.SparkRuntime: BASE_CONF, the "spark" jar bundle, loopback, plus the job process's
   JOB_SPARK_CONF) and runs rate -> foreachBatch(noop); (b) the same query from a fresh Connect client to a
   running Connect server (the server's own start once, then cold and warm submissions); (c) the real job
   process, started as the shell starts it (Session.execute of an INSERT of a datagen table into a blackhole);
2. resident memory (RSS summed over each process tree, from /proc): 1 and 3 job processes; one Connect server
   with 1 and 3 queries, and its clients;
3. survival: a Connect client killed with SIGKILL (does its query go on, who can see and stop it, and for how
   long: a second server with a short session timeout), the Connect server killed with SIGKILL, one of three
   job processes killed with SIGKILL (and the real job process: what the monitor records, RESUME JOB);
4. which PySpark APIs the engine uses work from a Connect client, and where shell/ reaches into py4j.

    .venv/bin/python -m benchmarks.job_hosting [--repeats N] [--settle S] [--session-timeout S] [--answer-wait S]
        [--skip local,real,connect,timeout] [--json FILE]

Everything binds 127.0.0.1 on free ports; every process it starts runs in a session of its own and is killed
(the whole session) when the run ends, however it ends. The Connect client needs three packages that pyspark's
"connect" extra names and the project does not pin (grpcio-status, googleapis-common-protos, zstandard): they are
installed once, pinned and without dependencies, into `<cache>/connect-client-py` and put on PYTHONPATH of the
Connect processes only, so .venv is left as it is. A run takes 15-20 minutes on 2 shared cores; it prints a
markdown report, and the raw figures go to results.json beside the logs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from benchmarks.engine_procs import session_cpu, session_memory
from benchmarks.report import machine
from benchmarks.scratch import scratch_dir

REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024
CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
CONNECT_CLIENT_PACKAGES = ["grpcio-status==1.76.0", "googleapis-common-protos==1.71.0", "zstandard==0.25.0"]
RATE_ROWS_PER_S = 10
START_TIMEOUT_S = 600.0  # a JVM's start on 2 cores that other work shares can take minutes
PY4J_NAMES = re.compile(r"\b(_jvm|_jdf|_jsc|_jsq|_jsparkSession|sparkContext|_sc)\b")

# --- the child programs (run with `python -c`, so each start is a fresh interpreter) ------------------------------

CHILD_COMMON = r'''
import json, os, sys, time

def emit(event, **fields):
    print(json.dumps({"event": event, "t": time.time(), **fields}), flush=True)

def one_line(exc):
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"

def noop(df, batch_id):
    pass

def start_query(spark, checkpoint, function):
    """rate -> foreachBatch(function), or rate -> the noop sink (no Python function) when `function` is None."""
    frame = spark.readStream.format("rate").option("rowsPerSecond", RATE).load()
    writer = frame.writeStream.option("checkpointLocation", checkpoint).trigger(processingTime="1 second")
    writer = writer.format("noop") if function is None else writer.foreachBatch(function)
    return writer.start()

def wait_first_batch(query, timeout=600.0):
    deadline = time.time() + timeout
    while True:
        progress = query.lastProgress
        if progress is not None:
            return progress["batchId"]
        if not query.isActive:
            raise RuntimeError(f"the query ended: {query.exception()}")
        if time.time() > deadline:
            raise TimeoutError("no completed micro-batch")
        time.sleep(0.05)

def serve(query):
    """Answer the harness on stdin: `status` (what the query says now), `stop` or end of input (stop it)."""
    for line in sys.stdin:
        command = line.strip()
        if command == "status":
            try:
                progress = query.lastProgress
                emit("status", active=query.isActive, batch=progress["batchId"] if progress else None)
            except Exception as exc:
                emit("status", error=one_line(exc))
        elif command == "stop":
            break
    try:
        query.stop()
    except Exception as exc:
        emit("stop_failed", error=one_line(exc))
'''.replace("RATE", str(RATE_ROWS_PER_S))

LOCAL_JOB = CHILD_COMMON + r'''
args = json.loads(sys.argv[1])
sys.path.insert(0, args["repo"])
from pathlib import Path
from shell.engine.spark import SparkRuntime
spark = SparkRuntime("local[*]", args["conf"], Path(args["log"]), app_name=args["name"]).get()
emit("spark")
query = start_query(spark, args["checkpoint"], noop)
emit("first_batch", batch=wait_first_batch(query), query_id=str(query.id))
serve(query)
spark.stop()
'''

CONNECT_JOB = CHILD_COMMON + r'''
args = json.loads(sys.argv[1])
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(args["url"]).getOrCreate()
emit("spark")
query = start_query(spark, args["checkpoint"], {"noop": noop, "sink": None}[args["function"]])
emit("first_batch", batch=wait_first_batch(query), query_id=str(query.id))
serve(query)
if args.get("release"):
    spark.stop()  # releases the session on the server; a killed client never gets here
os._exit(0)
'''

# A second client on a session id: what it sees of that session's queries (and stops them when asked). It never
# releases the session: that would stop the queries it looks at.
CONNECT_PROBE = CHILD_COMMON + r'''
args = json.loads(sys.argv[1])
from pyspark.sql import SparkSession
found = {}
try:
    spark = SparkSession.builder.remote(args["url"]).getOrCreate()
    active = spark.streams.active
    found["active"] = [{"id": str(q.id), "batch": (q.lastProgress or {}).get("batchId")} for q in active]
    if args.get("stop"):
        for q in active:
            q.stop()
        found["active_after_stop"] = [str(q.id) for q in spark.streams.active]
except Exception as exc:
    found["error"] = one_line(exc)
emit("probe", **found)
os._exit(0)
'''

# The PySpark APIs the engine uses (shell/engine, shell/connectors, shell/jobs), each tried from a Connect client.
CONNECT_API = CHILD_COMMON + r'''
args = json.loads(sys.argv[1])
import threading
import pyarrow as pa
import pandas as pd
from pyspark.sql import SparkSession, functions as F
from pyspark.sql.streaming.state import GroupStateTimeout
spark = SparkSession.builder.remote(args["url"]).getOrCreate()
work = args["work"]
results = []

def probe(name, fn):
    started = time.time()
    try:
        detail = fn()
        results.append({"api": name, "ok": True, "detail": detail, "s": round(time.time() - started, 1)})
    except Exception as exc:
        results.append({"api": name, "ok": False, "detail": one_line(exc), "s": round(time.time() - started, 1)})
    emit("api", **results[-1])

def rate():
    return spark.readStream.format("rate").option("rowsPerSecond", RATE).load()

def as_dict(progress):
    return json.loads(progress.json) if hasattr(progress, "json") else dict(progress)

def rows(progress):
    return sum(source.get("numInputRows") or 0 for source in progress.get("sources", []))

def run_stream(frame, name, mode="append", batches=1):
    """Run a streaming frame into the noop sink until `batches` micro-batches completed; its last progress."""
    query = (frame.writeStream.format("noop").outputMode(mode).option("checkpointLocation", f"{work}/{name}")
             .trigger(processingTime="1 second").start())
    try:
        deadline = time.time() + 300
        while True:
            progress = query.lastProgress
            if progress is not None and progress["batchId"] >= batches - 1:
                return as_dict(progress)
            if not query.isActive:
                raise RuntimeError(f"the query failed: {one_line(query.exception())}")
            if time.time() > deadline:
                raise TimeoutError("no micro-batch within 300 s")
            time.sleep(0.1)
    finally:
        query.stop()

def foreach_batch_writes():
    out = f"{work}/fb-out"
    def write(df, batch_id):
        df.write.mode("append").parquet(out)
    query = (rate().writeStream.foreachBatch(write).option("checkpointLocation", f"{work}/fb")
             .trigger(processingTime="1 second").start())
    wait_first_batch(query)
    query.stop()
    files = [n for n in os.listdir(out) if n.endswith(".parquet")] if os.path.isdir(out) else []
    return f"batch 0 written by a Python function ({len(files)} parquet files)"

def foreach_batch_client_list():
    seen = []
    def remember(df, batch_id):
        seen.append(batch_id)
    query = (rate().writeStream.foreachBatch(remember).option("checkpointLocation", f"{work}/fb2")
             .trigger(processingTime="1 second").start())
    wait_first_batch(query)
    query.stop()
    return f"the function ran in another process: the client's list holds {seen} after a completed batch"

def foreach_batch_client_event():
    ready = threading.Event()  # as the engine's QueryHandle holds one
    def signal(df, batch_id):
        ready.set()
    query = (rate().writeStream.foreachBatch(signal).option("checkpointLocation", f"{work}/fb3")
             .trigger(processingTime="1 second").start())
    wait_first_batch(query)
    query.stop()
    return f"started; the client's Event is {'set' if ready.is_set() else 'not set'} after a completed batch"

def map_in_pandas():
    def fn(batches):
        for frame in batches:
            yield frame.assign(value=frame["value"] * 2)
    progress = run_stream(rate().mapInPandas(fn, "timestamp timestamp, value long"), "mip")
    return f"batch {progress['batchId']}, {rows(progress)} input rows"

def map_in_arrow():
    def fn(batches):
        for batch in batches:
            yield batch
    progress = run_stream(rate().mapInArrow(fn, "timestamp timestamp, value long"), "mia")
    return f"batch {progress['batchId']}, {rows(progress)} input rows"

def apply_in_pandas_with_state():
    def count(key, frames, state):
        n = state.get[0] if state.exists else 0
        for frame in frames:
            n += len(frame)
        state.update((n,))
        yield pd.DataFrame({"k": [key[0]], "n": [n]})
    keyed = rate().withColumn("k", F.col("value") % 3)
    frame = keyed.groupBy("k").applyInPandasWithState(count, "k long, n long", "n long", "Update",
                                                      GroupStateTimeout.NoTimeout)
    progress = run_stream(frame, "aipws", mode="update", batches=2)
    rows = sum(op.get("numRowsTotal", 0) for op in progress.get("stateOperators", []))
    return f"batch {progress['batchId']}, {rows} state rows"

def transform_with_state_in_pandas():
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import LongType, StructField, StructType

    class Count(StatefulProcessor):
        def init(self, handle):
            self.count = handle.getValueState("count", StructType([StructField("n", LongType())]))
        def handleInputRows(self, key, rows, timerValues):
            n = self.count.get()[0] if self.count.exists() else 0
            for frame in rows:
                n += len(frame)
            self.count.update((n,))
            yield pd.DataFrame({"k": [key[0]], "n": [n]})
        def close(self):
            pass

    keyed = rate().withColumn("k", F.col("value") % 3)
    frame = keyed.groupBy("k").transformWithStateInPandas(statefulProcessor=Count(), outputStructType="k long, n long",
                                                         outputMode="Update", timeMode="None")
    progress = run_stream(frame, "twsip", mode="update", batches=2)
    rows = sum(op.get("numRowsTotal", 0) for op in progress.get("stateOperators", []))
    return f"batch {progress['batchId']}, {rows} state rows"

def python_stream_source():
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

    class Reader(DataSourceStreamReader):
        def __init__(self):
            self.position = 0
        def initialOffset(self):
            return {"n": 0}
        def latestOffset(self, start=None, limit=None):
            self.position += 10
            return {"n": self.position}
        def partitions(self, start, end):
            return [InputPartition((start["n"], end["n"]))]
        def read(self, partition):
            first, last = partition.value
            for n in range(first, last):
                yield (n,)
        def commit(self, end):
            pass

    class Counter(DataSource):
        @classmethod
        def name(cls):
            return "job_hosting_counter"
        def schema(self):
            return "n long"
        def streamReader(self, schema):
            return Reader()

    spark.dataSource.register(Counter)
    progress = run_stream(spark.readStream.format("job_hosting_counter").load(), "pysrc")
    return f"batch {progress['batchId']}, {rows(progress)} input rows"

def observed_metrics():
    frame = rate().observe("seen", F.count(F.lit(1)).alias("rows"))
    progress = run_stream(frame, "observe", batches=2)
    return f"lastProgress observedMetrics = {json.dumps(progress.get('observedMetrics'))}"

def attribute(owner, name):
    def get():
        value = getattr(owner(), name)
        if type(value).__name__ == "Column":
            raise AttributeError(f"not there: `.{name}` is read as a column named {name}")
        return f"present: {type(value).__name__}"
    return get

probe("foreachBatch with a Python function (writes parquet)", foreach_batch_writes)
probe("foreachBatch appending to a list of the client", foreach_batch_client_list)
probe("foreachBatch closing over a threading.Event (as QueryHandle does)", foreach_batch_client_event)
probe("mapInPandas (streaming)", map_in_pandas)
probe("mapInArrow (streaming)", map_in_arrow)
probe("applyInPandasWithState (streaming)", apply_in_pandas_with_state)
probe("transformWithStateInPandas (streaming, RocksDB)", transform_with_state_in_pandas)
probe("Python streaming data source (DataSourceStreamReader)", python_stream_source)
probe("observe() and lastProgress observedMetrics", observed_metrics)
probe("spark.sparkContext", attribute(lambda: spark, "sparkContext"))
probe("spark._jvm", attribute(lambda: spark, "_jvm"))
probe("spark._jsparkSession", attribute(lambda: spark, "_jsparkSession"))
probe("DataFrame._jdf", attribute(lambda: spark.range(1), "_jdf"))
probe("DataFrame._sc", attribute(lambda: spark.range(1), "_sc"))
emit("done", results=results)
os._exit(0)
'''.replace("RATE", str(RATE_ROWS_PER_S))


# --- processes -----------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def load() -> str:
    """The machine's load averages (1, 5, 15 min), as `uptime` shows them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def session_pids(sid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def session_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def tree_rss(sid: int) -> dict:
    """RSS of a session's processes: total, and by command name (java, python3, ...)."""
    by_name: dict[str, int] = {}
    for _pid, (name, rss) in session_memory(sid).items():
        by_name[name] = by_name.get(name, 0) + rss
    return {"total_mib": round(sum(by_name.values()) / MIB),
            "by_name_mib": {k: round(v / MIB) for k, v in by_name.items()}}


def last_commit(checkpoint: Path) -> int | None:
    """The last micro-batch a query committed, from its checkpoint's commit log (None: none yet)."""
    try:
        ids = [int(name) for name in os.listdir(checkpoint / "commits") if name.isdigit()]
    except OSError:
        return None
    return max(ids) if ids else None


STARTED: dict[int, int | None] = {}  # every session started (its id: its leader's pid) and its leader's start time


def adopt(sid: int) -> None:
    """Remember a session of ours, to kill what is left of it at the end."""
    STARTED[sid] = process_start(sid)


def process_start(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def kill_session(sid: int) -> None:
    """SIGKILL every process of a session we started (Spark's Python workers sit in process groups of their own).
    A session whose leader's pid now belongs to a process started later is someone else's: left alone."""
    leader = process_start(sid)
    if sid in STARTED and leader is not None and STARTED[sid] is not None and leader != STARTED[sid]:
        return
    for _ in range(5):
        pids = session_pids(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.3)


class Child:
    """A process in a session of its own; its stdout is one JSON event per line."""

    def __init__(self, name: str, argv: list[str], logs: Path, env: dict[str, str] | None = None,
                 events: bool = True):
        self.name = name
        self.log = logs / f"{name}.log"
        self.events: list[dict] = []
        self._changed = threading.Condition()
        self.t0 = time.time()
        self.proc = subprocess.Popen(
            argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE if events else self.log.open("ab"),
            stderr=self.log.open("ab"), text=True, start_new_session=True, env={**os.environ, **(env or {})},
        )  # fmt: skip
        self.sid = self.proc.pid
        adopt(self.sid)
        if events:
            threading.Thread(target=self._read, name=f"{name}-events", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._changed:
                self.events.append(event)
                self._changed.notify_all()
        with self._changed:
            self.events.append({"event": "exit", "t": time.time()})
            self._changed.notify_all()

    def event(self, kind: str, timeout: float = START_TIMEOUT_S, after: int = 0) -> dict:
        """The first event `kind` among the events from index `after` on."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for event in self.events[after:]:
                    if event["event"] == kind:
                        return event
                    if event["event"] == "exit":
                        raise RuntimeError(
                            f"{self.name} ended before '{kind}' (exit {self.proc.wait()}); see {self.log}")
                if not self._changed.wait(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"{self.name}: no '{kind}' within {timeout:.0f} s; see {self.log}")

    def ask(self, command: str, kind: str, timeout: float = 120.0) -> dict:
        after = len(self.events)
        self.send(command)
        return self.event(kind, timeout, after)

    def send(self, command: str) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass

    def cpu(self) -> float:
        return session_cpu(self.sid)

    def rss(self) -> dict:
        return tree_rss(self.sid)

    def stop(self, timeout: float = 60.0) -> None:
        """Ask it to stop its query and end; then kill what is left of its session."""
        if self.proc.poll() is None:
            self.send("stop")
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        self.kill_session()

    def kill_session(self) -> None:
        kill_session(self.sid)
        if self.proc.poll() is None:
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass


def kill_everything() -> None:
    for sid in list(STARTED):
        try:
            kill_session(sid)
        except Exception:  # noqa: BLE001 - the others must go all the same
            pass


# --- set-up -----------------------------------------------------------------------------------------------------


def connect_client_path() -> Path:
    """A folder with the Connect client's missing packages (installed once, pinned, no dependencies)."""
    from shell.paths import cache_dir

    target = cache_dir() / "connect-client-py"
    check = "import grpc_status, google.rpc.status_pb2, zstandard, google.protobuf"
    env = {**os.environ, "PYTHONPATH": str(target)}
    if subprocess.run([sys.executable, "-c", check], env=env, capture_output=True).returncode != 0:
        print(f"installing {', '.join(CONNECT_CLIENT_PACKAGES)} into {target}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade", "--target",
                        str(target), *CONNECT_CLIENT_PACKAGES], check=True)  # fmt: skip
    return target


def job_conf() -> dict[str, str]:
    from shell.jobs.process import JOB_SPARK_CONF

    return dict(JOB_SPARK_CONF)


def base_env(connect_path: Path | None = None) -> dict[str, str]:
    env = {"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": str(REPO)}  # fmt: skip
    if connect_path is not None:
        env["PYTHONPATH"] = f"{connect_path}{os.pathsep}{REPO}"
    return env


def connect_server_command(port: int, log_file: Path, extra: dict[str, str] | None = None) -> list[str]:
    """spark-submit of the Connect server with the shell's Spark configuration (as a job process has it)."""
    from shell.engine.spark import SparkRuntime

    runtime = SparkRuntime("local[*]", job_conf(), log_file)
    conf = {**runtime.conf, "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
            "spark.connect.grpc.binding.address": "127.0.0.1", "spark.connect.grpc.binding.port": str(port),
            **(extra or {})}  # fmt: skip
    if runtime.jars:
        conf["spark.jars"] = ",".join(runtime.jars)
    argv = [str(Path(sys.executable).parent / "spark-submit"), "--class", CONNECT_SERVER_CLASS, "--master", "local[*]",
            "--name", "streamshell-connect-benchmark", "--driver-java-options", runtime.java_options()]  # fmt: skip
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    return argv


def wait_port(port: int, child: Child, timeout: float = START_TIMEOUT_S) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.proc.poll() is not None:
            raise RuntimeError(f"{child.name} ended (exit {child.proc.returncode}); see {child.log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return time.time()
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"{child.name}: port {port} not open within {timeout:.0f} s")


# --- the experiments ----------------------------------------------------------------------------------------------


class Run:
    def __init__(self, state: Path, logs: Path, connect_path: Path, args: argparse.Namespace):
        self.state = state
        self.logs = logs
        self.connect_path = connect_path
        self.args = args
        self.results: dict = {"loads": []}

    def note_load(self, when: str) -> None:
        self.results["loads"].append({"when": when, "load": load(), "t": time.time()})

    # a job per local driver process -------------------------------------------------------------------------------

    def local_job(self, name: str) -> tuple[Child, dict]:
        checkpoint = self.state / name / "checkpoint"
        spec = {"repo": str(REPO), "conf": job_conf(), "log": str(self.logs / f"{name}-spark.log"), "name": name,
                "checkpoint": str(checkpoint)}  # fmt: skip
        load_before = load()
        child = Child(name, [sys.executable, "-c", LOCAL_JOB, json.dumps(spec)], self.logs, base_env())
        first = child.event("first_batch")
        cpu = child.cpu()
        figures = {"wall_s": round(first["t"] - child.t0, 1), "cpu_s": round(cpu, 1),
                   "spark_ready_s": round(child.event("spark")["t"] - child.t0, 1), "load": load_before,
                   "checkpoint": str(checkpoint)}  # fmt: skip
        print(f"  {name}: first batch after {figures['wall_s']} s, {figures['cpu_s']} CPU s (load {load_before})",
              file=sys.stderr)  # fmt: skip
        return child, figures

    def local_jobs(self) -> None:
        section = self.results["local"] = {"starts": []}
        self.note_load("local jobs: start")
        jobs = []
        for n in range(self.args.repeats):
            child, figures = self.local_job(f"local-start-{n + 1}")
            section["starts"].append(figures)
            if n < self.args.repeats - 1:
                child.stop()
            else:
                jobs.append((child, figures))
        time.sleep(self.args.settle)
        section["rss_1"] = jobs[0][0].rss()
        for n in (2, 3):
            child, figures = self.local_job(f"local-job-{n}")
            section.setdefault("starts_beside_others", []).append(figures)
            jobs.append((child, figures))
        time.sleep(self.args.settle)
        per_job = [child.rss() for child, _ in jobs]
        section["rss_3"] = {"total_mib": sum(r["total_mib"] for r in per_job), "per_job": per_job}
        self.note_load("local jobs: 3 running")
        # kill -9 of the second job's driver process (its Python, as `kill -9 <pid>` would): the others go on
        victim, victim_figures = jobs[1]
        before = {c.name: last_commit(Path(f["checkpoint"])) for c, f in jobs}
        killed_at = time.time()
        os.kill(victim.proc.pid, signal.SIGKILL)
        gone_s = None
        while time.time() - killed_at < 60:
            if not session_pids(victim.sid):
                gone_s = round(time.time() - killed_at, 1)
                break
            time.sleep(0.2)
        left = [Path(f"/proc/{pid}/comm").read_text().strip() for pid in session_pids(victim.sid)
                if Path(f"/proc/{pid}/comm").exists()]  # fmt: skip
        time.sleep(8)
        after = {c.name: last_commit(Path(f["checkpoint"])) for c, f in jobs}
        section["kill_one"] = {"victim": victim.name, "commits_before": before, "commits_8s_after": after,
                               "victim_tree_gone_after_s": gone_s, "left_after_60s": left}  # fmt: skip
        for child, _ in jobs:
            child.stop()

    # the real job process -----------------------------------------------------------------------------------------

    def real_job(self) -> None:
        """The shell's own path: Session.execute(INSERT) launches `python -m shell.job_process <folder>`."""
        from shell.jobs.record import JobState
        from shell.session import Session, SessionOptions
        from shell.sql.parse import parse_script

        section = self.results["real_job"] = {}
        self.note_load("real job: start")
        home = self.state / "home"
        os.environ.update(base_env())  # the job process inherits it: loopback, the venv's Python
        session = Session(SessionOptions(home=home), runtime=None)
        for statement in parse_script(
            "CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');"
            "CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');"
        ):
            session.execute(statement)
        (insert,) = parse_script("INSERT INTO sink SELECT id FROM src;")
        t0 = time.time()
        load_before = load()
        started = session.execute(insert)
        folder = home / "jobs" / started.job_id
        running_s = time.time() - t0
        state = JobState.read(folder)
        sid = session_of(state.pid) if state and state.pid else None
        if sid is not None:
            adopt(sid)
        checkpoint = folder / "checkpoint"
        deadline = time.monotonic() + START_TIMEOUT_S
        while last_commit(checkpoint) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        section["start"] = {"wall_s": round(time.time() - t0, 1), "running_after_s": round(running_s, 1),
                            "cpu_s": round(session_cpu(sid), 1) if sid else None, "load": load_before}  # fmt: skip
        print(f"  real job: first batch after {section['start']['wall_s']} s, {section['start']['cpu_s']} CPU s",
              file=sys.stderr)  # fmt: skip
        time.sleep(self.args.settle)
        section["rss"] = tree_rss(sid) if sid else None
        # kill -9 of the job process (the monitor's child, the pid in state.json)
        state = JobState.read(folder)
        before = last_commit(checkpoint)
        killed_at = time.time()
        os.kill(state.pid, signal.SIGKILL)
        while time.time() - killed_at < 60:
            now = JobState.read(folder)
            if now and now.status == "FAILED" and not session_pids(sid):
                break
            time.sleep(0.2)
        now = JobState.read(folder)
        section["kill"] = {"status": now.status if now else None, "failure": now.failure if now else None,
                           "recorded_after_s": round(time.time() - killed_at, 1),
                           "left": len(session_pids(sid)), "last_commit": before}  # fmt: skip
        time.sleep(2)
        section["kill"]["last_commit_after"] = last_commit(checkpoint)
        # RESUME JOB continues from the checkpoint: the next batch is the one after the last committed
        committed = last_commit(checkpoint)
        (resume,) = parse_script(f"RESUME JOB '{started.job_id}';")
        t0 = time.time()
        session.execute(resume)
        state = JobState.read(folder)
        sid2 = session_of(state.pid) if state and state.pid else None
        if sid2 is not None:
            adopt(sid2)
        while (last_commit(checkpoint) or -1) <= (committed or -1) and time.time() - t0 < START_TIMEOUT_S:
            time.sleep(0.05)
        section["resume"] = {"wall_s": round(time.time() - t0, 1), "last_commit_before": committed,
                             "first_commit_after": _first_commit_after(checkpoint, committed)}  # fmt: skip
        (stop,) = parse_script(f"STOP JOB '{started.job_id}';")
        try:
            session.execute(stop)
        except Exception as exc:  # noqa: BLE001 - the session is killed below anyway
            section["stop_error"] = str(exc)

    # Spark Connect ------------------------------------------------------------------------------------------------

    def connect_server(self, name: str, extra: dict[str, str] | None = None) -> tuple[Child, int, dict]:
        port = free_port()
        load_before = load()
        server = Child(name, connect_server_command(port, self.logs / f"{name}-spark.log", extra), self.logs,
                       base_env(self.connect_path), events=False)  # fmt: skip
        opened = wait_port(port, server)
        figures = {"wall_s": round(opened - server.t0, 1), "cpu_s": round(server.cpu(), 1), "load": load_before,
                   "port": port}  # fmt: skip
        print(f"  {name}: port {port} open after {figures['wall_s']} s, {figures['cpu_s']} CPU s", file=sys.stderr)
        return server, port, figures

    def connect_client(self, name: str, server: Child, port: int, session_id: str | None = None,
                       checkpoint: Path | None = None, function: str = "noop", release: bool = False,
                       ) -> tuple[Child, dict]:
        """A fresh client that starts a query on the server; once more when the first try fails (the failure is
        recorded: under a high load the server's foreachBatch Python process may not connect back in time)."""
        try:
            return self._connect_client(name, server, port, session_id, checkpoint, function, release)
        except RuntimeError as exc:
            cause = _cause(Path(str(exc).rsplit("see ", 1)[-1]))
            self.results.setdefault("connect_failed_starts", []).append({"client": name, "error": str(exc),
                                                                         "cause": cause})
            print(f"  {name} failed ({exc}); once more", file=sys.stderr)
            return self._connect_client(f"{name}-again", server, port, session_id, checkpoint, function, release)

    def _connect_client(self, name: str, server: Child, port: int, session_id: str | None, checkpoint: Path | None,
                        function: str, release: bool) -> tuple[Child, dict]:
        session_id = session_id or str(uuid.uuid4())
        checkpoint = checkpoint or self.state / name / "checkpoint"
        spec = {"url": f"sc://127.0.0.1:{port}/;session_id={session_id}", "checkpoint": str(checkpoint),
                "function": function, "release": release}  # fmt: skip
        load_before = load()
        server_cpu = server.cpu()
        client = Child(name, [sys.executable, "-c", CONNECT_JOB, json.dumps(spec)], self.logs,
                       base_env(self.connect_path))  # fmt: skip
        first = client.event("first_batch")
        client_cpu, server_cpu = client.cpu(), server.cpu() - server_cpu
        figures = {"wall_s": round(first["t"] - client.t0, 1), "client_cpu_s": round(client_cpu, 1),
                   "server_cpu_s": round(server_cpu, 1), "cpu_s": round(client_cpu + server_cpu, 1),
                   "session_ready_s": round(client.event("spark")["t"] - client.t0, 1), "load": load_before,
                   "session_id": session_id, "checkpoint": str(checkpoint), "first_batch": first["batch"],
                   "t_first_batch": first["t"]}  # fmt: skip
        print(f"  {name}: first batch after {figures['wall_s']} s, {figures['cpu_s']} CPU s "
              f"(client {figures['client_cpu_s']}, server {figures['server_cpu_s']}; load {load_before})",
              file=sys.stderr)  # fmt: skip
        return client, figures

    def probe(self, name: str, port: int, session_id: str | None, stop: bool = False) -> dict:
        url = f"sc://127.0.0.1:{port}" + (f"/;session_id={session_id}" if session_id else "")
        child = Child(name, [sys.executable, "-c", CONNECT_PROBE, json.dumps({"url": url, "stop": stop})], self.logs,
                      base_env(self.connect_path))  # fmt: skip
        try:
            found = child.event("probe", timeout=300)
        finally:
            child.kill_session()
        return {k: v for k, v in found.items() if k not in ("event", "t")}

    def connect(self) -> None:
        section = self.results["connect"] = {"starts": []}
        self.note_load("connect: server start")
        server, port, section["server_start"] = self.connect_server("connect-server")
        time.sleep(2)
        section["rss_server_idle"] = server.rss()
        for n in range(self.args.repeats):
            client, figures = self.connect_client(f"connect-start-{n + 1}", server, port, release=True)
            section["starts"].append(figures)
            client.stop()
        # memory: 1 then 3 queries, each from a client of its own that stays
        clients = []
        for n in (1, 2, 3):
            client, figures = self.connect_client(f"connect-job-{n}", server, port)
            clients.append((client, figures))
            section.setdefault("starts_beside_others", []).append(figures)
            if n == 1:
                time.sleep(self.args.settle)
                section["rss_1"] = {"server": server.rss(), "clients": [client.rss()]}
        time.sleep(self.args.settle)
        section["rss_3"] = {"server": server.rss(), "clients": [c.rss() for c, _ in clients]}
        self.note_load("connect: 3 queries running")
        # the API the engine uses, from a client
        api = Child("connect-api", [sys.executable, "-c", CONNECT_API, json.dumps(
            {"url": f"sc://127.0.0.1:{port}", "work": str(self.state / "api")})], self.logs,
            base_env(self.connect_path))  # fmt: skip
        try:
            section["api"] = api.event("done", timeout=1800)["results"]
        except (RuntimeError, TimeoutError) as exc:
            section["api"] = [e for e in api.events if e["event"] == "api"] + [{"api": "(run)", "ok": False,
                                                                               "detail": str(exc)}]  # fmt: skip
        api.kill_session()
        # kill -9 of the first client: its query goes on, seen only through its session id
        victim, victim_figures = clients[0]
        checkpoint = Path(victim_figures["checkpoint"])
        before = last_commit(checkpoint)
        victim.kill_session()
        time.sleep(10)
        kill_client = {"commit_before": before, "commit_10s_after": last_commit(checkpoint)}
        kill_client["other_session_sees"] = self.probe("connect-probe-other", port, None)
        kill_client["same_session_sees"] = self.probe("connect-probe-same", port, victim_figures["session_id"])
        kill_client["same_session_stop"] = self.probe("connect-probe-stop", port, victim_figures["session_id"],
                                                      stop=True)
        time.sleep(5)
        kill_client["commit_after_stop"] = last_commit(checkpoint)
        time.sleep(3)
        kill_client["commit_3s_later"] = last_commit(checkpoint)
        section["kill_client"] = kill_client
        # kill -9 of the server JVM: every query on it ends
        checkpoints = {c.name: Path(f["checkpoint"]) for c, f in clients[1:]}
        jvm = server.proc.pid  # spark-submit execs the JVM: the same pid
        kill_server = {"killed": Path(f"/proc/{jvm}/comm").read_text().strip(),
                       "commits_at_kill": {k: last_commit(p) for k, p in checkpoints.items()}}  # fmt: skip
        killed_at = time.time()
        os.kill(jvm, signal.SIGKILL)
        time.sleep(5)
        kill_server["commits_5s_after"] = {k: last_commit(p) for k, p in checkpoints.items()}
        kill_server["left_in_server_session_5s"] = [Path(f"/proc/{pid}/comm").read_text().strip()
                                                    for pid in session_pids(server.sid)
                                                    if Path(f"/proc/{pid}/comm").exists()]  # fmt: skip
        asked = {client.name: (client, len(client.events)) for client, _ in clients[1:]}
        for client, _ in asked.values():
            client.send("status")
        kill_server["client_status"] = {}
        for name, (client, after) in asked.items():
            try:
                status = client.event("status", timeout=max(1.0, killed_at + 5 + self.args.answer_wait - time.time()),
                                      after=after)  # fmt: skip
                kill_server["client_status"][name] = {k: v for k, v in status.items() if k not in ("event", "t")} | {
                    "answered_after_s": round(status["t"] - killed_at, 1)}
            except (RuntimeError, TimeoutError):
                kill_server["client_status"][name] = {"answer": f"none within {self.args.answer_wait:.0f} s"}
        kill_server["commits_later"] = {k: last_commit(p) for k, p in checkpoints.items()}
        kill_server["seconds_from_kill"] = round(time.time() - killed_at, 1)
        kill_server["left_in_server_session_later"] = [Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")[-80:]
                                                       for pid in session_pids(server.sid)
                                                       if Path(f"/proc/{pid}/cmdline").exists()]  # fmt: skip
        section["kill_server"] = kill_server
        for client, _ in clients:
            client.kill_session()
        server.kill_session()
        kept = checkpoints[clients[1][0].name]
        self.results["connect_checkpoint_of_killed_server"] = {"path": str(kept), "last_commit": last_commit(kept)}

    def connect_timeout(self) -> None:
        """A server whose sessions expire after --session-timeout without an RPC: what becomes of the queries.

        Each query's client ends its RPCs at the query's first batch (it only polled lastProgress until then);
        a "killed" client is killed right after. Every checkpoint's commit log is read once a second, so when each
        query stopped (if it did) is known to a second."""
        section = self.results["connect_timeout"] = {"timeout_s": self.args.session_timeout}
        self.note_load("connect session timeout: start")
        extra = {"spark.connect.session.manager.defaultSessionTimeout": f"{self.args.session_timeout}s",
                 "spark.connect.session.manager.maintenanceInterval": "5s"}  # fmt: skip
        server, port, _ = self.connect_server("connect-server-timeout", extra)
        watched: dict[str, Path] = {}
        samples: dict[str, list] = {}
        done = threading.Event()

        def sample() -> None:
            while not done.wait(1.0):
                for key, checkpoint in list(watched.items()):
                    samples.setdefault(key, []).append((time.time(), last_commit(checkpoint)))

        threading.Thread(target=sample, name="commit-sampler", daemon=True).start()
        queries: dict[str, tuple[Child, dict]] = {}

        def add(key: str, name: str, kill: bool, **options) -> None:  # noqa: ANN003 - connect_client's
            client, figures = self.connect_client(name, server, port, **options)
            if kill:
                client.kill_session()
            watched[key] = Path(figures["checkpoint"])
            queries[key] = (client, figures)

        resumed_from = self.results.get("connect_checkpoint_of_killed_server") or {}
        try:
            add("killed client, rate -> noop sink", "timeout-killed-sink", True, function="sink")
            add("killed client, rate -> foreachBatch(noop)", "timeout-killed-foreachbatch", True)
            add("live idle client, rate -> noop sink", "timeout-idle-sink", False, function="sink")
            # resubmitted on the checkpoint of a query of the server killed before: it goes on from there
            add("live idle client, rate -> foreachBatch(noop)", "timeout-idle-foreachbatch", False,
                checkpoint=Path(resumed_from["path"]) if resumed_from else None)  # fmt: skip
            first = queries["live idle client, rate -> foreachBatch(noop)"][1]["first_batch"]
            section["resubmitted_on_checkpoint"] = {"checkpoint": resumed_from.get("path"), "first_batch": first,
                                                    "last_commit_before": resumed_from.get("last_commit")}  # fmt: skip
            last_rpc = max(f["t_first_batch"] for _, f in queries.values())
            while time.time() < last_rpc + self.args.session_timeout + 40:
                time.sleep(1)
        finally:
            done.set()
        section["queries"] = {}
        for key, (client, figures) in queries.items():
            section["queries"][key] = _stopped(samples.get(key, []), figures["t_first_batch"])
        idle_sink = queries["live idle client, rate -> noop sink"][0]
        section["idle_sink_client_status"] = {k: v for k, v in idle_sink.ask("status", "status", timeout=180).items()
                                              if k not in ("event", "t")}  # fmt: skip
        killed = {k: f["session_id"] for k, (_, f) in queries.items() if k.startswith("killed")}
        section["probes"] = {k: self.probe(f"timeout-probe-{n}", port, sid)
                             for n, (k, sid) in enumerate(killed.items())}
        for client, _ in queries.values():
            client.kill_session()
        server.kill_session()


def _stopped(samples: list, last_rpc: float) -> dict:
    """When a query's commit log stopped growing, in seconds after its session's last RPC; or that it still grew."""
    if not samples:
        return {"state": "not watched"}
    final = samples[-1][1]
    reached = next(t for t, c in samples if c == final)
    if reached >= samples[-1][0] - 3:
        return {"state": "running", "seconds_after_last_rpc": round(samples[-1][0] - last_rpc, 1), "commit": final}
    return {"state": "stopped", "seconds_after_last_rpc": round(reached - last_rpc, 1), "commit": final}


def _cause(log: Path) -> str | None:
    """The last line of a log that names an exception (what a failed client printed)."""
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if "Exception" in line]
    except OSError:
        return None
    return lines[-1][:300] if lines else None


def _first_commit_after(checkpoint: Path, committed: int | None) -> int | None:
    try:
        ids = sorted(int(n) for n in os.listdir(checkpoint / "commits") if n.isdigit())
    except OSError:
        return None
    later = [i for i in ids if committed is None or i > committed]
    return later[0] if later else None


def py4j_uses() -> dict:
    """The lines of shell/ that reach into py4j handles, which a Connect client does not have."""
    found = []
    for path in sorted((REPO / "shell").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            code = line.split("#", 1)[0]
            names = sorted(set(PY4J_NAMES.findall(code)))
            if names:
                found.append({"where": f"{path.relative_to(REPO)}:{number}", "names": names, "line": line.strip()})
    files: dict[str, int] = {}
    for hit in found:
        files[hit["where"].rsplit(":", 1)[0]] = files.get(hit["where"].rsplit(":", 1)[0], 0) + 1
    return {"lines": len(found), "files": files, "hits": found}


# --- the report -----------------------------------------------------------------------------------------------------


def report(results: dict) -> str:
    out = [f"## Job hosting ({results['date']})", "", f"`{results['command']}` on {results['machine']}; "
           f"pyspark {results['pyspark']}, Java {results['java']}. Loads (1/5/15 min) during the run: "
           + "; ".join(f"{x['when']}: {x['load']}" for x in results["loads"]), ""]  # fmt: skip
    local, connect, real = results.get("local", {}), results.get("connect", {}), results.get("real_job", {})
    out += ["| what | wall s | CPU s | load at start |", "| --- | --- | --- | --- |"]
    for n, f in enumerate(local.get("starts", []), 1):
        out.append(f"| new local driver process, run {n} (rate -> foreachBatch, first batch) | {f['wall_s']} | "
                   f"{f['cpu_s']} | {f['load']} |")  # fmt: skip
    for n, f in enumerate(local.get("starts_beside_others", []), 2):
        out.append(f"| new local driver process beside {n - 1} running | {f['wall_s']} | {f['cpu_s']} | {f['load']} |")
    if real.get("start"):
        f = real["start"]
        out.append(f"| real job process (`Session.execute(INSERT)`, RUNNING after {f['running_after_s']} s; first "
                   f"commit) | {f['wall_s']} | {f['cpu_s']} | {f['load']} |")  # fmt: skip
    if real.get("resume"):
        out.append(f"| RESUME JOB after kill -9 (to the next commit) | {real['resume']['wall_s']} | | |")
    if connect.get("server_start"):
        f = connect["server_start"]
        out.append(f"| Connect server start (spark-submit to gRPC port open) | {f['wall_s']} | {f['cpu_s']} | "
                   f"{f['load']} |")  # fmt: skip
    for n, f in enumerate(connect.get("starts", []), 1):
        out.append(f"| Connect: fresh client, query {n} on the server (first batch) | {f['wall_s']} | {f['cpu_s']} "
                   f"(client {f['client_cpu_s']} + server {f['server_cpu_s']}) | {f['load']} |")  # fmt: skip
    for n, f in enumerate(connect.get("starts_beside_others", [])):
        out.append(f"| Connect: fresh client, query beside {n} running | {f['wall_s']} | {f['cpu_s']} "
                   f"(client {f['client_cpu_s']} + server {f['server_cpu_s']}) | {f['load']} |")  # fmt: skip
    out += ["", "| resident memory (RSS, whole process trees) | MiB |", "| --- | --- |"]
    if "rss_1" in local:
        out.append(f"| 1 local job process | {local['rss_1']['total_mib']} ({_names(local['rss_1'])}) |")
    if "rss_3" in local:
        out.append(f"| 3 local job processes | {local['rss_3']['total_mib']} |")
    if real.get("rss"):
        out.append(f"| 1 real job process (monitor, job process, JVM, workers) | {real['rss']['total_mib']} "
                   f"({_names(real['rss'])}) |")  # fmt: skip
    if "rss_server_idle" in connect:
        out.append(f"| Connect server, idle | {connect['rss_server_idle']['total_mib']} |")
    for key, n in (("rss_1", 1), ("rss_3", 3)):
        if key in connect:
            server = connect[key]["server"]["total_mib"]
            clients = sum(c["total_mib"] for c in connect[key]["clients"])
            out.append(f"| Connect server with {n} quer{'y' if n == 1 else 'ies'} + {n} client process"
                       f"{'es' if n > 1 else ''} | {server + clients} "
                       f"(server {server} ({_names(connect[key]['server'])}), "
                       f"clients {clients}) |")  # fmt: skip
    out += ["", "Survival:", ""]
    if "kill_one" in local:
        k = local["kill_one"]
        out.append(f"- 3 local job processes, kill -9 of {k['victim']}'s Python driver: its tree was gone after "
                   f"{k['victim_tree_gone_after_s']} s; last commit per job before {k['commits_before']}, 8 s after "
                   f"{k['commits_8s_after']}")  # fmt: skip
    if "kill" in real:
        k = real["kill"]
        out.append(f"- real job process, kill -9: state.json says {k['status']} ({k['failure']}) after "
                   f"{k['recorded_after_s']} s, {k['left']} processes left; last commit {k['last_commit']}, 2 s later "
                   f"{k['last_commit_after']}")  # fmt: skip
    if "resume" in real:
        r = real["resume"]
        out.append(f"- RESUME JOB: last commit before {r['last_commit_before']}, first commit after "
                   f"{r['first_commit_after']}, {r['wall_s']} s")  # fmt: skip
    if "kill_client" in connect:
        k = connect["kill_client"]
        out.append(f"- Connect, kill -9 of a client: its query's last commit {k['commit_before']}, 10 s later "
                   f"{k['commit_10s_after']}; a client with a new session sees {_seen(k['other_session_sees'])}; a "
                   f"client on the same session id sees {_seen(k['same_session_sees'])} and stopping them leaves "
                   f"{k['same_session_stop'].get('active_after_stop', k['same_session_stop'].get('error'))}; commits "
                   f"after the stop {k['commit_after_stop']}, 3 s later {k['commit_3s_later']}")  # fmt: skip
    if "kill_server" in connect:
        k = connect["kill_server"]
        out.append(f"- Connect, kill -9 of the server JVM: last commits at the kill {k['commits_at_kill']}, "
                   f"{k['seconds_from_kill']} s later {k['commits_later']}; left in its session after 5 s: "
                   f"{k['left_in_server_session_5s']}, after {k['seconds_from_kill']} s: "
                   f"{k['left_in_server_session_later']}; the clients' queries answer "
                   f"{k['client_status']}")  # fmt: skip
    timeout = results.get("connect_timeout", {})
    if "queries" in timeout:
        told = "; ".join(f"{key}: {q['state']} {q.get('seconds_after_last_rpc')} s after its last RPC"
                         for key, q in timeout["queries"].items())  # fmt: skip
        out.append(f"- Connect with defaultSessionTimeout = {timeout['timeout_s']} s (maintenance every 5 s): {told}; "
                   f"the live idle client's noop-sink query then answers {timeout['idle_sink_client_status']}; a new "
                   f"client on each killed client's session id sees: "
                   + "; ".join(f"{k}: {_seen(v)}" for k, v in timeout["probes"].items()))  # fmt: skip
    if "resubmitted_on_checkpoint" in timeout:
        r = timeout["resubmitted_on_checkpoint"]
        out.append(f"- Connect, the killed server's query resubmitted on its checkpoint to the second server: first "
                   f"batch {r['first_batch']} (its last commit on the killed server: {r['last_commit_before']})")
    for failed in results.get("connect_failed_starts", []):
        out.append(f"- a Connect client's query failed to start and was started again: {failed['client']}: "
                   f"{failed['cause']}")  # fmt: skip
    for part, error in results.get("errors", {}).items():
        out.append(f"- part {part} failed: {error}")
    if "api" in connect:
        out += ["", "| API from a Connect client | works | what happened |", "| --- | --- | --- |"]
        for row in connect["api"]:
            out.append(f"| {row['api']} | {'yes' if row['ok'] else 'no'} | {row['detail']} |")
    uses = results["py4j"]
    out += ["", f"py4j handles in shell/ ({uses['lines']} lines): "
            + ", ".join(f"{k} ({v})" for k, v in uses["files"].items())]  # fmt: skip
    out += [f"- `{h['where']}`: `{h['line']}`" for h in uses["hits"]]
    return "\n".join(out)


def _seen(probe: dict) -> str:
    if "error" in probe:
        return f"an error ({probe['error']})"
    return f"{len(probe.get('active', []))} active quer{'y' if len(probe.get('active', [])) == 1 else 'ies'}" + (
        f" (at batch {', '.join(str(q['batch']) for q in probe['active'])})" if probe.get("active") else "")


def _names(rss: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(rss["by_name_mib"].items(), key=lambda kv: -kv[1]))


def java_version() -> str:
    done = subprocess.run(["java", "-version"], capture_output=True, text=True)
    match = re.search(r'version "([^"]+)"', done.stderr)
    return match.group(1) if match else "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="starts measured per kind (default 2)")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds a job runs before its memory is read")
    parser.add_argument("--session-timeout", type=int, default=20,
                        help="the short Connect session timeout of the expiry experiment, in seconds")
    parser.add_argument("--answer-wait", type=float, default=30.0,
                        help="seconds to wait for a Connect client's answer after its server was killed")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: local,real,connect,timeout")
    parser.add_argument("--json", type=Path,
                        help="where to write the raw figures (default: results.json beside the logs)")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    import pyspark

    logs = Path(tempfile.mkdtemp(prefix="job-hosting-logs-"))
    results_path = args.json or logs / "results.json"
    command = ".venv/bin/python -m benchmarks.job_hosting" + ("" if argv is None and len(sys.argv) == 1 else
                                                              " " + " ".join(sys.argv[1:] if argv is None else argv))
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(128 + 15))
    print(f"logs in {logs}", file=sys.stderr)
    connect_path = connect_client_path()
    with scratch_dir("job-hosting-") as state:
        run = Run(state, logs, connect_path, args)
        run.results.update(date=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), command=command,
                           machine=machine(), pyspark=pyspark.__version__, java=java_version(),
                           python=platform.python_version(), py4j=py4j_uses(), errors={})  # fmt: skip
        parts = [("local", run.local_jobs), ("real", run.real_job), ("connect", run.connect),
                 ("timeout", run.connect_timeout)]  # fmt: skip
        try:
            for name, part in parts:
                if name in skip:
                    continue
                print(f"{name} ...", file=sys.stderr)
                try:
                    part()
                except Exception as exc:  # noqa: BLE001 - report it, and go on with the next part
                    run.results["errors"][name] = f"{type(exc).__name__}: {exc}"
                    print(f"  {name} failed: {exc}", file=sys.stderr)
                finally:
                    kill_everything()
            run.note_load("end")
        finally:
            kill_everything()
            results_path.write_text(json.dumps(run.results, indent=1, default=str) + "\n")
    print(report(run.results))
    print(f"\nraw figures: {results_path}; logs: {logs}", file=sys.stderr)
    return 1 if run.results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
