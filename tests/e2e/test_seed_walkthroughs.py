"""The seed article's two pipelines as walkthroughs (examples/pulsar-*.sql), played the way CI plays a demo: `streamshell
--demo FILE` with stdin not a terminal, against the real Pulsar of the test session. Each must exit 0 with every
one of its `-- @expect` lines met and every `-- @wait` met (none given up).

The walkthroughs read the broker's addresses and a per-run topic suffix from the environment (`${env:NAME}` in
their option values), as their headers tell a user to set them; here they point at the session's broker, and the
suffix is new for each run, so a run never sees an earlier run's messages.
"""

from __future__ import annotations

import re
import uuid

import pytest

from tests.e2e.cli import ROOT, streamshell

WALKTHROUGHS = ["pulsar-user-count.sql", "pulsar-colour-cheese.sql"]
EXPECT = re.compile(r"^[ \t]*--[ \t]*@expect\b", re.M)


@pytest.mark.parametrize("name", WALKTHROUGHS)
def test_the_seed_walkthrough_passes_in_ci(name, brokers, tmp_path, monkeypatch):
    path = ROOT / "examples" / name
    expects = len(EXPECT.findall(path.read_text(encoding="utf-8")))
    monkeypatch.setenv("PULSAR_SERVICE_URL", brokers.pulsar_service_url)
    monkeypatch.setenv("PULSAR_ADMIN_URL", brokers.pulsar_admin_url)
    monkeypatch.setenv("DEMO_RUN", uuid.uuid4().hex[:8])
    home = tmp_path / "home"
    run = streamshell("--demo", str(path), "--catalog", str(home), home=home, timeout=1200)
    assert run.code == 0, run.out[-4000:] + run.err[-4000:]
    assert f"Demo finished: {expects} expectation(s) met." in run.out, run.out[-4000:]
    assert run.out.count("✓ @expect") == expects >= 15
    assert "gave up" not in run.out + run.err, "every @wait is met, none timed out"
