"""Demo mode (`streamshell --demo FILE`): play a walkthrough statement by statement, for a room or for CI.

Why it exists: showing streaming SQL live means typing long statements under pressure; a demo file removes the
typing and keeps the story (`-- @say`, `-- @pause`), and its expectations (`-- @expect`, `-- @wait`) make the
same file a test. On a terminal each statement is shown highlighted and runs when the presenter presses Enter
(`q` quits). Without a terminal (CI) nothing waits for a key, statements run in order, and the first failure (an
unmet expectation, or an error nobody expected) ends the run with exit code 1. The file format is read by
`demo_script`; statements run through the same executor as the prompt.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

from shell.errors import StreamshellError
from shell.files import FileProblem, decode_utf8
from shell.render.materialize import ResultTable
from shell.render.terminal import make_console
from shell.repl.buffer import CONTINUATION, PROMPT
from shell.repl.demo_script import Expect, Pause, Run, Say, Step, parse_demo
from shell.repl.executor import Executor, Outcome
from shell.repl.lexer import highlight_rich
from shell.repl.terminal import CurrentStderr, interrupt_with_ctrl_c, keys_not_echoed
from shell.stdio import divert_native_stderr
from shell.exitcodes import EXIT_BROKEN_PIPE
from shell.script import quiet_stdout
from shell.sql import statements as st

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
CI_SELECT_LIMIT_SECONDS = 60.0  # an unbounded SELECT with no @wait, when nobody can press Ctrl-C


class Quit(Exception):
    """The presenter quit the demo."""


class DemoPlayer:
    def __init__(self, session, console: Console, path: str, source: str, interactive: bool):  # noqa: ANN001
        self.session = session
        self.console = console
        self.path = path
        self.source = source
        self.interactive = interactive
        self.executor = Executor(session, console, source_name=path)
        results_only = session.result_mode(interactive=interactive) in ("json", "csv")
        # Narration must not mix with JSON or CSV results on stdout.
        self.chatter = make_console(file=sys.stderr) if results_only and not interactive else console
        self.failures = 0
        self.checked = 0
        self._key_prompt = None

    # playing -----------------------------------------------------------------------------------------------------

    def play(self, steps: list[Step]) -> int:
        self._title(steps)
        try:
            for step in steps:
                if isinstance(step, Say):
                    self.chatter.print(Text(f"» {step.text}", style="bold cyan"), soft_wrap=True)
                elif isinstance(step, Pause):
                    self.wait_for_enter(step.text or "Press Enter to continue")
                elif isinstance(step, Run):
                    if not self.run(step) and not self.interactive:
                        break
        except Quit:
            self.chatter.print(Text("Demo stopped.", style="dim"))
            return EXIT_FAILED if self.failures else EXIT_OK
        self._summary()
        return EXIT_FAILED if self.failures else EXIT_OK

    def run(self, step: Run) -> bool:
        """Show, run and check one statement; False when it failed (an error or an unmet expectation)."""
        self.show_statement(step.statement)
        self.wait_for_enter("Enter runs it · q quits")
        stop, waited = self._stop_rule(step)
        with keys_not_echoed():
            outcome = self.executor.run_statement(step.statement, self.source, stop=stop)
        if outcome.quit:
            raise Quit()
        ok = True
        if not outcome.ok and not step.expects_error:
            ok = False
            self._failed(step.line, "the statement failed" + (" (an internal error)" if outcome.internal else ""))
        if waited.get("timed_out"):
            if step.wait is not None:
                text = f"@wait {step.wait.condition}: gave up after {step.wait.timeout_seconds:g} s"
            else:
                text = f"stopped after {CI_SELECT_LIMIT_SECONDS:g} s; add -- @wait to say when a SELECT has shown enough"
            self.chatter.print(Text(text, style="yellow"), soft_wrap=True)
        for expect in step.expects:
            ok = self.check(expect, outcome) and ok
        return ok

    def check(self, expect: Expect, outcome: Outcome) -> bool:
        self.checked += 1
        table = outcome.table
        if expect.condition.met(table, outcome):
            self.chatter.print(Text(f"✓ @expect {expect.text}", style="green"), soft_wrap=True)
            return True
        self._failed(expect.line, f"@expect {expect.condition.explain(table, outcome)}")
        return False

    def _failed(self, line: int, message: str) -> None:
        self.failures += 1
        text = f"{self.path}:{line}: {message}"
        if self.interactive:
            self.console.print(Text(f"✗ {text}", style="bold red"), soft_wrap=True)
        else:
            sys.stderr.write(f"{text}\n")
            sys.stderr.flush()

    def _stop_rule(self, step: Run):  # noqa: ANN202 - (stop callable or None, state shared with it)
        """When to end a SELECT's view early: its @wait condition, or a time limit."""
        state: dict[str, object] = {}
        if not isinstance(step.statement, st.Select):
            return None, state
        wait = step.wait
        limit = wait.timeout_seconds if wait is not None else (None if self.interactive else CI_SELECT_LIMIT_SECONDS)
        if wait is None and limit is None:
            return None, state

        def stop(table: ResultTable) -> bool:
            started = state.setdefault("started", time.monotonic())
            if wait is not None and wait.condition.met(table):
                return True
            if limit is not None and time.monotonic() - started > limit:  # type: ignore[operator]
                state["timed_out"] = True
                return True
            return False

        return stop, state

    # showing -----------------------------------------------------------------------------------------------------

    def show_statement(self, statement: st.Statement) -> None:
        text = statement.source.text if statement.source else ""
        lines = text.split("\n")
        if not self.interactive:
            out = "\n".join((PROMPT if i == 0 else CONTINUATION) + line for i, line in enumerate(lines))
            self.chatter.print(Text(out + ";"), soft_wrap=True)
            return
        highlighted = highlight_rich(text + ";").split("\n")
        for i, line in enumerate(highlighted):
            prefix = Text(PROMPT if i == 0 else CONTINUATION, style="bold" if i == 0 else "bright_black")
            self.console.print(prefix + line, soft_wrap=True)

    def wait_for_enter(self, hint: str) -> None:
        """On a terminal, wait for Enter (`q` or Ctrl-C/Ctrl-D raise Quit); otherwise go on at once."""
        if not self.interactive:
            return
        if self._key_prompt is None:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.styles import Style

            self._key_prompt = PromptSession(erase_when_done=True, style=Style.from_dict({"hint": "ansibrightblack"}))
        try:
            answer = self._key_prompt.prompt([("class:hint", f"  ⏎ {hint} ")])
        except (KeyboardInterrupt, EOFError):
            raise Quit() from None
        if answer.strip().lower() in ("q", "quit", "exit"):
            raise Quit()

    def _title(self, steps: list[Step]) -> None:
        runs = sum(isinstance(s, Run) for s in steps)
        line = Text(f"streamshell demo: {self.path}", style="bold")
        line.append(f" · {runs} statements", style="dim")
        if self.interactive:
            line.append(" · Enter runs the next one · Ctrl-C stops a query · q quits", style="dim")
        self.chatter.print(line, soft_wrap=True)

    def _summary(self) -> None:
        if self.failures:
            text, style = f"Demo failed: {self.failures} problem(s), {self.checked} expectation(s) checked.", "bold red"
        else:
            text, style = f"Demo finished: {self.checked} expectation(s) met.", "bold green"
        self.chatter.print(Text(text, style=style))


