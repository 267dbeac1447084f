"""The interactive shell: the prompt loop, and nothing but wiring.

Why it exists: `streamshell` on a terminal lands here (`run_repl`). The prompt appears at once while Spark starts
in the background; each input that the splitter calls complete is handed to the executor; Ctrl-C clears the input
(or cancels the running statement, in the executor); Ctrl-D and QUIT leave, after asking when jobs are running,
because leaving stops them. Highlighting, completion, history, the toolbar and the keys live in their own modules.
"""

from __future__ import annotations

import threading

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.shortcuts import CompleteStyle
from prompt_toolkit.styles import Style

from shell import __version__
from shell.repl.buffer import PROMPT, continuation
from shell.repl.completer import SqlCompleter
from shell.repl.history import RedactingFileHistory
from shell.repl.keybindings import build_key_bindings
from shell.repl.lexer import PYGMENTS_STYLE, StreamshellLexer
from shell.repl.terminal import CurrentStderr, interrupt_with_ctrl_c, keys_not_echoed
from shell.stdio import divert_native_stderr
from shell.repl.toolbar import Toolbar
from shell.exitcodes import EXIT_BROKEN_PIPE
from shell.script import quiet_stdout

EXIT_OK = 0

STYLE = Style.from_dict(
    {
        **PYGMENTS_STYLE,
        "prompt": "bold",
        "continuation": "ansibrightblack",
        "toolbar": "",
        "toolbar.jobs": "bold",
        "toolbar.value": "bold",
        "auto-suggestion": "ansibrightblack",
        "note": "ansibrightblack",
        "warn": "ansiyellow",
    }
)


def build_prompt(session) -> PromptSession:  # noqa: ANN001 - shell.session.Session
    return PromptSession(
        message=[("class:prompt", PROMPT)],
        multiline=True,
        prompt_continuation=lambda width, line, wrap: [("class:continuation", continuation(width, line, wrap))],
        lexer=PygmentsLexer(StreamshellLexer, sync_from_start=True),
        completer=SqlCompleter(session.catalog),
        complete_while_typing=True,
        complete_style=CompleteStyle.COLUMN,
        history=RedactingFileHistory(session.home / "history"),
        auto_suggest=AutoSuggestFromHistory(),
        key_bindings=build_key_bindings(),
        bottom_toolbar=Toolbar(session),
        style=STYLE,
        include_default_pygments_style=False,
        search_ignore_case=True,
        enable_open_in_editor=True,
        refresh_interval=1.0,
    )


def say(text: str, style: str = "class:note") -> None:
    print_formatted_text(FormattedText([(style, text)]), style=STYLE)


def ask(question: str) -> bool:
    """A yes/no question on the terminal; Ctrl-C or Ctrl-D answer no."""
    from prompt_toolkit import prompt

    try:
        with patch_stdout(raw=True):
            answer = prompt(question)
    except (KeyboardInterrupt, EOFError):
        return False
    return answer.strip().lower() in ("y", "yes")


def confirm_quit(session) -> bool:  # noqa: ANN001
    """True when the shell may exit: no job is running, or the user says so. Ctrl-C while it checks: stay.

    A job's status is a Spark call, made off the main thread, where Ctrl-C lands (shell/repl/background.py)."""
    from shell.render.terminal import make_console
    from shell.repl.background import Abandoned, run_patiently

    try:
        call = run_patiently(session.jobs.running, make_console(), "Checking the running jobs…", patience=1)
    except Abandoned:
        return False
    if call.error is not None:  # Spark is gone: nothing left to stop
        return True
    running = call.value
    if not running:
        return True
    names = ", ".join(j.name for j in running[:3]) + (", ..." if len(running) > 3 else "")
    noun, them = ("job is", "it") if len(running) == 1 else ("jobs are", "them")
    return ask(f"{len(running)} {noun} running ({names}); quitting stops {them}. Quit anyway? [y/N] ")


def say_jobs_keep_running(session) -> None:  # noqa: ANN001
    """Quitting leaves the jobs that run in processes of their own running: say which, and how to reach them."""
    try:
        from shell.jobs.record import ALIVE

        alive = [j for j in session.jobs.started_jobs() if j.status in ALIVE and j.job_id not in session.jobs.jobs]
    except Exception:  # noqa: BLE001 - a folder that cannot be read: nothing to say about it
        return
    if alive:
        names = ", ".join(f"{j.name} ({j.job_id})" for j in alive[:3]) + (", ..." if len(alive) > 3 else "")
        noun = "job keeps" if len(alive) == 1 else "jobs keep"
        say(f"{len(alive)} {noun} running in {'its' if len(alive) == 1 else 'their'} own process: {names}. "
            "SHOW JOBS in any shell on this home lists them; STOP JOB 'id' stops one.")


def greet() -> None:
    print_formatted_text(
        FormattedText(
            [
                ("bold", f"streamshell {__version__}"),
                ("class:note", " · Flink-style streaming SQL on Spark · HELP; lists the statements · Ctrl-D quits"),
            ]
        ),
        style=STYLE,
    )


def warm_up_after_first_paint(prompt: PromptSession, session) -> None:  # noqa: ANN001
    """Once the prompt is on screen: start Spark, and load the result views (rich), both in the background.

    Neither may delay the prompt; by the time a statement is typed, both are usually ready."""

    def start(_app) -> None:  # noqa: ANN001
        prompt.app.after_render -= start
        session.start_spark()
        threading.Thread(target=_load_views, name="streamshell-warm-up", daemon=True).start()

    prompt.app.after_render += start


def _load_views() -> None:
    try:
        import shell.repl.executor  # noqa: F401 - imported for its side effect: the modules are loaded
    except Exception:  # noqa: BLE001 - the real import reports it
        pass


def make_executor(session):  # noqa: ANN001, ANN201
    from shell.render.terminal import make_console
    from shell.repl.executor import Executor

    return Executor(session, make_console(), keys=True)  # a live table answers keys (shell/render/navigation.py)


def run_repl(session) -> int:  # noqa: ANN001 - shell.session.Session
    """Run the interactive shell until the user quits; the exit code."""
    interrupt_with_ctrl_c()
    with divert_native_stderr(session.home / "log" / "stderr.log", enabled=not session.options.verbose):
        session.options.print_stream = CurrentStderr()  # job output follows the prompt's stderr
        prompt = build_prompt(session)
        greet()
        warm_up_after_first_paint(prompt, session)
        executor = None
        while True:
            try:
                with patch_stdout(raw=True):
                    text = prompt.prompt()
            except KeyboardInterrupt:
                continue
            except EOFError:
                if confirm_quit(session):
                    break
                continue
            if not text.strip():
                continue
            try:
                with keys_not_echoed():
                    executor = executor or make_executor(session)
                    outcomes = executor.run_text(text)
            except BrokenPipeError:  # stdout was a pipe and its reader left
                quiet_stdout()
                return EXIT_BROKEN_PIPE
            except KeyboardInterrupt:
                say("Cancelled.", "class:warn")
                continue
            except Exception as exc:  # noqa: BLE001 - a bug in the shell must not end it
                if executor is not None:
                    executor.show_internal(exc)
                else:
                    say(f"internal error: {type(exc).__name__}: {exc}", "class:warn")
                continue
            if outcomes and outcomes[-1].quit and confirm_quit(session):
                break
        say_jobs_keep_running(session)
        say("Shutting down…")
    return EXIT_OK
