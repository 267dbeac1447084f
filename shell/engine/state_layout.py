"""What a job keeps in its folder about how its state was built, so that a restart, RESUME JOB or a savepoint
reads that state as it was written: the key buckets and sub-buckets of its keyed stages, whether its keyed joins
run on the JVM or in Python (they keep different state), and its state TTL.

Why it exists: the settings that choose these may change between two runs of a job, but a key's bucket must not
move and a stage cannot read another kind's state; the first run's choices win, and this module is where they are
kept and read back (engine/path_parts.py asks it as a changelog query is built).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from shell.config import SETTINGS
from shell.errors import ExecutionError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# the defaults of the settings that choose the layout (a RunContext made without a session gets them too)
DEFAULT_BUCKETS = int(SETTINGS["table.exec.changelog.buckets"].default)
DEFAULT_SUB_BUCKETS = int(SETTINGS["table.exec.changelog.sub-buckets"].default)
BUCKETS_FILE = "changelog.buckets"  # in a job's directory: the bucket layout its state was built with
OPERATORS_FILE = "changelog.operators"  # in a job's directory: where its stages over one upsert table run
STATE_TTL_FILE = "state-ttl-ms"  # the job's state TTL as its keyed stage first ran (kept_state_ttl)

def kept_layout(job_dir: Path, requested: tuple[int, int]) -> tuple[int, int]:
    """The job's (buckets, sub-buckets): the ones its state was built with, kept in its directory (a key's bucket
    and sub-bucket must not move when the job restarts or resumes, even if the settings changed meanwhile), else
    `requested`."""
    kept = job_dir / BUCKETS_FILE
    if kept.is_file():
        parts = kept.read_text().split()
        if len(parts) != 2:  # one number: a bucket count from before sub-buckets, whose state this stage cannot read
            raise ExecutionError(
                f"the state in {job_dir} was built by an older keyed stage (no sub-buckets) and cannot be resumed",
                hint="start the job again without this savepoint; it rebuilds its state from its sources",
            )
        return int(parts[0]), int(parts[1])
    job_dir.mkdir(parents=True, exist_ok=True)
    kept.write_text(f"{requested[0]} {requested[1]}\n")
    return requested


def jvm_stages_loaded(session: "SparkSession", stage: str = "KeyedJoinStage") -> bool:
    """Whether the driver's JVM has jvm/stages' `stage` class: built by `make setup`, on `spark.jars` when this Spark
    started, and of this version (a jar from before the class was written has none)."""
    from py4j.java_gateway import JavaClass

    try:
        return isinstance(getattr(session._jvm.dev.streamshell.stages, stage), JavaClass)
    except Exception:  # noqa: BLE001 - no JVM to ask (a test's Spark-less context): not loaded
        return False


def kept_jvm_stages(job_dir: Path, requested: bool, loaded: bool) -> bool:
    """Whether the job's keyed join stages run on the JVM: as its state was first built (the JVM's stage and the
    Python one keep different state), else `requested`, when the JVM has the stage (`loaded`). A job whose state
    came before the choice was kept (a bucket layout and no choice) has the Python stage's."""
    kept = job_dir / OPERATORS_FILE
    if kept.is_file():
        jvm = kept.read_text().strip() == "jvm"
        if jvm and not loaded:
            raise ExecutionError(f"the state in {job_dir} was built by the JVM's keyed stage, which this Spark does "
                                 "not have", hint="build it: scripts/jvm-deps stages (make setup does), then start "
                                                  "the shell again")
        return jvm
    jvm = requested and loaded and not (job_dir / BUCKETS_FILE).is_file()
    job_dir.mkdir(parents=True, exist_ok=True)
    kept.write_text("jvm\n" if jvm else "python\n")
    return jvm


def kept_state_ttl(job_dir: Path, requested_ms: int, built_before: bool = False) -> int:
    """The job's state TTL (ms, 0 for none): as its keyed stage first ran, else `requested_ms`. A TTL needs Spark's
    processing-time mode, which a job's state cannot change between runs, so a job keeps its first; a job whose
    stages were built before TTLs were kept (`built_before`, no TTL kept) ran without one."""
    kept = job_dir / STATE_TTL_FILE
    if kept.is_file():
        try:
            return int(kept.read_text().strip() or 0)
        except ValueError:
            pass
    ttl = 0 if built_before else int(requested_ms)
    job_dir.mkdir(parents=True, exist_ok=True)
    kept.write_text(f"{ttl}\n")
    return ttl
