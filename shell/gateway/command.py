"""`streamshell gateway [--host H] [--port N] [--catalog DIR] ...`: the command line of the gateway.

Why it exists apart from shell/cli.py: the shell's flags are about one user's script or terminal; the gateway's
are about a server (address, password, certificate, metrics). cli.py hands `streamshell gateway ...` here. It
prints one line saying where it listens (and its metrics), serves until SIGINT or SIGTERM, and exits 2 on bad
usage (a port taken, a non-loopback address without a password) with a one-line reason.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from shell.exitcodes import EXIT_OK, EXIT_USAGE
from shell.paths import default_home

PASSWORD_VARIABLE = "STREAMSHELL_GATEWAY_PASSWORD"
MAX_ROWS_SETTING = "sql-client.display.max-rows-per-batch"
GATEWAY_MAX_ROWS = "1000000"  # the shell's 10,000 is a screen's worth; a result larger than this is an error


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamshell gateway",
        description="Serve streamshell over the PostgreSQL wire protocol (psql, JDBC, psycopg, Grafana, DBeaver).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=5433, help="port to listen on (default 5433; 0 picks a free one)")
    parser.add_argument("--catalog", metavar="DIR", help="the home: tables, jobs, settings (~/.streamshell)")
    parser.add_argument("--master", default="local[*]", metavar="URL", help="Spark master (default local[*])")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="key=value",
                        help="a session setting for every connection")
    parser.add_argument("--password-file", metavar="FILE",
                        help=f"the password clients give (SCRAM-SHA-256); or ${PASSWORD_VARIABLE}")
    parser.add_argument("--require-password", action="store_true", help="ask for the password on loopback too")
    parser.add_argument("--tls-cert", metavar="FILE", help="certificate (PEM): TLS for clients that ask (sslmode)")
    parser.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM)")
    parser.add_argument("--tls-required", action="store_true", help="refuse clients that do not use TLS")
    parser.add_argument("--metrics-port", type=int, default=0, help="Prometheus metrics port (default: a free one; -1: none)")
    parser.add_argument("--max-connections", type=int, default=100, help="clients served at once (default 100)")
    parser.add_argument("--authentication-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="a client that has not connected and authenticated by then is let go (default 60, as "
                             "PostgreSQL's authentication_timeout)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each connection's failures with tracebacks")
    return parser


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.max_connections < 1:
        parser.error(f"--max-connections must be at least 1, got {args.max_connections}")
    if not args.authentication_timeout > 0:
        parser.error(f"--authentication-timeout must be more than 0 seconds, got {args.authentication_timeout}")
    for flag, port in (("--port", args.port), ("--metrics-port", args.metrics_port)):
        if not (0 <= port <= 65535 or (flag == "--metrics-port" and port == -1)):
            parser.error(f"{flag} must be a port number from 0 to 65535, got {port}")
    from shell.config import parse_defines
    from shell.gateway.server import GatewayConfig, GatewayError, GatewayServer

    password = os.environ.get(PASSWORD_VARIABLE) or None
    if args.password_file:
        try:
            password = Path(args.password_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            print(f"streamshell gateway: cannot read the password file {args.password_file}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not password:
            print(f"streamshell gateway: the password file {args.password_file} is empty", file=sys.stderr)
            return EXIT_USAGE
    home = Path(args.catalog).expanduser() if args.catalog else default_home()
    settings = parse_defines(parser, args.defines)
    from shell.config import read_config_file

    if MAX_ROWS_SETTING not in settings and MAX_ROWS_SETTING not in read_config_file(home / "config.properties", lambda w: None):
        settings[MAX_ROWS_SETTING] = GATEWAY_MAX_ROWS  # a client takes the whole result, or an error (results.py)
    config = GatewayConfig(
        home=home,
        host=args.host, port=args.port, master=args.master, settings=settings,
        password=password, require_password=args.require_password,
        tls_cert=Path(args.tls_cert) if args.tls_cert else None, tls_key=Path(args.tls_key) if args.tls_key else None,
        tls_required=args.tls_required, metrics_port=None if args.metrics_port < 0 else args.metrics_port,
        max_connections=args.max_connections, authentication_timeout_s=args.authentication_timeout,
        verbose=args.verbose,
    )  # fmt: skip
    logging.basicConfig(level=logging.WARNING if args.verbose else logging.CRITICAL, stream=sys.stderr,
                        format="streamshell gateway: %(message)s")
    try:
        server = GatewayServer(config)
        server.start()
    except GatewayError as exc:
        print(f"streamshell gateway: {exc}", file=sys.stderr)
        return EXIT_USAGE
    auth = "password (SCRAM-SHA-256)" if server.password_needed else "trust (loopback)"
    tls = ", TLS" + (" required" if config.tls_required else " offered") if server.tls else ""
    metrics = f"; metrics at {server.metrics_url}" if server.metrics_url else ""
    print(f"streamshell gateway: listening on {config.host}:{server.port} ({auth}{tls}); home {config.home}{metrics}",
          flush=True)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, name="gateway-accept", daemon=True).start()
    stop.wait()
    print("streamshell gateway: stopping (detached jobs keep running)", file=sys.stderr, flush=True)
    server.shutdown()
    return EXIT_OK
