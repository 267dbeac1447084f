"""The REPL's executor and views, driven by a fake session: every result kind, errors, cancellation, modes."""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, field

from rich.console import Console

from shell.config import Settings
from shell.errors import CatalogError
from shell.render.live import LiveTableView
from shell.render.materialize import MaterializingStream, ResultTable
from shell.repl.executor import Executor
from shell.results import ChangeStream, Change, JobStarted, Message, Progress, QuitRequested, Rows, Text
from shell.sql import statements as st


@dataclass
class FakeRuntime:
    started: bool = True
    starting: bool = False

    def start(self) -> None:
        pass


@dataclass
class FakeOptions:
    verbose: bool = False


@dataclass
class FakeSession:
    """Answers statements by their text; a callable answer is called (to raise, for instance)."""

    answers: dict[str, object]
    settings: Settings = field(default_factory=Settings)
    runtime: FakeRuntime = field(default_factory=FakeRuntime)
    options: FakeOptions = field(default_factory=FakeOptions)
    executed: list[str] = field(default_factory=list)

    def execute(self, statement: st.Statement):
        text = statement.source.text
        self.executed.append(text)
        answer = self.answers[text]
        return answer() if callable(answer) else answer

    def detached_jobs(self) -> bool:
        return True

    def needs_spark(self, statement) -> bool:
        return isinstance(statement, st.Select)

    def result_mode(self, interactive: bool) -> str:
        chosen = self.settings.get("sql-client.execution.result-mode")
        return chosen or ("table" if interactive else "tableau")

    def max_column_width(self) -> int:
        return 40


def terminal() -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=100, height=30, color_system=None)


def output(console: Console) -> str:
    return console.file.getvalue()


class Stream(ChangeStream):
    """A finished ChangeStream that records its cancellation."""

    def __init__(self, batches: list[list[Change]], error: BaseException | None = None, **kwargs):
        super().__init__(**kwargs)
        self.cancel_calls = 0
        for batch in batches:
            self.publish(batch)
        self.finish(error)

    def cancel(self) -> None:
        self.cancel_calls += 1
        super().cancel()


def test_message_rows_text_and_jobs_are_rendered():
    session = FakeSession(
        {
            "CREATE TABLE t (id INT) WITH ('connector' = 'datagen')": Message("Table has been created."),
            "SHOW TABLES": Rows(["table name"], [("orders",), (None,)]),
            "SHOW CREATE TABLE t": Text("CREATE TABLE t (\n  id INT\n)"),
            "INSERT INTO t SELECT * FROM s": JobStarted("abc123", "insert-into_t"),
        }
    )
    console = terminal()
    outcomes = Executor(session, console).run_text(
        "CREATE TABLE t (id INT) WITH ('connector' = 'datagen'); SHOW TABLES; SHOW CREATE TABLE t;\n"
        "INSERT INTO t SELECT * FROM s;"
    )
    text = output(console)
    assert all(o.ok for o in outcomes) and len(outcomes) == 4
    assert "[INFO] Table has been created." in text
    assert "orders" in text and "<NULL>" in text and "2 rows in set" in text
    assert "CREATE TABLE t (\n  id INT\n)" in text
    assert "[INFO] Job 'insert-into_t' started with id abc123." in text


def test_an_error_is_shown_with_caret_and_hint_and_stops_the_rest():
    def fail():
        raise CatalogError("unknown table 'nope'", hint="did you mean orders?")

    session = FakeSession({"SHOW TABLES": Rows(["table name"], []), "DESCRIBE nope": fail, "SHOW VIEWS": None})
    console = terminal()
    outcomes = Executor(session, console).run_text("SHOW TABLES;\n  DESCRIBE nope; SHOW VIEWS;")
    assert [o.ok for o in outcomes] == [True, False]
    assert session.executed == ["SHOW TABLES", "DESCRIBE nope"]
    lines = output(console).splitlines()
    at = lines.index("2:3: unknown table 'nope'")
    assert lines[at + 1 : at + 4] == ["  DESCRIBE nope; SHOW VIEWS;", "  ^", "hint: did you mean orders?"]
    assert "Traceback" not in output(console)


def test_a_syntax_error_runs_nothing():
    session = FakeSession({})
    console = terminal()
    assert Executor(session, console).run_text("SHOW TABLES;\nSELEC 1;") == []
    assert session.executed == []
    assert output(console).startswith("2:1: ")


def test_an_internal_error_is_one_line_and_the_shell_goes_on():
    def bug():
        raise ValueError("boom\nsecond line")

    session = FakeSession({"SHOW TABLES": bug, "SHOW VIEWS": Rows(["view name"], [])})
    console = terminal()
    executor = Executor(session, console)
    [outcome] = executor.run_text("SHOW TABLES;")
    assert isinstance(outcome.internal, ValueError)
    assert output(console).strip() == "internal error: ValueError: boom"
    [after] = executor.run_text("SHOW VIEWS;")
    assert after.ok


