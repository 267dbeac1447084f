"""Spark settings that swap Hadoop's local file system for one that starts no process per file.

Why it exists: without Hadoop's native library (no pip or Maven package ships it), Hadoop's local file system runs
`chmod` for every file it creates and `readlink` for every status it reads, renames included. A streaming job writes
a few small files per micro-batch (its offset and commit logs, each state store's changelog file, their checksum
files), so a job of the user count started 54 processes a second, and those forks were most of each state store's
commit and of the two logs' writes: 60-180 ms and ~40 ms of a ~770 ms micro-batch (docs/changelog-engine.md,
"Latency"). jvm/localfs holds four small Java classes, built by `make setup` (scripts/jvm-deps localfs), that do
the same through java.nio: the same files, bytes, checksums and permissions.

They are put on the driver's class path (and, for executors on this machine, theirs) only when the jar was built
and every executor runs here: a remote cluster keeps its checkpoints on a shared file system (HDFS, S3), which this
does not touch, and its executors could not load the class from a path on this machine.
"""

from __future__ import annotations

import os

from shell.paths import jvm_bundle_jars

FILE_SYSTEM = "dev.streamshell.fs.NoForkLocalFileSystem"  # fs.file.impl: Hadoop's FileSystem API
ABSTRACT_FILE_SYSTEM = "dev.streamshell.fs.NoForkLocalFs"  # fs.AbstractFileSystem.file.impl: FileContext's
CLASS_PATHS = ("spark.driver.extraClassPath", "spark.executor.extraClassPath")


def jars() -> list[str]:
    """The built jar (empty when `scripts/jvm-deps localfs` never ran: Spark then uses Hadoop's own)."""
    return jvm_bundle_jars("localfs")


def settings(user_conf: dict[str, str]) -> dict[str, str]:
    """The Spark settings that use the no-fork local file system, with the user's own class paths kept after the
    jar; empty when the jar is missing."""
    built = jars()
    if not built:
        return {}
    conf = {"spark.hadoop.fs.file.impl": FILE_SYSTEM, "spark.hadoop.fs.AbstractFileSystem.file.impl": ABSTRACT_FILE_SYSTEM}
    for key in CLASS_PATHS:
        conf[key] = os.pathsep.join([*built, *([user_conf[key]] if user_conf.get(key) else [])])
    return conf
