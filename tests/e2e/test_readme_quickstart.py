"""The README's quick start, followed as a new user follows it: its start line (`.venv/bin/streamshell`) opens the
shell in a pseudo-terminal, and its blocks, read from README.md (tests/readme.py), are typed into that one shell,
line by line.

The generated-data block must show its result changing while it runs and end by itself with every row counted;
the topic block runs against the real Kafka (the `brokers` fixture, after the README's own broker command) and its
SELECT must show the rows the block wrote, then the one the README's second-terminal command adds, live. The
topic is the README's, so rows that earlier runs left in it are counted first, with kafka-python.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from collections import Counter
from pathlib import Path

import pexpect
import pytest

from tests import readme
from tests.e2e.cli import ROOT

pytestmark = pytest.mark.e2e

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|[\x0e\x0f]")
NEW_INPUT = re.escape("\x1b[?2004h")  # prompt-toolkit's bracketed-paste switch: sent whenever an input starts
SPARK_TIMEOUT = 300  # the first query waits for Spark to start, on a busy 2-core machine


class Terminal:
    """The README's start line, run from the checkout in a 160x45 pseudo-terminal, with its own home."""

    def __init__(self, home: Path):
        (command,) = readme.block("shell").splitlines()
        self.env = {**os.environ, "STREAMSHELL_HOME": str(home), "PROMPT_TOOLKIT_NO_CPR": "1",
                    "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "45"}
        argv = shlex.split(command)
        self.child = pexpect.spawn(argv[0], argv[1:], cwd=str(ROOT), env=self.env, encoding="utf-8",
                                   dimensions=(45, 160), timeout=60)
        self.seen = ""

    def expect(self, pattern: str, timeout: float = 60) -> str:
        try:
            self.child.expect(pattern, timeout=timeout)
        except (pexpect.TIMEOUT, pexpect.EOF):
            raise AssertionError(f"did not see {pattern!r}; the screen so far:\n"
                                 f"{ANSI.sub('', self.child.before or '')[-3000:]}") from None
        shown = ANSI.sub("", self.child.before + (self.child.after if isinstance(self.child.after, str) else ""))
        self.seen += shown
        return shown

    def prompt(self, timeout: float = 60) -> str:
        shown = self.expect(NEW_INPUT, timeout)
        return shown + self.expect("streamshell>", 10)

    def type_block(self, block: str) -> None:
        """Type the block as a user would: each line, then Enter (a statement runs at its `;`)."""
        for line in block.splitlines():
            self.child.send(line + "\r")
            time.sleep(0.05)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path / "home")
    yield term
    term.close()


def tables(shown: str, columns: list[str]) -> list[dict[str, tuple[str, ...]]]:
    """Every state of a live table on screen: for each redraw under the header, first column -> the other cells."""
    header = r"\s+".join(map(re.escape, columns))
    states = []
    for part in re.split(header, shown)[1:]:
        rows = {}
        for line in part.splitlines()[1:]:  # the rest of the header's line, then the rule, the rows, the status
            cells = line.split()
            if not cells or set(line.strip()) <= {"─"}:
                continue
            if len(cells) != len(columns):
                break
            rows[cells[0]] = tuple(cells[1:])
        if rows:
            states.append(rows)
    return states


def wait_for_table(terminal: Terminal, columns: list[str], expected: dict[str, int], timeout: float) -> None:
    """Until the live table's last state has exactly `expected` (first column -> second column's number); the
    table is redrawn with its status line at least every second while the query runs."""
    deadline = time.monotonic() + timeout
    while True:
        terminal.expect("changes/s", timeout=timeout)
        states = tables(terminal.seen, columns)
        if states and {key: int(cells[0]) for key, cells in states[-1].items()} == expected:
            return
        assert time.monotonic() < deadline, f"the table never came to {expected}; its last state: {states[-1:]}"


def test_the_quick_start_typed_into_one_shell_shows_live_results(terminal, brokers):
    """As the README has it: one shell, the generated orders first, then the topic."""
    terminal.prompt(timeout=30)
    generated_orders_change_live_and_end_with_every_row(terminal)
    clicks_show_then_change_live(terminal, brokers)
    terminal.child.sendcontrol("d")
    terminal.expect(pexpect.EOF, timeout=120)


