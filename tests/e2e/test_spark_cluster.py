"""The same jobs on a Spark standalone cluster: a master and two workers on loopback (scripts/spark-cluster), the
real CLI with `--master spark://...`, the real Pulsar and Kafka brokers.

- the executors' Python workers import `shell` from the zip the session ships (not from the machine's install),
  and the jars reach them;
- both seed pipelines on Pulsar, and the user count on Kafka (Spark's Kafka connector, from the shipped jars), each
  a detached job whose application runs on the cluster (the master lists it with both workers' cores, each worker
  runs an executor of it), give exactly the scenario's sink messages;
- a tumbling-window SELECT over a bounded file gives on the cluster what the same script gives locally.

The cluster is started once for the test session by scripts/spark-cluster and stopped at its end, unless it was
running already (then it is left as it was). docs/cluster.md tells how to run on a cluster.

`make test` skips this module: it takes 6 to 10 minutes on 2 cores shared with other test runs, mostly Spark
starting an application per job and per shell. `make test-cluster` runs it (STREAMSHELL_CLUSTER_TESTS=1).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.cli import ROOT, streamshell
from tests.e2e.test_scenarios import (
    SCENARIOS,
    SINKS,
    KafkaTopics,
    PulsarTopics,
    kafka_pipeline,
    pulsar_pipeline,
    read_jsonl,
)
from tests.spark.helpers import wait_for

pytestmark = pytest.mark.skipif(os.environ.get("STREAMSHELL_CLUSTER_TESTS") != "1",
                                reason="minutes on a Spark standalone cluster: make test-cluster runs it")

SPARK_CLUSTER = ROOT / "scripts" / "spark-cluster"
WEB_UI = re.compile(r"^(master|worker-\d+): running .*web UI (http://\S+?),?(?:\s|$)", re.MULTILINE)


@dataclass(frozen=True)
class Cluster:
    master_url: str
    master_ui: str
    worker_uis: tuple[str, ...]

    def state(self) -> dict:
        return get_json(f"{self.master_ui}/json/")

    def workers(self) -> list[dict]:
        return [get_json(f"{ui}/json/") for ui in self.worker_uis]

    def app(self, name: str, which: str = "activeapps") -> dict | None:
        return next((a for a in self.state()[which] if a["name"] == name), None)

    def workers_running(self, app_id: str, finished: bool = False) -> int:
        """How many workers have (or had) an executor of the application."""
        key = "finishedexecutors" if finished else "executors"
        return sum(any(e["appid"] == app_id for e in w[key]) for w in self.workers())


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory) -> Cluster:
    started_file = tmp_path_factory.mktemp("spark-cluster") / "started"
    proc = subprocess.run([str(SPARK_CLUSTER), "start", "--started-file", str(started_file)], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    started = started_file.read_text().split() if started_file.exists() else []
    try:
        if proc.returncode != 0:
            pytest.fail(f"scripts/spark-cluster start failed: {(proc.stderr or proc.stdout).strip()}", pytrace=False)
        status = subprocess.run([str(SPARK_CLUSTER), "status"], cwd=ROOT, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=60)
        assert status.returncode == 0, status.stdout + status.stderr
        uis = dict(WEB_UI.findall(status.stdout))
        yield Cluster(status.stdout.splitlines()[0].strip(), uis["master"],
                      tuple(ui for name, ui in sorted(uis.items()) if name != "master"))
    finally:
        if started:
            subprocess.run([str(SPARK_CLUSTER), "stop", *started], cwd=ROOT, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=180)


def test_the_cluster_has_two_workers_and_the_executors_import_the_shipped_package(spark_cluster, tmp_path):
    """A session on the cluster: its two executors (one per worker) import `shell` from the zip the session
    shipped, not from this machine's editable install, and have the Kafka connector's jars."""
    state = spark_cluster.state()
    assert state["status"] == "ALIVE" and state["aliveworkers"] >= 2 and state["url"] == spark_cluster.master_url
    probe = """
import json, sys
from pathlib import Path
from shell.engine.spark import SparkRuntime

def where(_):
    import os, shell
    return [shell.__file__, sorted(os.listdir("."))]

runtime = SparkRuntime(sys.argv[1], {}, Path(sys.argv[2]), app_name="streamshell cluster probe")
spark = runtime.get()
print(json.dumps(spark.sparkContext.parallelize(range(2), 2).map(where).collect()))
runtime.stop()
"""
    proc = subprocess.run([sys.executable, "-c", probe, spark_cluster.master_url, str(tmp_path / "spark.log")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for module, files in json.loads(proc.stdout.splitlines()[-1]):
        zips = [f for f in files if f.startswith("streamshell-") and f.endswith(".zip")]
        assert zips and module == f"./{zips[0]}/shell/__init__.py", module
        assert any(f.startswith("spark-sql-kafka") for f in files), files
    app = spark_cluster.app("streamshell cluster probe", "completedapps")
    assert app is not None and spark_cluster.workers_running(app["id"], finished=True) == 2


def metrics(home: Path, job_id: str) -> dict[str, float]:
    """The job process's Prometheus metrics (`streamshell_job_` left off)."""
    state = json.loads((home / "jobs" / job_id / "state.json").read_text())
    assert state["status"] != "FAILED", state.get("failure")
    if not state.get("metrics_url"):
        return {}
    with urllib.request.urlopen(state["metrics_url"], timeout=10) as response:
        text = response.read().decode()
    found = re.findall(r"^streamshell_job_(\w+)\{[^}]*\} (\S+)$", text, re.MULTILINE)
    return {name: float(value) for name, value in found}