def test_a_select_is_shown_live_materialized_and_stopped_at_the_end():
    stream = Stream(
        [[Change("+I", (1, "a")), Change("+I", (2, None))], [Change("-U", (1, "a")), Change("+U", (1, "b"))]],
        columns=["id", "name"], types=["bigint", "string"], key=["id"],
    )
    session = FakeSession({"SELECT * FROM t": stream})
    console = terminal()
    [outcome] = Executor(session, console).run_text("SELECT * FROM t;")
    assert outcome.ok and not outcome.cancelled
    assert outcome.table.rows() == [(1, "b"), (2, None)]
    assert stream.cancel_calls == 1, "the query is stopped (and its files removed) when the view ends"
    text = output(console)
    assert "2 rows" in text and "finished" in text and "<NULL>" in text


class InterruptedStream(Stream):
    """Delivers one batch, then the user presses Ctrl-C."""

    def batches(self, poll_seconds: float = 0.2):
        yield [Change("+I", (1,))]
        raise KeyboardInterrupt


def test_ctrl_c_during_a_select_cancels_it_and_returns():
    stream = InterruptedStream([], columns=["x"], types=["int"])
    session = FakeSession({"SELECT x FROM t": stream, "SHOW TABLES": Rows(["table name"], [])})
    console = terminal()
    executor = Executor(session, console)
    outcomes = executor.run_text("SELECT x FROM t; SHOW TABLES;")
    assert len(outcomes) == 1 and outcomes[0].cancelled, "the rest of the input is dropped"
    assert stream.cancel_calls == 1
    assert "Query cancelled." in output(console)
    assert executor.run_text("SHOW TABLES;")[0].ok