def generated_orders_change_live_and_end_with_every_row(terminal: Terminal) -> None:
    block = readme.block("datagen")
    rows = int(re.search(r"'number-of-rows'\s*=\s*'(\d+)'", block).group(1))
    customers = range(int(re.search(r"'fields\.customer_id\.min'\s*=\s*'(\d+)'", block).group(1)),
                      int(re.search(r"'fields\.customer_id\.max'\s*=\s*'(\d+)'", block).group(1)) + 1)
    columns = re.search(r"^SELECT (.*) FROM", block, re.M).group(1)
    names = [part.split(" AS ")[-1].strip() for part in columns.split(",")]

    terminal.type_block(block)
    terminal.expect("Table has been created")
    terminal.expect("finished", timeout=SPARK_TIMEOUT)  # the query ends by itself
    terminal.prompt(timeout=60)  # and the prompt comes back

    states = tables(terminal.seen, names)
    assert states, f"no result table was shown:\n{terminal.seen[-2000:]}"
    final = states[-1]
    assert {int(c) for c in final} <= set(customers)
    assert sum(int(cells[0]) for cells in final.values()) == rows, final
    counted = sorted({sum(int(cells[0]) for cells in state.values()) for state in states})
    partial = [n for n in counted if 0 < n < rows]
    # paced at the README's rate: the count grows in several steps, none a jump of most of the rows at once
    rate = int(re.search(r"'rows-per-second'\s*=\s*'(\d+)'", block).group(1))
    assert len(partial) >= 3, f"the result did not change live: {counted}"
    steps = [b - a for a, b in zip([0, *partial], [*partial, rows])]
    assert max(steps) <= 3 * rate, f"rows came in a burst, not at {rate} a second: {counted}"
    assert "Traceback" not in terminal.seen and "[ERROR]" not in terminal.seen


def clicks_in_topic(bootstrap: str, topic: str) -> Counter:
    """user_name -> messages in the topic now (the topic may not exist yet)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000)
    try:
        if topic not in consumer.topics():
            return Counter()
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
        consumer.assign(partitions)
        consumer.seek_to_beginning()
        ends = consumer.end_offsets(partitions)
        counts: Counter = Counter()
        while any(consumer.position(p) < ends[p] for p in partitions):
            for records in consumer.poll(timeout_ms=2000).values():
                counts.update(json.loads(r.value)["user_name"] for r in records)
        return counts
    finally:
        consumer.close()


def clicks_show_then_change_live(terminal: Terminal, brokers) -> None:  # noqa: ANN001
    before_block = readme.paragraph_before("kafka")
    (broker_command,) = [c for c in readme.code_spans(before_block) if c.startswith("scripts/services ")]
    started = subprocess.run(shlex.split(broker_command), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert started.returncode == 0, started.stderr  # Kafka runs already (the fixture): the command is a no-op

    block = readme.block("kafka")
    topic = re.search(r"'topic'\s*=\s*'([^']+)'", block).group(1)
    bootstrap = re.search(r"'properties\.bootstrap\.servers'\s*=\s*'([^']+)'", block).group(1)
    assert bootstrap == brokers.kafka_bootstrap
    inserted = Counter(re.findall(r"\('(\w+)',", re.search(r"^INSERT INTO .*$", block, re.M).group(0)))
    expected = clicks_in_topic(bootstrap, topic) + inserted
    columns = [part.split(" AS ")[-1].strip()
               for part in re.search(r"^SELECT (.*) FROM", block, re.M).group(1).split(",")]

    terminal.type_block(block)
    wait_for_table(terminal, columns, dict(expected), timeout=SPARK_TIMEOUT)

    (more,) = [c for c in readme.code_spans(readme.paragraph_after("kafka")) if c.startswith(".venv/bin/streamshell")]
    added = subprocess.run(shlex.split(more), cwd=ROOT, env=terminal.env, capture_output=True, text=True,
                           timeout=300)
    assert added.returncode == 0, added.stderr
    expected += Counter(re.findall(r"\('(\w+)',", more))
    wait_for_table(terminal, columns, dict(expected), timeout=120)  # the running SELECT shows the new click
    terminal.child.send("q")
    terminal.prompt(timeout=60)
