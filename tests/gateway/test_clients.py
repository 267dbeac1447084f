"""Real PostgreSQL clients against `streamshell gateway`: psql, psycopg and the PostgreSQL JDBC driver.

Each test talks to the gateway as a tool does and checks what the tool would show: tables listed and described,
a bounded SELECT's rows with their types, a positioned error, an INSERT job that the CLI lists and stops, a live
changelog read and cancelled (and its Spark query gone: the gateway's metrics count them), two clients at once
with their own settings, a wrong password refused and TLS when asked for.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest

from tests.gateway.gateways import ROOT, non_loopback_address, start_gateway

pytestmark = pytest.mark.e2e

CLICKS = ("CREATE TABLE IF NOT EXISTS clicks (user_name STRING, url STRING, hits BIGINT) WITH ('connector' = 'datagen', "
          "'number-of-rows' = '20', 'fields.hits.kind' = 'sequence', 'fields.hits.start' = '1', 'fields.hits.end' = '20', "
          "'fields.user_name.length' = '5')")  # fmt: skip
LIVE = ("CREATE TABLE IF NOT EXISTS live (n INT) WITH ('connector' = 'datagen', 'rows-per-second' = '5', "
        "'fields.n.min' = '1', 'fields.n.max' = '9')")  # fmt: skip


def psql(gw, *commands: str, env: dict[str, str] | None = None, dsn: str | None = None) -> subprocess.CompletedProcess:
    args = ["psql", dsn or gw.dsn(), "-X", "-v", "ON_ERROR_STOP=0"]
    for command in commands:
        args += ["-c", command]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def tables(gateway):
    with psycopg.connect(gateway.dsn(), autocommit=True) as conn:
        conn.execute(CLICKS)
        conn.execute(LIVE)
    return gateway


def test_psql_shows_creates_lists_describes_and_selects(tables):
    gw = tables
    run = psql(gw, "CREATE TABLE psql_made (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen')",
               "SHOW TABLES", "\\dt", "\\d psql_made", "SELECT COUNT(*) AS n, MAX(hits) AS top FROM clicks")
    assert run.returncode == 0, run.stderr
    assert "NOTICE:  Table has been created." in run.stderr and "CREATE TABLE" in run.stdout
    assert " psql_made" in run.stdout.split("List of relations")[0]  # SHOW TABLES
    relations = run.stdout.split("List of relations")[1]
    assert "default_database | psql_made | table" in relations and "default_database | clicks    | table" in relations
    assert 'Table "default_database.psql_made"' in run.stdout
    assert "id     | integer |           | not null |" in run.stdout and "name   | text    |" in run.stdout
    assert " n  | top \n----+-----\n 20 |  20\n(1 row)" in run.stdout


def test_a_query_mixing_postgresql_session_commands_and_statements_runs_each_of_them(tables):
    """JDBC and psql users send `SET ...; <statement>` and `BEGIN; ...; COMMIT` in one query: the session command
    is answered and every statement after it still runs (it was once taken as the SET's value)."""
    run = psql(tables, "SET extra_float_digits = 3; CREATE TABLE mixed_made (x INT) WITH ('connector' = 'datagen')",
               "BEGIN; SHOW TABLES; COMMIT", "SHOW extra_float_digits",
               "SHOW TABLES; SET application_name = 'mixed'", "SHOW application_name")
    assert run.returncode == 0 and "ERROR" not in run.stderr, run.stderr
    assert "NOTICE:  Table has been created." in run.stderr
    shown = run.stdout.split("COMMIT")[0]
    assert " mixed_made" in shown  # created by the first query, listed inside the second's transaction
    assert "\n 3\n(1 row)" in run.stdout and "\n mixed\n(1 row)" in run.stdout
    with_error = psql(tables, "SET extra_float_digits = 2; SELECT nope\nFROM clicks")
    assert "ERROR:  unknown column 'nope'" in with_error.stderr
    assert "LINE 1: SET extra_float_digits = 2; SELECT nope" in with_error.stderr  # its place in the whole query


def test_psql_shows_a_bad_statements_error_with_its_caret_and_hint(tables):
    run = psql(tables, "SELECT user_name\nFROM clicks WHERE nope = 1")
    assert "ERROR:  unknown column 'nope'" in run.stderr
    assert "LINE 2: FROM clicks WHERE nope = 1\n                          ^" in run.stderr
    assert "HINT:  DESCRIBE clicks lists its columns" in run.stderr


def test_psycopg_runs_a_bounded_select_with_parameters_and_typed_columns(tables):
    with psycopg.connect(tables.dsn()) as conn:  # psycopg's default: statements inside BEGIN ... COMMIT
        rows = conn.execute("SELECT hits, user_name, hits * 1.5 AS half, hits > %s AS big FROM clicks WHERE hits <= %s",
                            (2, 4)).fetchall()
        assert sorted(r[0] for r in rows) == [1, 2, 3, 4]
        assert all(isinstance(r[1], str) and len(r[1]) == 5 for r in rows)
        assert {r[0]: (float(r[2]), r[3]) for r in rows} == {1: (1.5, False), 2: (3.0, False), 3: (4.5, True), 4: (6.0, True)}
        columns = conn.execute("SELECT hits, user_name FROM clicks WHERE hits = 1").description
        assert [(c.name, c.type_code) for c in columns] == [("hits", 20), ("user_name", 25)]  # int8, text


def test_psycopg_sends_dates_timestamps_and_bytes_as_binary_parameters_and_they_are_read(tables):
    """psycopg sends a date, a datetime and bytes in binary by default (not text): each arrives as its value."""
    import datetime

    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        row = conn.execute("SELECT %s AS d, %s AS t, %s AS b",
                           (datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5, 678000),
                            b"\x00\xffz")).fetchone()  # fmt: skip
    assert str(row[0]) == "2024-01-02" and str(row[1]).startswith("2024-01-02 03:04:05.678")
    assert bytes(row[2]) == b"\x00\xffz"


