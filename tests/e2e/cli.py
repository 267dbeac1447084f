"""Running the real `streamshell` command as a user would, for the end-to-end tests."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def streamshell(*args: str, home: Path, stdin: str | None = None, timeout: float = 300) -> Run:
    """Run `python -m shell ARGS` with its own home, stdin not a terminal; return exit code and output."""
    env = {**os.environ, "STREAMSHELL_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-m", "shell", *args],
        cwd=ROOT,
        env=env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
