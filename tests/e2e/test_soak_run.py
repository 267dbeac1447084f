"""The night-long soak (`make bench-soak`, 8 hours) run for a minute and a half at a small size, so that it cannot rot.

Its two jobs run detached as in the long run, each fed its rate with probes; each minute's samples go into
soak.jsonl as they are taken; at the end both sinks are checked against the result recomputed from the input topics,
and the report and the plots are made, and made again from the file alone (what `--from-results` does with a run
that was interrupted). No figure is asserted: the bounds are the long run's to judge. It takes 3-5 minutes on 2 cores, which `make test`
has not to spare: `make test-benchmarks` runs it (STREAMSHELL_SOAK_TEST=1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.cli import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(
    os.environ.get("STREAMSHELL_SOAK_TEST") != "1", reason="the soak's small run: make test-benchmarks (STREAMSHELL_SOAK_TEST=1)")]
PNGS = ("soak-rss.png", "soak-checkpoint.png", "soak-batch.png", "soak-latency.png", "soak-machine.png")


def test_the_soak_samples_two_detached_jobs_checks_their_sinks_and_reports_with_plots(brokers, tmp_path):
    work = tmp_path / "soak"
    done = subprocess.run([sys.executable, "-m", "benchmarks.engine_soak", "--minutes", "1.5", "--every", "20",
                           "--keys", "2000", "--rate", "200", "--engines", "streamshell", "--work", str(work)],
                          cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1200)  # fmt: skip
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.startswith(f"work folder (logs, scripts, soak.jsonl, plots): {work}")
    records = [json.loads(line) for line in (work / "soak.jsonl").read_text().splitlines()]
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "start" and kinds[-1] == "done" and "failed" not in kinds
    jobs = {"streamshell count", "streamshell join"}
    assert {r["job"] for r in records if r["kind"] == "job"} == jobs
    assert {r["job"]: r["result"]["ok"] for r in records if r["kind"] == "verify"} == dict.fromkeys(jobs, True)
    for job in jobs:
        samples = [r for r in records if r["kind"] == "sample" and r["job"] == job]
        assert len(samples) == 5, job  # at 0, 20, 40, 60 and 80 s
        assert all(s["rss_mib"] > 100 and s["jvm_mib"] > 50 and s["checkpoint_mib"] > 0 for s in samples), samples
        assert any(name == "java" for s in samples for _, name, _ in s["procs"]), job
        assert sum(s.get("batches", 0) for s in samples) > 0 and any(s.get("batch_ms_p50") for s in samples), job
        assert any(s.get("p99_s") is not None for s in samples[1:]), job  # the probes of a minute's window
        end = next(r for r in records if r["kind"] == "end" and r["job"] == job)
        assert end["caught_up"] and end["latency"]["arrived"] == end["latency"]["probes"] > 0, end
    assert len([r for r in records if r["kind"] == "machine"]) == 5
    assert "| streamshell join | RSS of the job's processes |" in done.stdout
    assert "| streamshell count | checkpoint folder on disk |" in done.stdout
    for name in PNGS:
        assert (work / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        (work / name).unlink()

    # the report again from the file alone, into the folder of the file
    again = subprocess.run([sys.executable, "-m", "benchmarks.engine_soak", "--from-results", str(work / "soak.jsonl")],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "| streamshell count | RSS of the job's processes |" in again.stdout
    assert all((work / name).exists() for name in PNGS)
