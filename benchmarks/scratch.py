"""The temporary directories that hold a benchmark run's state, removed when the run ends.

Why this exists: a run's catalog homes, checkpoints and Spark event logs hold the jobs' state, from a few hundred
MB to 3 GB per run of the engine benchmarks. Left in the temporary directory, a few dozen runs filled the disk
(45 GB here), and a broker that starts on a full disk fails. A run's logs and results.json are small and are what
a reader asks for, so the benchmarks keep those and remove the state (the engine benchmarks keep it with
`--keep-state`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A new temporary directory, removed with everything in it when the block ends, however it ends."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        remove(path)


def remove(path: Path | None) -> None:
    """Remove a state directory; a part that cannot be removed is left, as the temporary directory's own
    cleanup would leave it."""
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
