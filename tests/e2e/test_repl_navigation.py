"""Table mode's keys in a real pseudo-terminal, typed as a user would (pexpect): a 600-row result paged back to its
first row with Page Up, searched, a row opened, follow mode again; a running query paused while its rows keep
coming, then followed, then stopped with `q`; and SHOW JOBS on an 80-column terminal with every field readable.

The terminal's size is the pty's (COLUMNS and LINES are not set, so rich reads the pty). What is on the screen is
read from the stream of redraws: a frame's rows are what follows the rule under its header, up to its status line.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from shell.jobs.registry import JOB_COLUMNS
from tests.e2e.cli import ROOT

SPARK_TIMEOUT = 300  # a first SELECT waits for Spark to start, on a busy 2-core machine
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|[\x0e\x0f]")
PROMPT = "streamshell>"
NEW_INPUT = re.compile(re.escape("\x1b[?2004h"))  # prompt-toolkit switches bracketed paste on for each new input
PAGE_UP, END = "\x1b[5~", "\x1b[F"

SEQUENCE = (  # 600 rows, n = 100001 ... 100600, in one micro-batch: the query ends by itself
    "CREATE TEMPORARY TABLE seq (n BIGINT, word STRING) WITH ('connector' = 'datagen', "
    "'fields.n.kind' = 'sequence', 'fields.n.start' = '100001', 'fields.n.end' = '100600', "
    "'fields.word.length' = '5');\n"
)
GENERATED = (  # never ends
    "CREATE TEMPORARY TABLE gen (id BIGINT, name STRING) WITH ("
    "'connector' = 'datagen', 'rows-per-second' = '40', 'fields.name.length' = '6');\n"
)
SINK = "CREATE TEMPORARY TABLE sink (id BIGINT, name STRING) WITH ('connector' = 'blackhole');\n"


def plain(text: str) -> str:
    return ANSI.sub("", text)


def rows_of_frame(text: str) -> str:
    """The rows of the last frame drawn in `text`: what follows the rule under its header."""
    return text.rsplit("─", 1)[-1]


class Shell:
    """`streamshell --catalog HOME -i INIT` in a pseudo-terminal of `lines` x `columns`."""

    def __init__(self, home: Path, init: str, lines: int, columns: int):
        init_file = home.parent / f"{home.name}-init.sql"
        init_file.write_text(init)
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env.update(PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color")
        self.child = pexpect.spawn(
            sys.executable, ["-m", "shell", "--catalog", str(home), "-i", str(init_file)], cwd=str(ROOT), env=env,
            encoding="utf-8", dimensions=(lines, columns), timeout=60,
        )

    def expect(self, pattern, timeout: float = 60) -> str:  # noqa: ANN001
        """Wait for `pattern`; what was shown before it (plain text)."""
        try:
            self.child.expect(pattern, timeout=timeout)
        except (pexpect.TIMEOUT, pexpect.EOF):
            raise AssertionError(f"did not see {pattern!r}; screen so far:\n{plain(self.child.before or '')[-3000:]}")
        return plain(self.child.before)

    @property
    def match(self) -> re.Match:
        return self.child.match

    def prompt(self, timeout: float = 60) -> str:
        shown = self.expect(NEW_INPUT, timeout)
        self.expect(PROMPT, 10)
        return shown

    def type(self, text: str) -> None:
        self.child.send(text)

    def run(self, statement: str, timeout: float = 60) -> str:
        self.type(statement + "\r")
        return self.prompt(timeout)

    def quit(self) -> None:
        """Ctrl-D, and yes when it asks about running jobs; the shell exits 0."""
        self.child.sendcontrol("d")
        if self.child.expect(["Quit anyway?", pexpect.EOF], timeout=60) == 0:
            self.type("y\r")
            self.child.expect(pexpect.EOF, timeout=120)
        self.child.close()
        assert self.child.exitstatus == 0

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def shell_at(tmp_path):
    shells: list[Shell] = []

    def make(init: str, lines: int = 40, columns: int = 120) -> Shell:
        shell = Shell(tmp_path / f"home{len(shells)}", init, lines, columns)
        shells.append(shell)
        return shell

    yield make
    for shell in shells:
        shell.close()


def test_a_600_row_result_pages_back_to_its_first_row_searches_opens_a_row_and_follows_again(shell_at):
    shell = shell_at(SEQUENCE)
    shell.prompt(timeout=30)
    shell.type("SELECT n, word FROM seq;\r")
    # The query ends after its one batch; a result taller than the screen stays to be read, as a pager's does.
    ended = shell.expect("finished · q returns to the prompt", timeout=SPARK_TIMEOUT)
    assert re.search(r"600 rows \(last \d+ shown; PgUp pages back, / searches\)", ended), ended[-2000:]
    assert "100001" not in rows_of_frame(ended), "the newest rows are shown first"

    starts = []
    while not starts or starts[-1] > 1:  # Page Up until the first row is on the screen
        assert len(starts) < 60, f"Page Up did not reach the first row: {starts}"
        shell.type(PAGE_UP)
        shown = shell.expect(re.compile(r"rows (\d+)-(\d+) of 600 · paused at row \d+ · End follows"))
        starts.append(int(shell.match.group(1)))
    assert starts == sorted(starts, reverse=True) and len(starts) > 10, starts
    first_page = rows_of_frame(shown)
    assert re.search(r"^\s*100001\s+\w{5}\s*$", first_page, re.M), first_page  # the first row of the result

    shell.type("/100250\r")
    shown = shell.expect(re.compile(r"row (\d+) shows '100250'"))
    found = shell.match.group(1)
    assert re.search(r"^\s*100250\s+\w{5}\s*$", rows_of_frame(shown), re.M), rows_of_frame(shown)
    shell.expect(f"paused at row {found} · End follows")

    shell.type("o")  # every column of the selected row, one per line
    opened = shell.expect(f"row {found} of 600 · Esc goes back")
    assert re.search(r"^n:\s+100250\s*$", opened, re.M) and re.search(r"^word:\s+\w{5}\s*$", opened, re.M), opened
    shell.type("\x1b")
    shell.expect(f"paused at row {found} · End follows")

    shell.type(END)  # follow mode: the newest rows again
    following = shell.expect(re.compile(r"600 rows \(last \d+ shown; PgUp pages back"))
    assert "100250" not in rows_of_frame(following) or int(found) > 560
    shell.type("q")
    left = shell.prompt()
    assert "Traceback" not in left and "Query stopped" not in left, left[-2000:]
    assert "finished" in shell.run("SELECT 1 AS x;", timeout=120), "the shell goes on"
    shell.quit()


def test_a_running_query_pauses_while_rows_come_then_follows_them_and_q_stops_it(shell_at):
    shell = shell_at(GENERATED, lines=30, columns=100)
    shell.prompt(timeout=30)
    shell.type("SELECT id, name FROM gen;\r")
    shell.expect(re.compile(r"\d+ rows \(last \d+ shown; PgUp pages back"), timeout=SPARK_TIMEOUT)

    shell.type(PAGE_UP)
    shell.expect(re.compile(r"rows (\d+)-(\d+) of (\d+) · paused at row (\d+) · End follows"))
    start, total = int(shell.match.group(1)), int(shell.match.group(3))
    # the window's height follows the status line's (it may wrap as its figures change); its first row stays
    window = re.compile(rf"rows {start}-\d+ of (\d+) · paused at row {start} · End follows")
    later = total
    while later <= total:  # rows keep coming; the paused screen keeps its rows
        shell.expect(window, timeout=60)
        later = int(shell.match.group(1))

    shell.type("F")
    shell.expect(re.compile(r"(\d+) rows \(last \d+ shown; PgUp pages back"))
    followed = int(shell.match.group(1))
    assert followed >= later
    newer = followed
    while newer <= followed:  # following: the count and the rows shown move on
        shell.expect(re.compile(r"(\d+) rows \(last \d+ shown; PgUp pages back"), timeout=60)
        newer = int(shell.match.group(1))

    shell.type("q")
    stopped = shell.prompt(timeout=120)
    assert "Query stopped." in stopped and "Traceback" not in stopped, stopped[-2000:]
    assert "Empty set" in shell.run("SHOW JOBS;"), "no query outlives its view"
    shell.quit()


def test_show_jobs_at_80_columns_shows_every_field(shell_at):
    shell = shell_at(GENERATED + SINK, lines=45, columns=80)
    shell.prompt(timeout=30)
    started = shell.run("INSERT INTO sink SELECT id, name FROM gen;", timeout=SPARK_TIMEOUT)
    assert "started with id" in started, started[-2000:]
    shown = shell.run("SHOW JOBS;")
    block = [line.rstrip() for line in shown.splitlines()]
    block = block[next(i for i, line in enumerate(block) if line.startswith("row 1")):]
    block = block[: next(i for i, line in enumerate(block) if line.endswith("in set")) + 1]
    assert all(len(line) <= 80 for line in block), "\n".join(block)
    for column in JOB_COLUMNS:  # one `column: value` line each, none cut at the terminal's edge
        assert sum(line.startswith(f"{column}:") for line in block) == 1, (column, "\n".join(block))
    assert any(line.startswith("status:") and line.endswith("RUNNING") for line in block), "\n".join(block)
    assert block[-1] == "1 row in set"
    job_id = re.search(r"started with id (\w+)", started).group(1)
    assert "has been stopped" in shell.run(f"STOP JOB '{job_id}';", timeout=SPARK_TIMEOUT)
    shell.quit()