def run_demo(session, path: str) -> int:  # noqa: ANN001 - shell.session.Session
    """Play the demo file at `path`; the exit code (0 ok, 1 a failure, 2 unreadable file, 130 quit)."""
    try:
        source = decode_utf8(Path(path).read_bytes(), path)
    except OSError as exc:
        sys.stderr.write(f"streamshell: cannot read {path}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    except FileProblem as exc:
        sys.stderr.write(f"{exc}\n")
        return EXIT_USAGE
    try:
        steps = parse_demo(source)
    except StreamshellError as exc:
        sys.stderr.write(exc.render(path) + "\n")
        return EXIT_FAILED
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive:
        interrupt_with_ctrl_c()
    console = make_console()
    enabled = interactive and not session.options.verbose
    with divert_native_stderr(session.home / "log" / "stderr.log", enabled=enabled):
        if interactive:
            session.options.print_stream = CurrentStderr()
        if any(isinstance(s, Run) and session.needs_spark(s.statement) for s in steps):
            session.start_spark()
        player = DemoPlayer(session, console, path, source, interactive)
        try:
            return player.play(steps)
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        except BrokenPipeError:  # `--demo FILE | head`
            quiet_stdout()
            return EXIT_BROKEN_PIPE
        except Exception as exc:  # noqa: BLE001 - one line, not a traceback (-v shows it)
            player.executor.show_internal(exc)
            return EXIT_FAILED
