"""The seeds' pipelines as walkthroughs (examples/pulsar-*.sql, examples/redpanda-bank.sql), played the way CI plays a
demo: `streamshell --demo FILE` with stdin not a terminal, against the real brokers of the test session. Each must
exit 0 with every one of its `-- @expect` lines met and every `-- @wait` met (none given up).

The walkthroughs read the brokers' addresses and a per-run topic suffix from the environment (`${env:NAME}` in
their option values), as their headers tell a user to set them; here they point at the session's brokers, and the
suffix is new for each run, so a run never sees an earlier run's messages. The shell cannot make a Kafka topic with
partitions or compaction, so the topics a walkthrough's header tells a user to make first (with `rpk` or
kafka-topics) are made here with kafka-python's admin client before it plays.

`make test` plays redpanda-bank.sql, whose pipeline nothing else runs. The three Pulsar walkthroughs play the
scenarios' pipelines, whose exact sink messages `make test` checks on Pulsar and on Kafka (test_scenarios.py), and
the demo player is tested on examples/walkthrough.sql (test_demo.py): they are played by `make test-walkthroughs`
(STREAMSHELL_WALKTHROUGHS=all), about 140 s, and every example's statements and annotations are parsed in the unit
tier (tests/unit/test_repl_demo_script.py).
"""

from __future__ import annotations

import os
import re
import uuid

import pytest

from tests.e2e.cli import ROOT, streamshell

ALL_WALKTHROUGHS = ["pulsar-user-count.sql", "pulsar-colour-cheese.sql", "pulsar-store.sql", "redpanda-bank.sql"]
IN_MAKE_TEST = ["redpanda-bank.sql"]
WALKTHROUGHS = ALL_WALKTHROUGHS if os.environ.get("STREAMSHELL_WALKTHROUGHS") == "all" else IN_MAKE_TEST
EXPECT = re.compile(r"^[ \t]*--[ \t]*@expect\b", re.M)
COMPACTED = {"cleanup.policy": "compact"}
# (topic, partitions, configs) a walkthrough needs before it runs; each name gets "-<DEMO_RUN>" as in its header
KAFKA_TOPICS = {
    "redpanda-bank.sql": [
        ("transactions", 5, {}),
        ("transactions.debits", 5, {}),
        ("transactions.credits", 5, {}),
        ("customers", 1, COMPACTED),
        ("accounts", 1, COMPACTED),
    ],
}


def make_kafka_topics(bootstrap: str, topics: list[tuple[str, int, dict[str, str]]], suffix: str) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(f"{name}-{suffix}", partitions, 1, topic_configs=configs)
                             for name, partitions, configs in topics])
    finally:
        admin.close()


@pytest.mark.parametrize("name", WALKTHROUGHS)
def test_the_seed_walkthrough_passes_in_ci(name, brokers, tmp_path, monkeypatch):
    path = ROOT / "examples" / name
    expects = len(EXPECT.findall(path.read_text(encoding="utf-8")))
    suffix = uuid.uuid4().hex[:8]
    monkeypatch.setenv("PULSAR_SERVICE_URL", brokers.pulsar_service_url)
    monkeypatch.setenv("PULSAR_ADMIN_URL", brokers.pulsar_admin_url)
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", brokers.kafka_bootstrap)
    monkeypatch.setenv("DEMO_RUN", suffix)
    if name in KAFKA_TOPICS:
        make_kafka_topics(brokers.kafka_bootstrap, KAFKA_TOPICS[name], suffix)
    home = tmp_path / "home"
    # the jobs run in the shell's own Spark: a process per job is what tests/e2e/test_detached_jobs.py checks, and
    # a Spark start per INSERT would double these walkthroughs' time in CI
    run = streamshell("--demo", str(path), "--catalog", str(home), "-D", "execution.target=embedded", home=home,
                      timeout=1200)  # fmt: skip
    assert run.code == 0, run.out[-4000:] + run.err[-4000:]
    assert f"Demo finished: {expects} expectation(s) met." in run.out, run.out[-4000:]
    assert run.out.count("✓ @expect") == expects >= 15
    assert "gave up" not in run.out + run.err, "every @wait is met, none timed out"
