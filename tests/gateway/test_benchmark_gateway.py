"""`python -m benchmarks.gateway --quick` runs to its end and reports both readers (no timing is asserted).

It starts a gateway and two CLIs, each with its own Spark (30 s alone, over 2 minutes on a busy machine), so it
runs in `make test-gateway` (STREAMSHELL_GATEWAY_BENCH=1), not in `make test`, whose 25 minutes are spent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.gateway.gateways import ROOT

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not os.environ.get("STREAMSHELL_GATEWAY_BENCH"), reason="make test-gateway runs it"),
]


def test_the_gateway_benchmark_runs_small_and_reports_both_readers():
    run = subprocess.run([sys.executable, "-m", "benchmarks.gateway", "--quick"], cwd=ROOT, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert re.search(r"\| bounded SELECT of 5,000 rows \(3 columns\) \| [\d,]+ rows/s \([\d.]+ s\) \| [\d,]+ rows/s", run.stdout)
    assert len(re.findall(r"\| change to reader, (median|max) of 3 changes \| [\d.]+ s \| [\d.]+ s \|", run.stdout)) == 2