@pytest.mark.parametrize("scenario, system", [
    ("user-count-by-account", "pulsar"),
    ("favorite-color-and-cheese", "pulsar"),
    ("user-count-by-account", "kafka"),  # Spark's Kafka connector: the jars the session ships, used on the executors
])
def test_a_seed_pipeline_runs_as_a_job_on_the_cluster_with_exactly_the_expected_sink_messages(
        scenario, system, spark_cluster, brokers, tmp_path):
    folder = SCENARIOS / scenario
    suffix = uuid.uuid4().hex[:8]
    rewrite = pulsar_pipeline if system == "pulsar" else kafka_pipeline
    sql, topics = rewrite((folder / "pipeline.sql").read_text(), suffix, brokers)
    inputs, expected = read_jsonl(folder / "input.jsonl"), read_jsonl(folder / "expected.jsonl")
    sink = topics[next(t for t in topics if t.endswith(SINKS))]
    if system == "kafka":
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=brokers.kafka_bootstrap)
        admin.create_topics([NewTopic(t, num_partitions=1, replication_factor=1) for t in topics.values()])
        admin.close()
    name = f"cluster-{scenario}-{suffix}"
    script = tmp_path / "pipeline.sql"
    script.write_text(f"SET 'table.dml-sync' = 'false';\nSET 'pipeline.name' = '{name}';\n{sql}")
    home = tmp_path / "home"
    io = (PulsarTopics if system == "pulsar" else KafkaTopics)(brokers, sink)
    job_id = None
    try:
        run = streamshell("--master", spark_cluster.master_url, "-f", str(script), home=home, timeout=600)
        assert run.code == 0, run.err[-3000:]
        job_id = re.search(rf"Job '{name}' started with id (\w+)\.", run.out).group(1)

        app_name = f"streamshell job {job_id} ({name})"
        app = wait_for(lambda: next((a for a in [spark_cluster.app(app_name)] if a and a["cores"] == 2), None), 120,
                       "the job's application running on the master with both workers' cores")
        assert app["state"] == "RUNNING", app
        wait_for(lambda: spark_cluster.workers_running(app["id"]) == 2, 60, "an executor of the job on each worker")

        got: list[dict] = []
        for n, message in enumerate(inputs, start=1):  # each after the previous one's effect, as the scenario says
            io.send(topics[message["topic"]], message["key"], message["value"])
            wait_for(lambda n=n: metrics(home, job_id).get("input_rows_total", 0) >= n, 180,
                     f"the job reading input {n}", interval=0.5)
            got += io.received()
        deadline = time.monotonic() + 30
        while len(got) < len(expected) and time.monotonic() < deadline:
            got += io.received()
        assert got == expected
        assert json.loads((home / "jobs" / job_id / "job.json").read_text())["master"] == spark_cluster.master_url
    finally:
        io.close()
        if job_id is not None:  # its application leaves the cluster: the next test gets both workers
            stop = streamshell("-e", f"STOP JOB '{job_id}';", home=home, timeout=300)
            assert stop.code == 0, stop.err[-3000:]
            wait_for(lambda: spark_cluster.app(f"streamshell job {job_id} ({name})") is None, 120,
                     "the job's application finished")


WINDOW_SQL = """
CREATE TEMPORARY TABLE ev (id INT, k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json');
SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, k;
"""


def test_a_tumbling_window_query_gives_on_the_cluster_what_it_gives_locally(spark_cluster, tmp_path):
    events = [{"id": i, "k": f"k{i % 3}", "v": i, "ts": f"2024-01-01 00:{i * 7 // 60:02d}:{i * 7 % 60:02d}.000"}
              for i in range(1, 41)]  # 40 rows over 4 minutes 40 seconds, three keys
    (tmp_path / "ev.json").write_text("".join(json.dumps(e) + "\n" for e in events))
    script = tmp_path / "window.sql"
    script.write_text(WINDOW_SQL.format(path=tmp_path / "ev.json"))
    expected: Counter = Counter()
    for e in events:
        expected[(f"2024-01-01 00:{e['id'] * 7 // 60:02d}:00.000", e["k"])] += 1
    app_name = f"streamshell window {uuid.uuid4().hex[:8]}"

    def rows(*args: str) -> list[dict]:
        run = streamshell(*args, "--result-mode", "json", "-f", str(script), home=tmp_path / "home", timeout=600)
        assert run.code == 0, run.err[-3000:]
        return sorted((json.loads(line) for line in run.out.splitlines()), key=json.dumps)

    on_cluster = rows("--master", spark_cluster.master_url, "-D", f"spark.app.name={app_name}")
    assert {(r["row"]["window_start"], r["row"]["k"]): r["row"]["n"] for r in on_cluster} == expected
    assert all(r["op"] == "+I" for r in on_cluster) and sum(r["row"]["s"] for r in on_cluster) == 820
    app = spark_cluster.app(app_name, "completedapps")
    assert app is not None and spark_cluster.workers_running(app["id"], finished=True) == 2, "ran on both workers"
    assert rows() == on_cluster, "the same script run locally (local[*])"
