"""This package as one zip file, shipped to a Spark cluster's executors with the application.

Why it exists: on a cluster (`--master spark://...`, `k8s://...`) the Python workers run beside the executors, on
other machines, and they import this package: the Pulsar data source's readers and writers, the keyed stages'
pandas and Arrow functions and the sinks' Arrow functions are pickled by reference to their modules in `shell`.
A PYTHONPATH or an editable install only works on the machine that has them. Instead the session gives Spark a
zip of the package (`SparkContext.addPyFile`): Spark serves it from the driver, every executor fetches it, and
PySpark puts it first on each Python worker's path, so the workers run exactly the driver's code.

The zip is made from the package's files when a session on a cluster starts, and named after their digest in the
cache (`$STREAMSHELL_CACHE/pyfiles`): the same sources give the same file, made once; a changed source gives a new
one. It is never removed while a session may serve it (the driver serves the file from this path).
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import shell
from shell.paths import cache_dir

SKIPPED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")  # compiled files: rebuilt, or not importable from a zip


def package_root() -> Path:
    """The folder of the `shell` package this process imported (a source tree or site-packages)."""
    return Path(shell.__file__).resolve().parent


def package_files(root: Path) -> list[tuple[str, Path]]:
    """(name in the zip, file) for every file of the package, sorted; no caches, no compiled modules."""
    files = []
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if path.is_file() and "__pycache__" not in relative.parts and path.suffix not in SKIPPED_SUFFIXES:
            files.append(((Path(root.name) / relative).as_posix(), path))
    return sorted(files)


def package_zip(directory: Path | None = None) -> Path:
    """The zip of the package, made if this digest of its files has none yet; its path."""
    contents = [(name, path.read_bytes()) for name, path in package_files(package_root())]
    digest = hashlib.sha256()
    for name, data in contents:
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    directory = directory or cache_dir() / "pyfiles"
    target = directory / f"streamshell-{digest.hexdigest()[:20]}.zip"
    if target.is_file():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".{target.name}.{os.getpid()}.tmp"
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in contents:
                archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data,
                                 compress_type=zipfile.ZIP_DEFLATED)
        os.replace(partial, target)  # atomic: a session never ships a half-written zip
    finally:
        partial.unlink(missing_ok=True)
    return target
