"""Spark settings that swap Hadoop's local file system for one that starts no process per file.

Why it exists: without Hadoop's native library (no pip or Maven package ships it), Hadoop's local file system runs
`chmod` for every file it creates and `readlink` for every link status it reads, and `FileContext` reads one for
both sides of each rename. A streaming job writes a few small files per micro-batch (its offset and commit logs,
each state store's changelog file, their checksum files), each under a temporary name then renamed, so a job of the
user count started 54 processes a second, and those were most of each state store's commit and of the two logs'
writes: 60-180 ms and ~40 ms of a ~770 ms micro-batch (docs/changelog-engine.md, "Latency"). jvm/localfs holds
four small Java classes, built by `make setup` (scripts/jvm-deps localfs), that do the same through java.nio: the
same files, bytes, checksums and permissions.

The jar is always first on the driver's class path when it was built: the driver's class-data archive
(engine/cds.py) was written with it there, and the JVM uses an archive only on the class path it was written with.
Hadoop is told to use the classes only when every executor runs on this machine (their class path gets the jar by
its path here): a remote cluster keeps its checkpoints on a shared file system (HDFS, S3), which this does not
touch. A user who sets `spark.hadoop.fs.file.impl` (or the FileContext one) keeps their choice.
"""

from __future__ import annotations

import os

from shell.paths import jvm_bundle_jars

FILE_SYSTEM = "dev.streamshell.fs.NoForkLocalFileSystem"  # fs.file.impl: Hadoop's FileSystem API
ABSTRACT_FILE_SYSTEM = "dev.streamshell.fs.NoForkLocalFs"  # fs.AbstractFileSystem.file.impl: FileContext's
IMPLEMENTATIONS = {"spark.hadoop.fs.file.impl": FILE_SYSTEM, "spark.hadoop.fs.AbstractFileSystem.file.impl": ABSTRACT_FILE_SYSTEM}
DRIVER_PATH, EXECUTOR_PATH = "spark.driver.extraClassPath", "spark.executor.extraClassPath"


def jars() -> list[str]:
    """The built jar (empty when `scripts/jvm-deps localfs` never ran: Spark then uses Hadoop's own)."""
    return jvm_bundle_jars("localfs")


def settings(user_conf: dict[str, str], executors_here: bool) -> dict[str, str]:
    """The Spark settings for the no-fork local file system: the jar before the user's own class paths, and, when
    `executors_here`, Hadoop told to use it unless the user chose a file system themselves. Empty without the jar."""
    built = jars()
    if not built:
        return {}

    def class_path(key: str) -> str:
        return os.pathsep.join([*built, *([user_conf[key]] if user_conf.get(key) else [])])

    conf = {DRIVER_PATH: class_path(DRIVER_PATH)}
    if executors_here and not any(key in user_conf for key in IMPLEMENTATIONS):
        conf[EXECUTOR_PATH] = class_path(EXECUTOR_PATH)
        conf.update(IMPLEMENTATIONS)
    return conf
