"""The command line as users and CI run it: exit codes, streams, result modes, script mode."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.cli import ROOT, streamshell

from shell import __version__


def test_version(tmp_path):
    run = streamshell("--version", home=tmp_path)
    assert run.code == 0
    assert run.out.strip() == f"streamshell {__version__}"


def test_show_tables_on_an_empty_catalog(tmp_path):
    run = streamshell("-e", "SHOW TABLES", home=tmp_path)
    assert (run.code, run.out) == (0, "Empty set\n")


def test_select_literal_as_json_prints_exactly_one_object(tmp_path):
    run = streamshell("-e", "SELECT 1 AS x", "--result-mode", "json", home=tmp_path)
    assert run.code == 0, run.err
    assert run.out == '{"op": "+I", "row": {"x": 1}}\n'


def test_a_bounded_aggregate_as_csv_is_a_header_and_its_final_rows(tmp_path):
    import csv
    import io

    script = tmp_path / "counts.sql"
    script.write_text(
        "CREATE TEMPORARY TABLE t (k INT) WITH ('connector' = 'datagen', 'fields.k.kind' = 'sequence',"
        " 'fields.k.start' = '1', 'fields.k.end' = '10');\n"
        "SELECT CASE WHEN k % 3 = 0 THEN 'three, six, nine' ELSE CAST(k % 3 AS STRING) END AS r, COUNT(*) AS n"
        " FROM t GROUP BY CASE WHEN k % 3 = 0 THEN 'three, six, nine' ELSE CAST(k % 3 AS STRING) END;\n")
    run = streamshell("-f", str(script), "--result-mode", "csv", home=tmp_path / "home")
    assert run.code == 0, run.err
    header, *rows = list(csv.reader(io.StringIO(run.out, newline="")))
    assert header == ["r", "n"], "only the result on stdout: the CREATE's message went to stderr"
    assert sorted(rows) == [["1", "4"], ["2", "3"], ["three, six, nine", "3"]], run.out


def test_the_quickstart_that_make_setup_runs_leaves_the_users_home_as_it_found_it(tmp_path):
    import os
    import subprocess

    from shell.paths import cache_dir

    setup = re.search(r"^setup:.*?\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert setup and "\t$(QUICKSTART)\n" in setup.group(1), "make setup runs the quickstart as make quickstart does"
    user_home, temp = tmp_path / "user", tmp_path / "tmp"
    user_home.mkdir(), temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("STREAMSHELL_HOME", "MAKEFLAGS", "MAKELEVEL")}
    env.update(HOME=str(user_home), TMPDIR=str(temp), STREAMSHELL_CACHE=str(cache_dir()))  # the JVM jars as before
    run = subprocess.run(["make", "-s", "quickstart"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "|     orders |" in run.stdout, "the quickstart ran"
    rows = re.findall(r"^\| \+I \|\s+(\d+) \|\s+(customer-\d) \|\s+([\d.]+) \|$", run.stdout, re.M)
    assert rows and all(float(amount) > 250 for _, _, amount in rows), run.stdout
    assert "Received a total of" in run.stdout
    printed = re.findall(r"^big> \+I\[(\d+), (customer-\d), ([\d.]+)\]$", run.stderr, re.M)
    assert printed and all(float(a) > 400 for _, _, a in printed), "and so did its job"
    assert {p[0] for p in printed} <= {r[0] for r in rows}, "the job sees the same generated rows"
    assert not (user_home / ".streamshell").exists(), "no home of the user's with a FINISHED quickstart job in it"
    assert not [p.name for p in temp.iterdir() if p.name.startswith("tmp.")], "the quickstart's own home is removed"


def test_a_script_returns_once_its_job_runs_as_flinks_client_does_and_says_which_run_on(tmp_path):
    """`table.dml-sync` is false unless set: the script ends while its (unbounded) job runs on in its own process."""
    script = ("CREATE TEMPORARY TABLE slow (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1');\n"
              "CREATE TEMPORARY TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');\n"
              "SET 'pipeline.name' = 'runs-on';\n"
              "INSERT INTO sink SELECT id FROM slow;\n")
    run = streamshell("-e", script, home=tmp_path)
    assert run.code == 0, run.err
    (job_id,) = re.findall(r"Job 'runs-on' started with id (\w+)\.", run.out)
    assert f"streamshell: 1 job runs on after the script: {job_id} (runs-on);" in run.err, run.err
    jobs = streamshell("--result-mode", "json", "-e", "SHOW JOBS;", home=tmp_path)
    assert [json.loads(line)["row"]["status"] for line in jobs.out.splitlines()] == ["RUNNING"]
    assert streamshell("-e", f"STOP JOB '{job_id}';", home=tmp_path).code == 0


def test_tables_survive_a_restart(tmp_path):
    ddl = "CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');"
    assert streamshell("-e", ddl, home=tmp_path).code == 0
    run = streamshell("-e", "SHOW TABLES; SHOW CREATE TABLE t;", home=tmp_path)
    assert run.code == 0
    assert "|          t |" in run.out
    assert "'connector' = 'datagen'" in run.out


def test_script_stops_at_the_first_failure_with_file_line_col(tmp_path):
    script = tmp_path / "bad.sql"
    script.write_text("SHOW TABLES;\n\nSELEC 1;\nSHOW TABLES;\n")
    run = streamshell("-f", str(script), home=tmp_path)
    assert run.code == 1
    first = run.err.splitlines()[0]
    assert first.startswith(f"{script}:3:1: "), run.err
    assert "did you mean SELECT?" in run.err
    assert run.out == "", "nothing runs when the script does not parse"


def test_runtime_error_points_at_its_statement(tmp_path):
    run = streamshell("-e", "SHOW TABLES;\n  SELECT * FROM nope;", home=tmp_path)
    assert run.code == 1
    assert run.err.splitlines()[0] == "<command line>:2:17: unknown table 'nope'"


def test_bad_option_is_a_clear_error(tmp_path):
    ddl = "CREATE TABLE t (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-secnd' = '5');"
    run = streamshell("-e", ddl, home=tmp_path)
    assert run.code == 1
    assert "unsupported option 'rows-per-secnd' for connector 'datagen'" in run.err
    assert "did you mean rows-per-second?" in run.err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--result-mode", "grid", "-e", "SHOW TABLES"], "invalid choice: 'grid'"),
        (["-D", "novalue", "-e", "SHOW TABLES"], "-D expects key=value"),
        (["-f", "a.sql", "-e", "SHOW TABLES"], "use either -f FILE or -e SQL"),
        (["-f", "/no/such/file.sql"], "cannot read /no/such/file.sql"),
        (["-D", "sql-client.execution.result-mod=json", "-e", "SHOW TABLES"], "unknown setting"),
    ],
)
def test_bad_usage_exits_2(tmp_path, args, message):
    run = streamshell(*args, home=tmp_path)
    assert run.code == 2, run
    assert message in run.err


def test_stdin_that_is_not_a_terminal_is_a_script(tmp_path):
    run = streamshell("--result-mode", "json", home=tmp_path, stdin="SET 'sql-client.display.max-column-width' = '12';\nSELECT 'a' AS s;\n")
    assert run.code == 0, run.err
    assert [json.loads(line) for line in run.out.splitlines()] == [{"op": "+I", "row": {"s": "a"}}]
    assert "[INFO] Session property has been set." in run.err


def test_a_broker_that_is_down_is_a_clear_error(tmp_path):
    import socket

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = (
        f"CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = 'json',"
        f" 'properties.bootstrap.servers' = '127.0.0.1:{port}');\nSELECT * FROM t;"
    )
    run = streamshell("-e", script, home=tmp_path)
    assert run.code == 1
    assert run.err.splitlines()[0].startswith(f"<command line>:2:1: kafka: cannot reach 127.0.0.1:{port}")
    assert "is the broker running?" in run.err


@pytest.mark.parametrize(
    "connector, options, port_option",
    [
        ("kafka", "'topic' = 'kd', 'format' = 'json'", "'properties.bootstrap.servers' = '127.0.0.1:{port}'"),
        ("upsert-kafka", "'topic' = 'kd', 'key.format' = 'json', 'value.format' = 'json'",
         "'properties.bootstrap.servers' = '127.0.0.1:{port}'"),
        ("pulsar", "'topic' = 'kd', 'format' = 'json'", "'service-url' = 'pulsar://127.0.0.1:{port}'"),
        ("upsert-pulsar", "'topic' = 'kd', 'key.format' = 'json', 'value.format' = 'json'",
         "'service-url' = 'pulsar://127.0.0.1:{port}'"),
    ],
)
def test_an_insert_into_a_sink_whose_broker_is_down_fails_before_its_job_starts(tmp_path, connector, options, port_option):
    import socket

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    key = " PRIMARY KEY (a) NOT ENFORCED" if connector.startswith("upsert") else ""
    system = connector.removeprefix("upsert-")
    script = (
        f"CREATE TEMPORARY TABLE kd (a INT{',' + key if key else ''}) WITH ('connector' = '{connector}', {options},"
        f" {port_option.format(port=port)});\n"
        "CREATE TEMPORARY TABLE g5 (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '1');\n"
        "INSERT INTO kd SELECT a FROM g5;"
    )
    run = streamshell("-e", script, home=tmp_path)
    assert run.code == 1, run
    assert run.err.splitlines()[0].startswith(f"<command line>:3:1: {system}: cannot reach 127.0.0.1:{port}"), run.err
    assert "is the broker running?" in run.err
    assert "started" not in run.err + run.out, "no job was started"
    assert streamshell("-e", "SHOW JOBS", home=tmp_path).out == "Empty set\n", "and none is left behind"


UPDATING_COUNT = (
    "CREATE TEMPORARY TABLE t (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '5',"
    " 'fields.k.min' = '1', 'fields.k.max' = '2');\n"
    "SELECT k, COUNT(*) AS n FROM t GROUP BY k;\n"
)


def changelog_csv_until_updated(args: list[str], home) -> tuple[list[list[str]], str, int]:
    """Run an unbounded updating query through the CLI; read its CSV until a key was updated (-U then +U), then
    interrupt it as Ctrl-C does. Returns the rows read, stderr and the exit code."""
    import csv
    import os
    import signal
    import subprocess
    import sys
    import threading
    from pathlib import Path

    env = {**os.environ, "STREAMSHELL_HOME": str(home)}
    err_path = Path(str(home) + ".stderr")  # a file, not a pipe: nothing the shell says can fill a pipe and block it
    rows: list[list[str]] = []
    with open(err_path, "w") as err_file:
        proc = subprocess.Popen([sys.executable, "-m", "shell", *args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=err_file, text=True)  # fmt: skip
    watchdog = threading.Timer(300, proc.kill)  # the test fails on what was read rather than hanging
    watchdog.start()
    try:
        lines = iter(proc.stdout.readline, "")  # line by line, as the printer flushes each micro-batch
        for row in csv.reader(lines):
            rows.append(row)
            if rows[0] != ["op", "k", "n"]:
                break  # not the CSV changelog: no point waiting for an update
            ops = [r[0] for r in rows[1:]]
            if "-U" in ops and "+U" in ops[ops.index("-U"):]:
                break
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()  # through the same reader: lines it already buffered are not lost
        proc.wait(timeout=120)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    rows += list(csv.reader(rest.splitlines()))
    return rows, err_path.read_text(), proc.returncode


def check_changelog_csv(rows: list[list[str]]) -> None:
    header, *changes = rows
    assert header == ["op", "k", "n"], rows[:3]
    assert changes and {op for op, _, _ in changes} <= {"+I", "-U", "+U"}, changes
    counts: dict[str, int] = {}
    for op, k, n in changes:  # the changelog applied: each -U retracts the key's last count, each +U raises it
        if op == "-U":
            assert counts.pop(k) == int(n), (op, k, n)
        else:
            assert k not in counts and int(n) > 0, (op, k, n)  # a first count (+I) or a retracted one's new (+U)
            counts[k] = int(n)
    assert set(counts) <= {"1", "2"}


def test_an_unbounded_query_as_csv_is_its_changelog_with_an_op_column(tmp_path):
    rows, err, code = changelog_csv_until_updated(["--result-mode", "csv", "-e", UPDATING_COUNT], tmp_path)
    check_changelog_csv(rows)
    assert "[INFO] Table has been created." in err, "messages on stderr, only CSV on stdout"
    assert code == 130, err


def test_the_csv_result_mode_set_in_a_script(tmp_path):
    script = tmp_path / "counts.sql"
    script.write_text("SET 'sql-client.execution.result-mode' = 'csv';\n" + UPDATING_COUNT)
    rows, err, code = changelog_csv_until_updated(["-f", str(script)], tmp_path / "home")
    check_changelog_csv(rows)
    assert "[INFO] Session property has been set." in err
    assert code == 130, err