class Typing:
    """What shell.render.keys.terminal_keys gives on a terminal: a reader of keys, here typing `q` at once."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled

    def __enter__(self):  # noqa: ANN204
        return self if self.enabled else None

    def __exit__(self, *exc) -> None:  # noqa: ANN002
        pass

    def read(self, wait: float = 0.0) -> list[str]:
        return ["q"]


def test_q_stops_a_running_select_and_the_rest_of_the_input_runs(monkeypatch):
    import shell.repl.executor as executor_module

    monkeypatch.setattr(executor_module, "terminal_keys", Typing)
    stream = ChangeStream(columns=["x"])  # never finishes by itself
    stream.publish([Change("+I", (1,))])
    session = FakeSession({"SELECT x FROM t": stream, "SHOW TABLES": Rows(["table name"], [])})
    console = terminal()
    outcomes = Executor(session, console, keys=True).run_text("SELECT x FROM t; SHOW TABLES;")
    assert [o.ok and not o.cancelled for o in outcomes] == [True, True]
    assert stream.cancelled and "Query stopped." in output(console)


def test_keys_are_read_only_when_asked(monkeypatch):
    import shell.repl.executor as executor_module

    asked = []
    monkeypatch.setattr(executor_module, "terminal_keys", lambda enabled: asked.append(enabled) or Typing(enabled))
    stream = Stream([[Change("+I", (1,))]], columns=["x"])
    [outcome] = Executor(FakeSession({"SELECT x FROM t": stream}), terminal()).run_text("SELECT x FROM t;")
    assert outcome.ok and asked == [False], "a demo's executor leaves the keys to the demo"


def test_a_failing_query_shows_its_error():
    stream = Stream([[Change("+I", (1,))]], error=CatalogError("broker down at localhost:9092"), columns=["x"])
    session = FakeSession({"SELECT x FROM k": stream})
    console = terminal()
    [outcome] = Executor(session, console).run_text("SELECT x FROM k;")
    assert outcome.error is not None and "1:1: broker down at localhost:9092" in output(console)
    assert stream.cancel_calls == 1


def test_a_stop_rule_ends_the_view_early():
    stream = Stream([[Change("+I", (i,))] for i in range(10)], columns=["x"])
    session = FakeSession({"SELECT x FROM t": stream})
    console = terminal()
    executor = Executor(session, console)
    [statement] = executor.parse("SELECT x FROM t;")
    outcome = executor.run_statement(statement, "SELECT x FROM t;", stop=lambda table: len(table) >= 4)
    assert len(outcome.table) == 4 and stream.cancel_calls == 1
    assert "stopped after 4 rows" in output(console)


def test_changelog_mode_on_a_terminal():
    stream = Stream([[Change("+I", (1,)), Change("-D", (1,))]], columns=["x"], types=["int"])
    session = FakeSession({"SELECT x FROM t": stream})
    session.settings.set("sql-client.execution.result-mode", "changelog")
    console = terminal()
    Executor(session, console).run_text("SELECT x FROM t;")
    lines = [line.rstrip() for line in output(console).splitlines()]
    assert lines[:3] == ["op │ x", "+I │ 1", "-D │ 1"]
    assert lines[3] == "Received a total of 2 changes"


def test_json_mode_in_a_pipe_writes_only_objects_to_stdout(capsys):
    stream = Stream([[Change("+I", (1, "a"))]], columns=["x", "y"])
    session = FakeSession({"SELECT 1": stream, "SHOW TABLES": Message("hello")})
    session.settings.set("sql-client.execution.result-mode", "json")
    pipe = Console(file=io.StringIO())
    Executor(session, pipe).run_text("SHOW TABLES; SELECT 1;")
    captured = capsys.readouterr()
    assert captured.out == '{"op": "+I", "row": {"x": 1, "y": "a"}}\n'
    assert "[INFO] hello" in captured.err


def test_quit_is_reported_not_acted_on():
    session = FakeSession({"QUIT": QuitRequested(), "SHOW TABLES": None})
    outcomes = Executor(session, terminal()).run_text("QUIT; SHOW TABLES;")
    assert len(outcomes) == 1 and outcomes[0].quit


def test_live_view_fits_the_terminal_and_survives_a_resize():
    table = ResultTable(["id", "name"])
    table.apply([Change("+I", (i, "x" * 80)) for i in range(100)])
    console = Console(file=io.StringIO(), force_terminal=True, width=60, height=20, color_system=None)
    view = LiveTableView(console, table, max_column_width=20)
    console.print(view.render())
    first = output(console)
    assert "100 rows (last 15 shown)" in first  # 20 lines: the header's 2, the 2 of the wrapped status line, a spare
    assert len(first.splitlines()) <= 20
    assert "99" in first and " 0 " not in first, "newest rows at the bottom"
    assert max(len(line) for line in first.splitlines()) <= 60
    console.size = (30, 8)  # the terminal shrank mid-query
    console.print(view.render())


def test_live_view_highlights_fresh_rows_only():
    now = [10.0]
    table = ResultTable(["v"], clock=lambda: now[0])
    table.apply([Change("+I", (1,))])
    view = LiveTableView(terminal(), table)
    fresh = view.render().renderables[0]
    assert fresh.rows[0].style == "bold green"
    now[0] = 20.0
    stale = view.render().renderables[0]
    assert stale.rows[0].style is None


def test_status_line_shows_progress():
    table = ResultTable(["v"])
    table.apply([Change("+I", (1,))])
    view = LiveTableView(terminal(), table)
    view.progress = Progress(batch_id=3, batch_duration_ms=120, watermark="2024-05-01T10:00:00.000Z", late_rows=2,
                             input_rows_per_second=250.0)
    status = view.render().renderables[1].plain
    for part in ("1 row", "changes/s", "input 250.0 rows/s", "last update", "watermark 2024-05-01 10:00:00.000",
                 "late rows 2 (2 in the last batch)", "batch 120 ms"):
        assert part in status
    view.progress = Progress(batch_id=3, watermark="1970-01-01T00:00:00.000Z")  # Spark's, before any event
    assert "watermark" not in view.render().renderables[1].plain


def test_the_live_view_reads_progress_off_the_main_thread_and_shows_the_last_one():
    # Ctrl-C lands on the main thread; inside a Py4J call it breaks the call's connection or is lost.
    readers = []

    def progress() -> Progress:
        readers.append(threading.current_thread())
        return Progress(batch_id=len(readers), batch_duration_ms=700 + len(readers))

    stream = ChangeStream(["v"], progress_callback=progress, bounded=True)
    for i in range(3):
        stream.publish([Change("+I", (i,))])
    stream.finish()
    table = ResultTable(["v"])
    console = terminal()
    LiveTableView(console, table).changes(MaterializingStream(stream, table))
    assert readers and threading.main_thread() not in readers
    final = [line for line in output(console).splitlines() if "finished" in line][-1]
    assert "3 rows" in final and f"batch {700 + len(readers)} ms" in final, final


def test_statements_run_off_the_main_thread():
    seen = []
    session = FakeSession({"SHOW TABLES": lambda: seen.append(threading.current_thread().name) or Rows(["t"], [])})
    Executor(session, terminal()).run_text("SHOW TABLES;")
    assert seen == ["streamshell-statement"]


def test_verbose_shows_the_traceback():
    def bug():
        raise KeyError("k")

    session = FakeSession({"SHOW TABLES": bug})
    session.options.verbose = True
    console = terminal()
    Executor(session, console).run_text("SHOW TABLES;")
    assert "Traceback" in output(console)


def test_quitting_checks_the_jobs_off_the_main_thread():
    from shell.repl.app import confirm_quit

    checked = []

    class Jobs:
        def running(self):
            checked.append(threading.current_thread())
            return []

    class Gone:
        def running(self):
            raise RuntimeError("Spark stopped")

    assert confirm_quit(type("S", (), {"jobs": Jobs()})()) is True  # nothing running: no question
    assert checked and threading.main_thread() not in checked
    assert confirm_quit(type("S", (), {"jobs": Gone()})()) is True  # nothing left to stop
