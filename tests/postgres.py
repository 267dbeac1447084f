"""A real PostgreSQL server for the `jdbc` connector's tests: started by the test session itself, never mocked.

Why this exists: the jdbc connector's promises (a scan, a cached lookup that sees changes after its ttl, upserts
that converge) only mean something against a real database. The `postgres` fixture makes a throwaway cluster
with the machine's PostgreSQL binaries (`make setup` installs them: scripts/system-deps): `initdb` into a
temporary folder, the server on a free loopback port and a socket in the same folder, one database and one
user with a password (password authentication over TCP, as a user's Spark would connect), and stops and removes
it all when the session ends. `initdb` refuses to run as root, so as root every server command runs as the
`postgres` system user (which Debian's package creates), and the folder is made theirs.

`Postgres.sql` runs statements through `psql` over the socket (no Python driver needed) and returns the rows.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SYSTEM_USER = "postgres"  # who runs the server when the tests run as root
SUPERUSER = "postgres"
USER, PASSWORD, DATABASE = "shelluser", "s3cret-pg-pass", "shelldb"


def bin_dir() -> Path | None:
    """Where initdb, pg_ctl and psql are: on PATH, or Debian's /usr/lib/postgresql/<version>/bin (newest)."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(candidates[-1]).parent if candidates else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Postgres:
    """A running server: where it listens, its user and database, and a way to run SQL in it."""

    bin: Path
    folder: Path
    port: int
    host: str = "127.0.0.1"
    user: str = USER
    password: str = PASSWORD
    database: str = DATABASE
    as_user: list[str] = field(default_factory=list)  # the prefix that runs a command as the server's owner

    @property
    def url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self.as_user, *command], capture_output=True, text=True, timeout=120, check=check,
                              stdin=subprocess.DEVNULL)

    def sql(self, text: str, database: str | None = None, user: str | None = None) -> list[tuple[str, ...]]:
        """Run `text` (one or more statements) over the socket, as the test user (the database's owner) unless
        `user` says otherwise; the last statement's rows, each value as psql prints it (NULL as '')."""
        done = self.run(str(self.bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-F", "\t",
                        "-h", str(self.folder), "-p", str(self.port), "-U", user or self.user, "-d", database or self.database,
                        "-c", text, check=False)
        if done.returncode != 0:
            raise AssertionError(f"psql failed: {done.stderr.strip()}")
        return [tuple(line.split("\t")) for line in done.stdout.splitlines() if line]

    def start(self) -> None:
        done = self.run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w",
                        "-o", f"-p {self.port} -k {self.folder} -c listen_addresses={self.host}", "start", check=False)
        if done.returncode != 0:
            log = (self.folder / "server.log").read_text(errors="replace") if (self.folder / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip() or done.stdout.strip()}\n{log[-2000:]}")

    def stop(self) -> None:
        self.run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)


def start_postgres() -> Postgres:
    """initdb, start, and a database with a password user; raises with the reason when it cannot."""
    binaries = bin_dir()
    if binaries is None:
        raise RuntimeError("PostgreSQL's initdb is not installed: run `make setup` (scripts/system-deps)")
    folder = Path(tempfile.mkdtemp(prefix="streamshell-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            raise RuntimeError(f"running as root and there is no '{SYSTEM_USER}' user to run PostgreSQL") from None
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", SYSTEM_USER, "--"]
    folder.chmod(0o700)
    server = Postgres(binaries, folder, free_port(), as_user=as_user)
    init = server.run(str(binaries / "initdb"), "-D", str(server.data), "-U", SUPERUSER, "--auth-local=trust",
                      "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", check=False)
    if init.returncode != 0:
        raise RuntimeError(f"initdb failed: {init.stderr.strip()}")
    server.start()
    server.sql(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'", database="postgres", user=SUPERUSER)
    server.sql(f"CREATE DATABASE {DATABASE} OWNER {USER}", database="postgres", user=SUPERUSER)
    return server


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL for the session (see the module docstring), stopped and removed at its end."""
    try:
        server = start_postgres()
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
