"""The engine benchmarks, each run end to end at a small size with its results checked, so that none can rot.

A benchmark is only run by hand (`make bench-*`), so a change that breaks one goes unseen until someone needs its
figures: the engine benchmark once failed for every streamshell run for weeks, because it looked its job up in the
shell's own registry after jobs moved to processes of their own. Here each runs as its `--quick` form does, smaller,
against the test session's Kafka: the job detached as users run it, Flink beside it where the benchmark has it, and
every engine's results checked in the same run. No timing is asserted: the figures are the benchmark's to report.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.e2e.cli import ROOT

pytestmark = pytest.mark.e2e
# make test runs streamshell and Flink, and the append path's streamshell beside PySpark; `make test-benchmarks`
# (STREAMSHELL_BENCH_ENGINES=all) adds the pipeline written by hand in PySpark and Spark's floor (each engine costs
# about a minute here: a Spark start, two producer runs and a check) and the append path with 'errors.mode' =
# 'ignore'
ALL = os.environ.get("STREAMSHELL_BENCH_ENGINES") == "all"
ENGINES = ["streamshell", "flink", "pyspark", "spark-floor"] if ALL else ["streamshell", "flink"]
APPEND_VARIANTS = ["pyspark", "streamshell", "streamshell-ignore"] if ALL else ["pyspark", "streamshell"]


def run(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_the_engine_benchmark_runs_the_changelog_and_append_paths_with_results_checked(brokers):
    out = run("benchmarks.engine", "--quick", "--only", "count", "--only", "append", "--keys", "1000",
              "--changes", "1000", "--seconds", "4", "--rate", "300", "--idle-seconds", "3", "--orders", "5000",
              "--append-queries", "window", "--append-variants", ",".join(APPEND_VARIANTS),
              "--engines", ",".join(ENGINES)).stdout
    results = json.loads(open(re.search(r"results in (\S+)", out).group(1)).read())
    runs = {r["engine"]: r for r in results["changelog"]}
    assert set(runs) == set(ENGINES)  # each checked against its own result
    for engine, measured in runs.items():
        assert measured["verify"]["ok"], (engine, measured["verify"])
        assert measured["latency"]["arrived"] == measured["latency"]["probes"] > 0, engine
        assert measured["idle"]["cpu_s"] >= 0 and measured["idle"]["wall_s"] >= 3, engine
        assert measured["changes"]["cpu_s"] > 0, engine  # the job's own processes are counted
    streamshell = runs["streamshell"]
    assert sum(rows for rows, _ in streamshell["batches"]) >= 1000 + 1000  # read from the detached job's batch log
    assert {(r["query"], r["variant"]) for r in results["append"]} == {("window", v) for v in APPEND_VARIANTS}
    for measured in results["append"]:
        assert "error" not in measured, measured
        assert 5000 <= measured["rows"] <= 5001 and measured["cpu_s"] > 0, measured  # streamshell: + end of input
    assert "| user count | streamshell |" in out and "| user count | flink |" in out
    if "pyspark" in ENGINES:
        assert "| user count | pyspark |" in out and "pyspark: the pipeline written by hand" in out
    if "spark-floor" in ENGINES:
        assert "| user count | spark-floor |" in out and "spark-floor, beside the user count" in out


def test_the_batch_breakdown_follows_a_detached_job(brokers):
    out = run("benchmarks.engine_batches", "--keys", "2000", "--seconds", "3", "--rate", "200").stdout
    assert "preload read in" in out
    batches = re.findall(r"^batch \d+: (\d+) rows, trigger \d+ ms, addBatch \d+ ms .*\| (.*)$", out, re.M)
    assert sum(int(rows) for rows, _ in batches) >= 2000
    # the keyed stage: the JVM's (transformWithStateExec) when jvm/stages is built, else the Python one
    assert all(re.search(r"transformWithState\w*Exec", operators) and "commit" in operators for _, operators in batches)
    assert re.search(r"^\| transformWithState\w*Exec: update ms \(summed over tasks\) \| [\d,]+ \|", out, re.M)


def test_nexmark_runs_a_query_to_its_end_as_a_detached_job(brokers):
    """The Nexmark runner at a small size: an append-only and an updating query, streamshell (a detached job) and
    Flink, each run's sink checked against the other engine's before the table is printed."""
    hand_written = ["pyspark", "pyspark-job"] if ALL else []  # make test-benchmarks: PySpark warm, and as a job
    done = run("benchmarks.nexmark", "--events", "2000", "--runs", "1", "--warm-up-events", "0", "--queries", "q2,q17",
               "--engines", ",".join(["streamshell", "flink", *hand_written]))  # fmt: skip
    results = json.loads(open(re.search(r"^results in (\S+)", done.stdout, re.M).group(1)).read())
    runs = {(r["engine"], r["query"]): r for r in results["runs"]}
    # q17 is not written by hand in PySpark
    assert set(runs) == {(e, q) for e in ("streamshell", "flink") for q in ("q2", "q17")} | {(e, "q2") for e in hand_written}
    for measured in runs.values():
        assert "error" not in measured, measured
        assert measured["verdict"]["ok"], measured["verdict"]
        assert measured["cpu_s"] > 0 and measured["peak_rss"] > 0 and measured["wall_s"] > 0, measured
    assert runs["streamshell", "q2"]["rows"] == 2001  # the detached job's batches (+ its end-of-input row)
    assert runs["streamshell", "q2"]["verdict"]["rows"] == runs["flink", "q2"]["verdict"]["rows"] > 0
    assert runs["streamshell", "q17"]["verdict"]["rows"] > 0  # each auction's statistics per day, compared by key
    others = "flink" + ", pyspark, pyspark-job" * bool(hand_written)
    assert re.search(rf"^\| q2 \(selection\) \| streamshell \| yes, = {others} \| [\d.]+ \|", done.stdout, re.M)
    assert re.search(r"^\| q17 \(.*\) \| flink \| yes, = streamshell \| [\d.]+ \|", done.stdout, re.M)


def test_a_wrong_nexmark_sink_fails_the_check_and_the_run(brokers, tmp_path):
    """The Nexmark check compares final rows (an upsert sink: the latest row per key, tombstones taking rows away;
    an append sink: the multiset of its rows), and a run with a difference exits 1 without writing its table."""
    from benchmarks import engine_data, engine_data_python
    from benchmarks.engine_data import KAFKA

    suffix = os.urandom(3).hex()
    names = ("q4-reference", "q4-same", "q4-wrong", "q2-reference", "q2-wrong")
    topic = {n: f"bench-nexmark-check-{suffix}-{n}" for n in names}
    engine_data.create_topics(list(topic.values()))

    def q4(category: int, final: int | None) -> tuple[str, str | None]:
        return json.dumps({"category": category}), None if final is None else json.dumps({"category": category, "final": final})

    try:
        history = [q4(10, 5), q4(11, 7), q4(10, 6), q4(12, 1), q4(12, None), q4(13, 9)]  # final: 10:6, 11:7, 13:9
        rows = {
            "q4-reference": history,
            "q4-same": [q4(13, 9), q4(11, 7), q4(10, 6)],  # the same final rows by another history
            "q4-wrong": [*history, q4(11, 8), q4(13, None), q4(14, 2)],  # 11 differs, 13 gone, 14 extra
            "q2-reference": [("k", json.dumps({"auction": 1107, "price": p})) for p in (100, 100, 250)],
            "q2-wrong": [("k", json.dumps({"auction": 1107, "price": p})) for p in (100, 250)],  # one of two rows lost
        }
        engine_data_python.send([(topic[n], k, v) for n, messages in rows.items() for k, v in messages], KAFKA)

        def check(query: str, sink: str) -> tuple[int, dict]:
            done = subprocess.run([sys.executable, "-m", "benchmarks.nexmark_check", "--query", query, "--reference",
                                   topic[f"{query}-reference"], "--sink", topic[sink]], cwd=ROOT, capture_output=True,
                                  text=True, timeout=300)  # fmt: skip
            return done.returncode, json.loads(done.stdout)

        code, verdict = check("q4", "q4-same")
        assert code == 0 and verdict["ok"] and verdict["rows"] == 3, verdict
        code, verdict = check("q4", "q4-wrong")
        assert code == 1 and not verdict["ok"], verdict
        assert verdict["differences"][0].startswith("flink run 1 has 3 row(s), sink run 1 3; 2 of"), verdict
        assert sorted(verdict["differences"][1:]) == sorted([
            '- {"category": 11, "final": 7}', '- {"category": 13, "final": 9}',
            '+ {"category": 11, "final": 8}', '+ {"category": 14, "final": 2}'])  # fmt: skip
        code, verdict = check("q2", "q2-wrong")
        assert code == 1 and verdict["differences"][1:] == ['- {"auction": 1107, "price": 100}'], verdict
    finally:
        engine_data.delete_topics(list(topic.values()))

    # a run whose check failed: its report is printed, its table not written, and it exits 1
    measured = {"engine": "streamshell", "query": "q2", "run": 1, "wall_s": 2.0, "cpu_s": 3.0, "peak_rss": 2**30,
                "load": [1.0, 1.0], "verdict": {"ok": False, "rows": 2, "against": "flink", "differences": ["differs"]}}
    results = {"command": "python -m benchmarks.nexmark", "date": "2026-12-05", "commit": "0", "events": 2000, "gap": 10,
               "runs_per_query": 1, "queries": ["q2"], "engines": ["flink", "streamshell"], "verified": True,
               "load": [1.0, 1.0], "run_loads": [1.0],
               "runs": [{**measured, "id": "streamshell q2 run-1"},
                        {**measured, "id": "flink q2 run-1", "engine": "flink", "verdict": {**measured["verdict"], "ok": True}}]}
    (tmp_path / "results.json").write_text(json.dumps(results))
    docs = (ROOT / "docs" / "benchmarks.md").read_text()
    done = subprocess.run([sys.executable, "-m", "benchmarks.nexmark", "--from-results", str(tmp_path / "results.json"),
                           "--write"], cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 1, done
    assert "| q2 (selection) | streamshell | DIFFERS |" in done.stdout
    assert "streamshell q2 run-1: differs" in done.stderr and "no table written" in done.stderr
    assert (ROOT / "docs" / "benchmarks.md").read_text() == docs


def test_a_wrong_sink_fails_the_check_in_python_and_in_spark_alike(brokers):
    """The small runs' check (Python) and the large runs' (Spark) find the same wrong rows in a sink."""
    from benchmarks import engine_data, engine_data_python
    from benchmarks.engine_data import KAFKA

    suffix = os.urandom(3).hex()
    users, sink = f"bench-check-{suffix}-users", f"bench-check-{suffix}-sink"
    engine_data.create_topics([users, sink])
    try:
        for phase, changes in (("preload", 0), ("changes", 500)):
            run("benchmarks.engine_data", "produce", "--pipeline", "count", "--phase", phase, "--topics", users,
                "--keys", "200", "--changes", str(changes), "--accounts", "30")  # fmt: skip
        counts: dict[str, int] = {}
        for user in engine_data_python.latest(users, KAFKA).values():
            counts[user["accountId"]] = counts.get(user["accountId"], 0) + 1
        wrong_account, gone_account = sorted(counts)[:2]
        rows = [(sink, a, json.dumps({"accountId": a, "userCount": n + (a == wrong_account)}))
                for a, n in counts.items()]  # fmt: skip
        rows += [(sink, gone_account, None), (sink, "a-nobody", json.dumps({"userCount": 1}))]
        engine_data_python.send(rows, KAFKA)
        check = ["benchmarks.engine_data", "verify", "--pipeline", "count", "--inputs", users, "--sink", sink]
        by_python, by_spark = (json.loads(run(*check, *extra).stdout) for extra in ((), ("--spark",)))
        for verdict in (by_python, by_spark):
            assert verdict["ok"] is False and verdict["mismatches"] == 3, verdict
            assert verdict["expected_rows"] == len(counts) and verdict["sink_rows"] == len(counts), verdict
        assert sorted(e["k"] for e in by_python["examples"]) == sorted(e["k"] for e in by_spark["examples"]) == sorted(
            [wrong_account, gone_account, "a-nobody"])
    finally:
        engine_data.delete_topics([users, sink])


def test_the_real_time_benchmark_runs_every_engine_with_its_output_checked(brokers):
    # streamshell in micro-batches is the same runner's code as in real-time mode, less the SET: left to --quick
    out = run("benchmarks.real_time", "--quick", "--seconds", "3", "--rates", "200",
              "--engines", "streamshell-low,flink").stdout
    results = json.loads(open(re.search(r"results in (\S+)", out).group(1)).read())
    assert [r["engine"] for r in results] == ["streamshell-low", "flink"]
    # the job measured as real-time mode was given the setting (the e2e tests show the job honours it)
    assert [r["latency_setting"] for r in results] == ["low", None]
    for result in results:
        (phase,) = result["phases"]
        assert phase["check"]["ok"] and phase["check"]["rows"] == 450, (result["engine"], phase["check"])
        assert phase["p50_ms"] is not None and phase["cores"] > 0, result
    assert re.search(r"\| streamshell-low \| 200 \| [\d,]+ \| 450 \|", out)
