"""Writing one benchmark's section of docs/benchmarks.md without touching the others.

Each benchmark owns the text between `<!-- name:start -->` and `<!-- name:end -->`; a run with `--write`
replaces exactly that, or appends the section when the file does not have it yet.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(name: str, body: str, doc: Path = DOC) -> None:
    """Put `body` (markdown, without the markers) between the markers of section `name` in `doc`."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.strip()}\n{end}"
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")


def machine() -> str:
    """This machine in one line (cores, memory, architecture), for the heading of a benchmark section."""
    lines = Path("/proc/meminfo").read_text().splitlines()
    mem_kb = next((int(line.split()[1]) for line in lines if line.startswith("MemTotal")), 0)
    return f"{len(os.sched_getaffinity(0))} CPUs (nproc), {mem_kb / 1024 / 1024:.1f} GiB memory, {platform.machine()} Linux"
