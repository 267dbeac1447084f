"""Local copies of the keyed stage's sub-buckets: a read cache, in files on the executor, in front of Spark's state API.

Why it exists: a call of the keyed stage (`stage_operators.SubBucketStage`) reads every sub-bucket its micro-batch
touches from Spark's state store, one round trip to the JVM each, and the state API hands a stored value back
slowly (a get of the join's ~65 KB sub-bucket took ~1 ms; the gets were about a third of a call at 1K changes/s:
docs/changelog-engine.md, "Local copies of the sub-buckets"). A call still writes every sub-bucket it changes to
the state store; it also writes it to a local file, and a later call reads that file instead when the file holds
the version the state store holds.

Spark's state store stays the only source of truth:
- each sub-bucket's version (a random number, new at every write) is kept in the state store itself, in one
  entry per bucket beside its sub-buckets, so it is committed, rolled back and restored with them;
- a file is named after its bucket, sub-bucket and version, and written once, by the one call that made that
  version. A file that is missing or incomplete (another executor ran the bucket, a restart, a failed write) is
  a miss: the call reads the state store, as it would without the copies.

The files live on each executor under Spark's directory for the application (`SparkFiles`' root, removed when the
application ends), one folder per job, removed when the job stops (`remove`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
from array import array
from pathlib import Path

VERSIONS = -1  # the sub-bucket id under which a bucket keeps its sub-buckets' versions
FOLDER = "stage-copies"


class _Miss:
    def __repr__(self) -> str:
        return "MISS"


MISS = _Miss()  # `read`'s answer when the state store must be read


def scope_of(work_dir: Path) -> str:
    """A job's folder name: its directory's, so a restarted job finds the copies it wrote before."""
    return hashlib.sha1(str(Path(work_dir).resolve()).encode()).hexdigest()[:16]


def folder(scope: str) -> Path:
    """The job's folder on this machine (on an executor, inside the folder Spark made for the application)."""
    from pyspark import SparkFiles

    return Path(SparkFiles.getRootDirectory()) / FOLDER / scope


def remove(work_dir: Path) -> None:
    """The copies of the job in `work_dir` on this machine (the driver: in local mode, where its executors wrote
    them) are deleted."""
    try:
        shutil.rmtree(folder(scope_of(work_dir)), ignore_errors=True)
    except Exception:  # noqa: BLE001 - no Spark context any more: nothing of this application is left to delete
        pass


class Copies:
    """The local copies of one bucket's sub-buckets, for one call of the keyed stage.

    `versions` is what the bucket's `VERSIONS` entry in the state store holds (None: nothing yet). A value is
    what the state store holds for a sub-bucket: a tuple with one blob (or None) per input, or None when the
    sub-bucket has no rows."""

    def __init__(self, directory: Path, bucket: int, versions: bytes | None):
        self.directory = directory
        self.bucket = bucket
        self._made = False  # the folder exists: made by this call's first write
        self.known = versions is not None  # the state holds versions: a sub-bucket without one was never written
        pairs = array("q", versions or b"")  # sub-bucket, version, sub-bucket, version, ...
        self.versions: dict[int, int] = dict(zip(pairs[0::2], pairs[1::2]))

    def _path(self, sub: int, version: int) -> Path:
        return self.directory / f"{self.bucket}.{sub}.{version:x}"

    def read(self, sub: int) -> tuple | None | _Miss:
        """The sub-bucket's value from its local copy, or MISS."""
        version = self.versions.get(sub)
        if version is None:
            return MISS
        try:
            data = self._path(sub, version).read_bytes()
        except OSError:
            return MISS
        return _decode(data)

    def write(self, sub: int, value: tuple | None) -> None:
        """The sub-bucket's new value, written to the state store by the caller, gets a new version and a copy.

        A copy that cannot be written is left out (the version still changes, so the old copy is never read)."""
        old = self.versions.get(sub)
        version = int.from_bytes(os.urandom(8), "little") >> 1
        self.versions[sub] = version
        path = self._path(sub, version)
        try:
            if not self._made:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._made = True
            with open(path, "wb") as f:
                f.writelines(_encode(value))
        except OSError:
            _delete(path)
        if old is not None:
            _delete(self._path(sub, old))

    def forget(self, sub: int) -> None:
        """The sub-bucket's entry is gone from the state store: its copy and version go too."""
        version = self.versions.pop(sub, None)
        if version is not None:
            _delete(self._path(sub, version))

    def state_value(self, inputs: int) -> tuple:
        """The bucket's `VERSIONS` entry, as the state store keeps it (the first input's blob field)."""
        blob = array("q", [n for pair in self.versions.items() for n in pair]).tobytes()
        return (blob,) + (None,) * (inputs - 1)


def _delete(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


# a copy: the number of blobs (-1: the sub-bucket has no rows), each blob's length (-1: None), the blobs
_COUNT = struct.Struct("<q")


def _encode(value: tuple | None) -> list[bytes]:
    if value is None:
        return [_COUNT.pack(-1)]
    lengths = [-1 if blob is None else len(blob) for blob in value]
    return [_COUNT.pack(len(value)), struct.pack(f"<{len(value)}q", *lengths), *(b for b in value if b is not None)]


def _decode(data: bytes) -> tuple | None | _Miss:
    if len(data) < _COUNT.size:
        return MISS
    (count,) = _COUNT.unpack_from(data)
    if count < 0:
        return None if len(data) == _COUNT.size else MISS
    at = _COUNT.size + 8 * count
    if len(data) < at:
        return MISS
    lengths = struct.unpack_from(f"<{count}q", data, _COUNT.size)
    if at + sum(n for n in lengths if n > 0) != len(data):
        return MISS  # cut short (a full disk)
    value = []
    for n in lengths:
        value.append(None if n < 0 else data[at : at + n])
        at += max(n, 0)
    return tuple(value)
