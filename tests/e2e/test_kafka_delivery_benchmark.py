"""The Kafka delivery benchmark's small run (benchmarks/kafka_delivery.py --quick): at-least-once and exactly-once
copies of the same 20,000 messages in one run, each sink counted with isolation.level=read_committed by the
benchmark itself (it fails on a count that is off). No figure is asserted: they are for docs/reliability.md."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.cli import ROOT
from tests.e2e.kafka_topics import kafka_broker

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(
    os.environ.get("STREAMSHELL_EXACTLY_ONCE") != "all", reason="runs in make test-exactly-once, with the exactly-once suite")]
__all__ = ["kafka_broker"]  # the fixture, imported for the test of this module


def test_the_quick_run_measures_both_guarantees_on_every_path_and_counts_each_sink(kafka_broker):
    env = {**os.environ, "STREAMSHELL_KAFKA_BOOTSTRAP": kafka_broker}
    run = subprocess.run([sys.executable, "-m", "benchmarks.kafka_delivery", "--quick"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1200)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [line for line in run.stdout.splitlines() if line.startswith("| ") and "rows/s" not in line and "---" not in line]
    paths = [row.split(" | ")[0].lstrip("| ") for row in rows]
    assert paths == ["the writer alone (a batch DataFrame)", "INSERT ... SELECT, one micro-batch",
                     "INSERT ... SELECT, 2 micro-batches of 10,000"], run.stdout  # fmt: skip
    for row in rows:
        least, exact = (cell.strip() for cell in row.strip("|").split("|")[1:3])
        assert least.replace(",", "").isdigit() and exact.replace(",", "").isdigit(), row
