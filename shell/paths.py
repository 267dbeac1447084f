"""Where streamshell keeps things on disk.

Two places: the user's home for the shell (catalog, history, job checkpoints, logs; `--catalog DIR` moves it)
and a cache for downloaded JVM artifacts and local broker data, shared by every checkout on the machine.
Keeping the rules here means every module agrees on them.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path


def cache_dir() -> Path:
    """The download and broker-data cache (`$STREAMSHELL_CACHE`, default `~/.cache/streamshell`)."""
    return Path(os.environ.get("STREAMSHELL_CACHE") or Path.home() / ".cache" / "streamshell")


def default_home() -> Path:
    """The shell's own state directory (`$STREAMSHELL_HOME`, default `~/.streamshell`)."""
    return Path(os.environ.get("STREAMSHELL_HOME") or Path.home() / ".streamshell")


def jvm_bundle_jars(bundle: str) -> list[str]:
    """The jars that `scripts/jvm-deps` resolved for one bundle, sorted; empty if it never ran."""
    return sorted(glob.glob(str(cache_dir() / "jvm" / bundle / "*.jar")))