def test_psycopg_gets_the_error_state_position_and_hint_and_the_connection_goes_on(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UndefinedColumn) as caught:
            conn.execute("SELECT nope FROM clicks")
        assert caught.value.diag.statement_position == "8"
        assert caught.value.diag.message_hint == "DESCRIBE clicks lists its columns"
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("INSERT OVERWRITE clicks SELECT * FROM clicks")
        assert conn.execute("SHOW TABLES").fetchall()  # the same connection answers on


def test_a_result_cut_by_the_rows_per_batch_limit_is_an_error_not_a_shorter_result(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        conn.execute("SET 'sql-client.display.max-rows-per-batch' = '5'")
        with pytest.raises(psycopg.errors.ProgramLimitExceeded) as caught:
            conn.execute("SELECT hits FROM clicks").fetchall()
        assert "the result is cut: showing 5 of 20 rows" in caught.value.diag.message_primary
        assert "SET 'sql-client.display.max-rows-per-batch' higher" in caught.value.diag.message_hint
        conn.execute("RESET 'sql-client.display.max-rows-per-batch'")
        assert len(conn.execute("SELECT hits FROM clicks").fetchall()) == 20


def test_a_failed_statement_fails_the_transaction_until_rollback_as_in_postgresql(tables):
    with psycopg.connect(tables.dsn()) as conn:
        with pytest.raises(psycopg.errors.SyntaxError):
            conn.execute("SELEC 1")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SHOW TABLES")
        conn.rollback()
        assert ("clicks",) in conn.execute("SHOW TABLES").fetchall()


def test_an_insert_job_started_through_the_gateway_is_the_clis_job_to_list_stop_and_resume(tables, tmp_path):
    gw = tables
    notices = []
    with psycopg.connect(gw.dsn(), autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute(f"CREATE TABLE IF NOT EXISTS kept (n INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'kept'}', 'format' = 'json')")
        cursor = conn.execute("INSERT INTO kept SELECT n FROM live")
        assert cursor.statusmessage == "INSERT 0 0"
        started = [n for n in notices if "started with id" in n]
        assert started, notices
        job_id = started[0].rsplit(" ", 1)[1].rstrip(".")
        cli = subprocess.run([sys.executable, "-m", "shell", "--catalog", str(gw.home), "--result-mode", "json", "-e", "SHOW JOBS"],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
        rows = [json.loads(line)["row"] for line in cli.stdout.splitlines() if line.startswith("{")]
        assert job_id in [r["job id"] for r in rows], cli.stderr[-2000:]
        assert job_id in [r[0] for r in conn.execute("SHOW JOBS").fetchall()]
        stop = subprocess.run([sys.executable, "-m", "shell", "--catalog", str(gw.home), "-e",
                               f"STOP JOB '{job_id}' WITH SAVEPOINT"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert stop.returncode == 0 and "stopped with a savepoint" in stop.stderr + stop.stdout, stop.stderr[-2000:]
        assert {r[0]: r[2] for r in conn.execute("SHOW JOBS").fetchall()}[job_id] == "STOPPED"
        notices.clear()
        resumed = conn.execute(f"RESUME JOB '{job_id}'")  # the CLI's savepoint, continued from the gateway
        assert resumed.statusmessage == "RESUME JOB" and any(job_id in n for n in notices), notices
        conn.execute(f"STOP JOB '{job_id}'")
        cli = subprocess.run([sys.executable, "-m", "shell", "--catalog", str(gw.home), "--result-mode", "json", "-e", "SHOW JOBS"],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert cli.returncode == 0, cli.stderr[-2000:]
        rows = {json.loads(line)["row"]["job id"]: json.loads(line)["row"]["status"] for line in cli.stdout.splitlines() if line.startswith("{")}
        # stopped from the gateway, as the CLI sees it: CANCELED, or no more listed once its folder is gone
        assert rows.get(job_id) in (None, "CANCELED"), rows


def test_a_live_changelog_is_read_with_copy_and_stops_on_cancel_without_leaving_its_spark_query(tables):
    gw = tables
    with psycopg.connect(gw.dsn(), autocommit=True) as conn:
        changes = []
        with pytest.raises(psycopg.errors.QueryCanceled):
            with conn.cursor().copy("COPY (SELECT n, n * 10 AS tens FROM live) TO STDOUT") as copy:
                for row in copy.rows():
                    changes.append(row)
                    if len(changes) == 3:
                        conn.cancel()  # a cancel request on its own connection, as psql's Ctrl-C
        assert len(changes) >= 3
        assert all(op == "+I" and int(tens) == 10 * int(n) for op, n, tens in changes)
        assert gw.wait_for_metric("streamshell_gateway_spark_queries", 0)["streamshell_gateway_spark_queries"] == 0
        assert conn.execute("SELECT 1 AS one").fetchall() == [(1,)]


def test_psql_reads_a_live_changelog_with_copy_until_its_ctrl_c(tables):
    gw = tables
    before = gw.metrics()
    psql_run = subprocess.Popen(["psql", gw.dsn(), "-X", "-c", "COPY (SELECT n FROM live) TO STDOUT"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while gw.metrics()["streamshell_gateway_rows_sent_total"] < before["streamshell_gateway_rows_sent_total"] + 3:
        assert time.monotonic() < deadline and psql_run.poll() is None, psql_run.stderr.read()
        time.sleep(0.2)
    psql_run.send_signal(signal.SIGINT)  # Ctrl-C: psql sends a cancel request
    out, err = psql_run.communicate(timeout=120)
    assert "ERROR:  canceling statement due to user request" in err
    assert out.startswith("+I\t") and len(out.splitlines()) >= 3  # psql wrote the changes it had
    assert gw.metrics()["streamshell_gateway_cancel_requests_total"] == before["streamshell_gateway_cancel_requests_total"] + 1
    assert gw.wait_for_metric("streamshell_gateway_spark_queries", 0)["streamshell_gateway_spark_queries"] == 0


def test_psql_reads_a_live_query_a_few_changes_at_a_time_through_a_cursor(tables):
    gw = tables
    run = psql(gw, "BEGIN", "DECLARE c CURSOR FOR SELECT n, n * 10 AS tens FROM live", "FETCH 3 c", "FETCH 2 FROM c",
               "CLOSE c", "COMMIT", "FETCH 1 c")
    blocks = run.stdout.split("DECLARE CURSOR\n")[1].split("\n\n")
    assert blocks[0].startswith(" op | n | tens") and blocks[0].endswith("(3 rows)")
    assert blocks[1].startswith(" op | n | tens") and blocks[1].endswith("(2 rows)")
    assert "CLOSE CURSOR\nCOMMIT" in run.stdout and 'ERROR:  cursor "c" does not exist' in run.stderr
    assert gw.wait_for_metric("streamshell_gateway_spark_queries", 0)["streamshell_gateway_spark_queries"] == 0


def test_a_cancelled_fetch_stops_its_cursors_query(tables):
    gw = tables
    with psycopg.connect(gw.dsn(), autocommit=True) as conn:
        conn.execute("DECLARE live_changes CURSOR FOR SELECT n FROM live")
        assert [op for op, _ in conn.execute("FETCH 2 live_changes").fetchall()] == ["+I", "+I"]
        timer = threading.Timer(3, conn.cancel)  # FETCH ALL of a live query waits for changes until cancelled
        timer.start()
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("FETCH ALL live_changes")
        timer.join()
        assert gw.wait_for_metric("streamshell_gateway_spark_queries", 0)["streamshell_gateway_spark_queries"] == 0
        conn.execute("CLOSE live_changes")


def test_an_updating_query_streams_retractions_to_a_cursor_read_row_by_row(tables):
    gw = tables
    with psycopg.connect(gw.dsn(), autocommit=True) as conn:
        seen = []
        for op, n, count in conn.cursor().stream("SELECT n, COUNT(*) AS c FROM live GROUP BY n"):
            seen.append((op, n, count))
            if any(o == "+U" for o, _, _ in seen) and len(seen) >= 5:
                break
        assert {op for op, _, _ in seen} >= {"+I", "-U", "+U"}
    assert gw.wait_for_metric("streamshell_gateway_spark_queries", 0)["streamshell_gateway_spark_queries"] == 0


def test_two_clients_at_once_each_with_its_own_settings_while_one_streams(tables):
    """One client reads a live changelog while the other runs statements: the other's are answered while the
    stream goes on (its changes keep coming after them), and each keeps its own settings."""
    gw = tables
    streaming, other = psycopg.connect(gw.dsn(user="streamer"), autocommit=True), psycopg.connect(gw.dsn(user="other"), autocommit=True)
    try:
        streaming.execute("SET 'pipeline.name' = 'pipeline-streamer'")
        changes: list[tuple] = []
        first, enough, failed = threading.Event(), threading.Event(), []
        answered_at: dict[str, int] = {}

        def stream() -> None:
            try:
                with streaming.cursor().copy("COPY (SELECT n FROM live) TO STDOUT") as copy:
                    for row in copy.rows():
                        changes.append(row)
                        first.set()
                        if "other" in answered_at and len(changes) >= answered_at["other"] + 3:
                            enough.set()
                            streaming.cancel()
            except psycopg.errors.QueryCanceled:
                pass
            except Exception as exc:  # noqa: BLE001 - reported by the test's thread
                failed.append(exc)
            finally:
                first.set(), enough.set()

        reader = threading.Thread(target=stream)
        reader.start()
        assert first.wait(300) and not failed, failed
        other.execute("SET 'pipeline.name' = 'pipeline-other'")
        count = other.execute("SELECT COUNT(*) FROM clicks").fetchone()[0]  # a bounded query beside the live one
        settings = dict(other.execute("SET").fetchall())
        answered_at["other"] = len(changes)
        assert (count, settings.get("pipeline.name")) == (20, "pipeline-other")
        assert enough.wait(300)
        reader.join(300)
        assert not failed, failed
        assert len(changes) >= answered_at["other"] + 3  # the stream went on after the other client's statements
        assert all(op == "+I" for op, _ in changes)
        assert dict(streaming.execute("SET").fetchall()).get("pipeline.name") == "pipeline-streamer"
    finally:
        streaming.close(), other.close()
    with psycopg.connect(gw.dsn(), autocommit=True) as conn:
        assert "pipeline.name" not in dict(conn.execute("SET").fetchall())


def test_a_table_another_client_creates_or_drops_is_seen_by_a_connection_already_open(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as watcher, psycopg.connect(tables.dsn(), autocommit=True) as maker:
        assert ("shared_later",) not in watcher.execute("SHOW TABLES").fetchall()
        maker.execute("CREATE TEMPORARY TABLE mine_only (id INT) WITH ('connector' = 'datagen')")
        maker.execute("CREATE TABLE shared_later (id INT) WITH ('connector' = 'datagen', 'number-of-rows' = '2')")
        shown = watcher.execute("SHOW TABLES").fetchall()
        assert ("shared_later",) in shown and ("mine_only",) not in shown
        listed = watcher.execute("SELECT table_name FROM information_schema.tables WHERE table_name = 'shared_later'")
        assert listed.fetchall() == [("shared_later",)]
        assert len(watcher.execute("SELECT id FROM shared_later").fetchall()) == 2
        maker.execute("DROP TABLE shared_later")
        assert ("shared_later",) not in watcher.execute("SHOW TABLES").fetchall()
        assert ("mine_only",) in maker.execute("SHOW TABLES").fetchall()  # its own temporary table stays


def test_the_database_name_of_a_connection_selects_a_database_or_nothing(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        conn.execute("CREATE DATABASE IF NOT EXISTS analytics")
    with psycopg.connect(tables.dsn(dbname="analytics"), autocommit=True) as conn:
        assert conn.execute("SHOW CURRENT DATABASE").fetchall() == [("analytics",)]
        assert conn.execute("SELECT current_schema()").fetchall() == [("analytics",)]
    with psycopg.connect(tables.dsn(dbname="anything_else"), autocommit=True) as conn:
        assert conn.execute("SHOW CURRENT DATABASE").fetchall() == [("default_database",)]
        conn.execute('SET search_path = "$user", analytics')  # DBeaver's choice of a schema: USE, as search_path
        assert conn.execute("SHOW CURRENT DATABASE").fetchall() == [("analytics",)]
        conn.execute("USE default_database")
        assert conn.execute("SHOW search_path").fetchall() == [("default_database",)]


def jdbc_jar() -> Path | None:
    cache = Path(os.environ.get("STREAMSHELL_CACHE") or Path.home() / ".cache" / "streamshell") / "jvm" / "spark"
    found = sorted(cache.glob("postgresql-*.jar"))
    return found[-1] if found else None


def test_the_postgresql_jdbc_driver_lists_creates_queries_streams_and_reads_metadata(tables, tmp_path):
    gw = tables
    jar = jdbc_jar()
    assert jar is not None, "the PostgreSQL JDBC driver comes with `scripts/jvm-deps spark` (make setup)"
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(classes), "-cp", str(jar), str(Path(__file__).parent / "JdbcClient.java")],
                   check=True, capture_output=True, timeout=300)
    run = subprocess.run(
        ["java", "-cp", f"{classes}:{jar}", "JdbcClient", f"jdbc:postgresql://{gw.host}:{gw.port}/streamshell",
         "sql:CREATE TABLE IF NOT EXISTS jdbc_made (id INT, note STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3')",
         "show", "query:SELECT hits, user_name FROM clicks WHERE hits <= 2", "param:SELECT ? + 1 AS answer",
         "error:SELECT nope FROM clicks", "stream:SELECT n FROM live", f"idle:{gw.metrics_url}", "meta"],
        capture_output=True, text=True, timeout=600)
    lines = run.stdout.splitlines()
    assert lines[0] == "ok 0 | Table has been created.", run.stdout + run.stderr[-3000:]
    assert "jdbc_made" in lines[1].split(" ")[1].split(",") and "clicks" in lines[1]
    rows = [line for line in lines if line.startswith("row hits=")]
    assert sorted(r.split(",")[0] for r in rows) == ["row hits=1", "row hits=2"]
    assert "row answer=43" in lines
    assert "error 42703 8 ERROR: unknown column 'nope'" in lines
    assert [line.split()[:2] for line in lines if line.startswith("change ")] == [["change", "+I"]] * 3
    assert "stream-closed" in lines and "idle" in lines
    assert "meta-table default_database.jdbc_made TABLE" in lines
    assert "meta-column jdbc_made.id int4" in lines and "meta-column clicks.hits int8" in lines

    # prepareThreshold=-1: statements prepared on the server and described first, results asked for in binary
    typed = ("query:SELECT 1 AS one, CAST(12345.678 AS DECIMAL(10, 3)) AS d, TRUE AS b, 1.5e0 AS f, 'x' AS s, "
             "CAST('2024-05-01 10:00:00.5' AS TIMESTAMP(3)) AS ts, CAST('2024-05-01' AS DATE) AS dt")
    run = subprocess.run(["java", "-cp", f"{classes}:{jar}", "JdbcClient",
                          f"jdbc:postgresql://{gw.host}:{gw.port}/streamshell?prepareThreshold=-1", typed,
                          "param:SELECT ? * 2 AS twice"], capture_output=True, text=True, timeout=600)
    assert run.stdout.splitlines() == [
        "row one=1, d=12345.678, b=true, f=1.5, s=x, ts=2024-05-01 10:00:00.5, dt=2024-05-01", "row twice=84"], run.stderr[-3000:]


def test_the_gateway_has_its_own_prometheus_endpoint(tables):
    gw = tables
    with psycopg.connect(gw.dsn(), autocommit=True):
        seen = gw.metrics()
        assert seen["streamshell_gateway_connections"] >= 1
    assert seen["streamshell_gateway_queries_total"] >= 1
    assert "streamshell_gateway_rows_sent_total" in seen and "streamshell_gateway_spark_queries" in seen
    health = urllib.request.urlopen(gw.metrics_url.replace("/metrics", "/health"), timeout=10)
    state = json.loads(health.read())
    assert health.status == 200 and state["status"] == "ok" and state["spark"] in ("starting", "started")
    assert isinstance(state["connections"], int)


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """A gateway that needs a password: bound to this machine's non-loopback address when it has one (where a
    password is required), else on loopback with --require-password; with a certificate for TLS."""
    home = tmp_path_factory.mktemp("guarded-home")
    password = home / "password"
    password.write_text("correct horse\n")
    key, cert = home / "key.pem", home / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=localhost"], check=True, capture_output=True, timeout=120)
    address = non_loopback_address()
    args = ["--password-file", str(password), "--tls-cert", str(cert), "--tls-key", str(key), "--metrics-port", "-1"]
    gw = start_gateway(home, *args, *([] if address else ["--require-password"]), host=address or "127.0.0.1")
    yield gw
    gw.stop()


def test_a_gateway_beyond_loopback_will_not_start_without_a_password(tmp_path):
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    with pytest.raises(RuntimeError, match="needs a password"):
        start_gateway(tmp_path / "home", host=address)


def test_a_wrong_password_is_refused_and_the_right_one_is_taken_over_tls(guarded):
    with pytest.raises(psycopg.OperationalError, match='password authentication failed for user "alice"'):
        psycopg.connect(guarded.dsn(user="alice", password="wrong", sslmode="disable"))
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(guarded.dsn(user="alice", sslmode="disable"))  # none given
    with psycopg.connect(guarded.dsn(user="alice", password="'correct horse'", sslmode="require"), autocommit=True) as conn:
        assert conn.pgconn.ssl_in_use
        assert conn.execute("SHOW TABLES").fetchall() == []
    run = psql(guarded, "SHOW TABLES", dsn=guarded.dsn(user="bob", sslmode="require"), env={"PGPASSWORD": "correct horse"})
    assert run.returncode == 0 and "table name" in run.stdout, run.stderr


def test_psql_is_installed():
    assert shutil.which("psql"), "Debian's postgresql-client: scripts/system-deps installs it"


def test_secrets_are_redacted_on_the_wire_as_in_the_shell(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS secretive (id INT) WITH ('connector' = 'jdbc', 'url' = "
                     "'jdbc:postgresql://127.0.0.1:1/db', 'table-name' = 't', 'username' = 'u', 'password' = 'hunter2')")
        (ddl,), = conn.execute("SHOW CREATE TABLE secretive").fetchall()
        assert "'password' = '****'" in ddl and "hunter2" not in ddl
        with pytest.raises(psycopg.Error) as caught:
            conn.execute("CREATE TABLE leaky (id INT) WITH ('connector' = 'kafka', "
                         "'properties.bootstrap.servers' = 'sasl_ssl://user:hunter2@broker:9093')")
        assert "hunter2" not in str(caught.value) and "hunter2" not in (caught.value.diag.message_hint or "")


def test_a_float_parameter_comes_back_a_float_and_a_negative_one_keeps_its_sign(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        cursor = conn.execute("SELECT %s AS x", (1.5,))
        assert cursor.fetchall() == [(1.5,)] and cursor.description[0].type_code == 701  # float8, not numeric
        assert isinstance(conn.execute("SELECT %s * 2 AS y", (0.1,)).fetchone()[0], float)
        assert conn.execute("SELECT 1 - %s AS z", (-7,)).fetchall() == [(8,)]  # `1--7` would be a comment


def test_a_parameter_that_is_not_a_number_where_one_is_needed_is_22p02_naming_it(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InvalidTextRepresentation) as caught:
            conn.execute("SELECT hits + %s AS more FROM clicks", ("abc",))
        message = caught.value.diag.message_primary
        assert message.startswith("parameter $1: invalid input syntax for type") and '"abc"' in message
        assert "\n" not in message and "$1" in caught.value.diag.message_hint
        assert conn.execute("SELECT %s + 1 AS fine", (41,)).fetchall() == [(42,)]


def test_a_runtime_error_has_no_position_so_psql_draws_no_caret(tables):
    run = psql(tables, "SELECT hits / 0 AS x FROM clicks", "SELECT nope FROM clicks")
    assert "ERROR:  Division by zero" in run.stderr
    by_zero = run.stderr.split("ERROR:  unknown column")[0]
    assert "LINE 1" not in by_zero and "^" not in by_zero  # nothing to point at
    assert "LINE 1: SELECT nope FROM clicks\n               ^" in run.stderr  # a positioned error keeps its caret
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero) as caught:
            conn.execute("SELECT hits / 0 AS x FROM clicks")
        assert caught.value.diag.statement_position is None
        with pytest.raises(psycopg.errors.InvalidTextRepresentation) as caught:
            conn.execute("SELECT CAST(user_name AS INT) AS x FROM clicks")
        assert caught.value.diag.statement_position is None


def test_psql_describes_decimal_and_varchar_columns_with_their_precision(tables):
    run = psql(tables, "CREATE TABLE IF NOT EXISTS priced (id INT, price DECIMAL(10, 2), code VARCHAR(8)) "
                       "WITH ('connector' = 'datagen')", "\\d priced")
    assert run.returncode == 0, run.stderr
    assert "price  | numeric(10,2)" in run.stdout and "code   | character varying(8)" in run.stdout, run.stdout
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        rows = conn.execute("SELECT column_name, numeric_precision, numeric_scale FROM information_schema.columns "
                            "WHERE table_name = 'priced' AND column_name = 'price'").fetchall()
        assert rows == [("price", 10, 2)]


def test_copy_of_a_table_to_stdout_is_its_query(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        with conn.cursor().copy("COPY clicks TO STDOUT") as copy:
            rows = list(copy.rows())
        assert len(rows) == 20 and sorted(int(r[3]) for r in rows) == list(range(1, 21))
        assert all(r[0] == "+I" and len(r) == 4 for r in rows)  # the row kind, then user_name, url, hits
        with conn.cursor().copy("COPY clicks (hits) TO STDOUT") as copy:
            assert sorted(int(hits) for _, hits in copy.rows()) == list(range(1, 21))
    run = psql(tables, "COPY nope TO STDOUT")
    assert "ERROR:  unknown table 'nope'" in run.stderr and "LINE 1: COPY nope TO STDOUT\n             ^" in run.stderr


def test_copy_of_an_updating_query_streams_its_changelog_with_retractions(tables):
    with psycopg.connect(tables.dsn(), autocommit=True) as conn:
        lines: list[tuple] = []
        with pytest.raises(psycopg.errors.QueryCanceled):
            with conn.cursor().copy("COPY (SELECT n, COUNT(*) AS c FROM live GROUP BY n) TO STDOUT") as copy:
                for row in copy.rows():
                    lines.append(row)
                    if {"-U", "+U"} <= {op for op, _, _ in lines}:
                        conn.cancel()
    ops = [op for op, _, _ in lines]
    assert set(ops) <= {"+I", "-U", "+U", "-D"} and "+I" in ops
    retraction = ops.index("-U")
    assert ops[retraction + 1] == "+U"  # an update is its old row retracted, then its new one
    old, new = lines[retraction], lines[retraction + 1]
    assert old[1] == new[1] and int(new[2]) > int(old[2])  # the same key, a higher count
    assert tables.wait_for_metric("streamshell_gateway_spark_queries", 0)["streamshell_gateway_spark_queries"] == 0


def test_discard_all_closes_cursors_and_forgets_settings_and_prepared_statements(tables):
    gw = tables
    with psycopg.connect(gw.dsn(), autocommit=True) as conn:
        conn.execute("SET application_name = 'pooled'")
        conn.execute("SET 'pipeline.name' = 'first-client'")
        prepared = conn.pgconn.prepare(b"kept", b"SELECT 1 AS one")  # a statement prepared on the server (Parse)
        assert prepared.status == psycopg.pq.ExecStatus.COMMAND_OK
        conn.execute("DECLARE pooled_changes CURSOR FOR SELECT n FROM live")
        assert len(conn.execute("FETCH 1 pooled_changes").fetchall()) == 1
        assert conn.execute("DISCARD ALL").statusmessage == "DISCARD ALL"
        with pytest.raises(psycopg.errors.InvalidCursorName):
            conn.execute("FETCH 1 pooled_changes")
        assert conn.execute("SHOW application_name").fetchall() == [("",)]
        assert conn.pgconn.parameter_status(b"application_name") == b""  # told to the client too
        assert "pipeline.name" not in dict(conn.execute("SET").fetchall())
        assert gw.wait_for_metric("streamshell_gateway_spark_queries", 0)["streamshell_gateway_spark_queries"] == 0
        gone = conn.pgconn.exec_prepared(b"kept", [])
        assert gone.error_field(psycopg.pq.DiagnosticField.SQLSTATE) == b"26000"  # prepared statement does not exist
        assert conn.execute("SELECT 2 AS after").fetchall() == [(2,)]


def test_the_metrics_have_help_and_type_lines(tables):
    text = urllib.request.urlopen(tables.metrics_url, timeout=10).read().decode()
    for name in ("streamshell_gateway_connections", "streamshell_gateway_spark_queries", "streamshell_gateway_rows_sent_total"):
        assert f"\n# HELP {name} " in "\n" + text and f"\n# TYPE {name} " in text
