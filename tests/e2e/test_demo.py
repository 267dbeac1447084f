"""Demo mode as CI runs it (no terminal: nothing waits, a failed @expect exits 1) and as a presenter does (a pty)."""

from __future__ import annotations

import os
import sys

import pexpect

from tests.e2e.cli import ROOT, streamshell

WALKTHROUGH = ROOT / "examples" / "walkthrough.sql"


def demo(tmp_path, text: str, name: str = "demo.sql"):
    path = tmp_path / name
    path.write_text(text)
    return path, streamshell("--demo", str(path), "--catalog", str(tmp_path / "home"), home=tmp_path / "home")


def test_walkthrough_passes_in_ci(tmp_path):
    run = streamshell("--demo", str(WALKTHROUGH), "--catalog", str(tmp_path / "home"), home=tmp_path / "home", timeout=900)
    assert run.code == 0, run.out[-3000:] + run.err[-3000:]
    assert "Demo finished" in run.out
    assert run.out.count("✓ @expect") >= 10
    assert "streamshell> SELECT order_id, customer, amount FROM orders WHERE amount > 100;" in run.out
    assert "unknown table 'order'" in run.err, "the expected error is still shown"


def test_a_failed_expectation_stops_ci_with_its_position(tmp_path):
    path, run = demo(tmp_path, "SHOW TABLES;\n-- @expect rows>=1\nSHOW VIEWS;\n")
    assert run.code == 1
    assert f"{path}:2: @expect rows>=1: got 0" in run.err
    assert "SHOW VIEWS" not in run.out, "CI stops at the first failure"


def test_an_unexpected_error_fails_and_an_expected_one_does_not(tmp_path):
    path, run = demo(tmp_path, "SHOW TABLES;\n  DESCRIBE nope;\n")
    assert run.code == 1
    assert f"{path}:2:12: unknown table 'nope'" in run.err
    path, run = demo(tmp_path, "DESCRIBE nope;\n-- @expect error 'unknown table'\n-- @say still here\n", "ok.sql")
    assert run.code == 0, run.err
    assert "✓ @expect error 'unknown table'" in run.out and "» still here" in run.out


def test_output_and_row_expectations_without_spark(tmp_path):
    text = (
        "-- @say Tables first\n"
        "CREATE TEMPORARY TABLE t (id BIGINT) WITH ('connector' = 'datagen');\n"
        "-- @expect output contains 'created'\n"
        "-- @pause\n"
        "SHOW TABLES;\n"
        "-- @expect rows=1\n"
        "-- @expect row contains 't'\n"
        "-- @expect no row contains 'nope'\n"
        "-- @expect ok\n"
    )
    _, run = demo(tmp_path, text)
    assert run.code == 0, run.err
    assert run.out.count("✓ @expect") == 5 and "Press Enter" not in run.out


def test_bad_files_and_bad_usage(tmp_path):
    path, run = demo(tmp_path, "SHOW TABLES;\n-- @expect rows maybe\n")
    assert run.code == 1 and run.err.startswith(f"{path}:2:1: bad annotation @expect")
    path, run = demo(tmp_path, "SHOW TABLES;\nSELEC 1;\n")
    assert run.code == 1 and run.err.startswith(f"{path}:2:1: ") and run.out == ""
    missing = streamshell("--demo", str(tmp_path / "missing.sql"), home=tmp_path / "home")
    assert missing.code == 2 and "cannot read" in missing.err
    both = streamshell("--demo", str(WALKTHROUGH), "-e", "SHOW TABLES", home=tmp_path / "home")
    assert both.code == 2 and "--demo" in both.err


def test_presenting_on_a_terminal_waits_for_enter(tmp_path):
    path = tmp_path / "talk.sql"
    path.write_text("-- @say Hello, room\nSHOW TABLES;\n-- @pause\nSHOW VIEWS;\nSHOW JOBS;\n")
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm-256color"}
    child = pexpect.spawn(
        sys.executable, ["-m", "shell", "--demo", str(path), "--catalog", str(tmp_path / "home")],
        cwd=str(ROOT), env=env, encoding="utf-8", dimensions=(40, 140), timeout=60,
    )
    try:
        child.expect("Hello, room")
        child.expect("Enter runs it")
        assert "Empty set" not in child.before, "nothing runs before Enter"
        child.send("\r")
        child.expect("Empty set")
        child.expect("Press Enter to continue")
        child.send("\r")
        child.expect("Enter runs it")
        child.send("\r")
        child.expect("Empty set")
        child.expect("Enter runs it")
        child.send("q\r")
        child.expect("Demo stopped")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_output_piped_into_head_ends_quietly(tmp_path):
    import subprocess

    path = tmp_path / "long.sql"
    path.write_text("".join(f"-- @say line {i} of a long narration, long enough to fill a pipe\n" for i in range(20000)))
    proc = subprocess.run(
        f"set -o pipefail; {sys.executable} -m shell --demo {path} --catalog {tmp_path / 'home'} < /dev/null | head -2",
        shell=True, cwd=ROOT, capture_output=True, text=True, timeout=120, executable="/bin/bash",
    )
    assert proc.stdout.splitlines()[1] == "» line 0 of a long narration, long enough to fill a pipe"
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr and "Exception" not in proc.stderr
    assert proc.returncode in (0, 141), proc.stderr  # 141: stopped by the closed pipe, as `yes | head` is
