"""The `streamshell` command: flags, the choice between the interactive shell and script mode, exit codes.

Script mode (`-f`, `-e`, or a non-terminal stdin) runs statements in order and stops at the first failure with
`file:line:col: message` on stderr and exit code 1; bad usage exits 2. Otherwise the interactive shell starts;
it is imported only then, so scripts never load the terminal libraries.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from shell import __version__
from shell.config import RESULT_MODES, parse_defines
from shell.errors import StreamshellError
from shell.exitcodes import EXIT_OK, EXIT_USAGE
from shell.paths import default_home



def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamshell",
        description="Streaming SQL shell: Flink-style SQL over Pulsar and Kafka topics, run on Spark.",
        epilog="streamshell gateway --help: serve the shell to PostgreSQL clients (psql, JDBC, psycopg, Grafana).",
    )
    parser.add_argument("-f", "--file", metavar="FILE", help="run the statements in FILE, then exit")
    parser.add_argument("-i", "--init", metavar="INIT", help="run the statements in INIT first (DDL, SET)")
    parser.add_argument("-e", "--execute", metavar="SQL", help="run the statements in SQL, then exit")
    parser.add_argument(
        "--demo", metavar="FILE", help="play FILE statement by statement (Enter runs the next; checks -- @expect)"
    )
    parser.add_argument("--result-mode", choices=RESULT_MODES, help="how SELECT results are shown")
    parser.add_argument("--master", default="local[*]", metavar="URL", help="Spark master (default local[*])")
    parser.add_argument(
        "-D", dest="defines", action="append", default=[], metavar="key=value", help="set a session setting"
    )
    parser.add_argument("--catalog", metavar="DIR", help="where tables, history and jobs are kept (~/.streamshell)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and Spark's log level")
    parser.add_argument("--version", action="version", version=f"streamshell {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["gateway"]:  # `streamshell gateway ...`: the PostgreSQL wire protocol server (docs/gateway.md)
        from shell.gateway.command import main as gateway_main

        return gateway_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.file and args.execute:
        parser.error("use either -f FILE or -e SQL, not both")
    if args.demo and (args.file or args.execute):
        parser.error("--demo cannot be combined with -f or -e")
    defines = parse_defines(parser, args.defines)

    if args.verbose:  # tracebacks are shown: redacted as everything else (shell/errors.py)
        from shell.errors import RedactedStream

        stderr, sys.stderr = sys.stderr, RedactedStream(sys.stderr)  # type: ignore[assignment]
        try:
            return _run(args, defines)
        finally:
            sys.stderr = stderr
    return _run(args, defines)


def _run(args: argparse.Namespace, defines: dict[str, str]) -> int:
    from shell.session import Session, SessionOptions  # after argument checks: keep --help and usage fast

    try:
        session = Session(
            SessionOptions(
                home=Path(args.catalog).expanduser() if args.catalog else default_home(),
                master=args.master,
                settings=defines,
                verbose=args.verbose,
            )
        )
    except StreamshellError as exc:
        print(f"streamshell: {exc.render()}", file=sys.stderr)
        return EXIT_USAGE
    for warning in session.warnings:  # files it could not use: named, left as they are, and the shell starts
        print(f"streamshell: warning: {warning}", file=sys.stderr)

    script_mode = bool(args.file or args.execute) or not sys.stdin.isatty()
    if args.result_mode:
        session.settings.set("sql-client.execution.result-mode", args.result_mode)
        session.settings.keep_as_initial()

    from shell.script import ScriptRunner
    from shell.stdio import divert_native_stderr

    try:
        if args.init:
            code = ScriptRunner(session).run_file(args.init, wait_for_jobs=False)
            if code != EXIT_OK:
                return code
        if args.demo:
            from shell.repl.demo import run_demo

            try:
                return run_demo(session, args.demo)
            finally:  # a demo's jobs are part of the show: they end with it
                session.jobs.stop_started()
        if script_mode:
            with divert_native_stderr(session.home / "log" / "stderr.log", enabled=not args.verbose):
                runner = ScriptRunner(session)
                if args.execute:
                    return runner.run_text(args.execute, "<command line>")
                if args.file:
                    return runner.run_file(args.file)
                stdin = getattr(sys.stdin, "buffer", None)
                if stdin is None:  # a text stream put in place of stdin (tests)
                    return runner.run_text(sys.stdin.read(), "<stdin>")
                return runner.run_bytes(stdin.read(), "<stdin>")
        from shell.repl.app import run_repl

        return run_repl(session)
    finally:
        session.close()

