"""What each of Flink's documented configuration keys does here: carried out under our name, or of no effect, and why.

Why it exists: a Flink user's first act is to run their own init file (`SET 'table.exec.mini-batch.enabled' =
'true'; ...`) or config file. A key streamshell carries out is a setting of shell/config.py (some under Flink's
old or other name: `ALIASES`); every other key Flink documents (shell/flink_keys.py, read from Flink's own jars)
is taken with a one-line notice saying why it has no effect here, never refused as unknown. A key Flink does not
document stays unknown, so a typo is still caught and a close key suggested.
"""

from __future__ import annotations

from shell.flink_keys import KEYS

# Flink keys that mean one of our settings (besides the old names shell/flink_keys.py maps to a current key)
OTHER_NAMES = {"table.exec.resource.default-parallelism": "parallelism.default"}

CLUSTER = "it configures Flink's cluster processes; Spark's are configured with spark.* keys"
# (key or prefix, why it has no effect here); the longest match wins
NO_EFFECT: tuple[tuple[str, str], ...] = (
    ("table.exec.source.idle-timeout", "a Spark watermark is taken over the rows of every partition a micro-batch"
     " reads, so an idle partition never holds it back"),
    ("table.exec.mini-batch.", "every job runs in micro-batches (a batch's rows meet the state once per key)"),
    ("table.exec.deduplicate.mini-batch.", "every job runs in micro-batches"),
    ("table.exec.sink.", "it tunes Flink's sink operators; a sink here writes each micro-batch as"
     " docs/reference/connectors.md says"),
    ("table.exec.", "it tunes an operator of Flink's runtime"),
    ("table.optimizer.", "it tunes Flink's optimizer; Spark plans each query itself"),
    ("table.dynamic-table-options.enabled", "query hints (/*+ OPTIONS(...) */) are refused here, with the"
     " statement to use instead"),
    ("table.", "it configures a part of Flink's table environment that streamshell does not have"),
    ("execution.checkpointing.", "Spark checkpoints every micro-batch of a job in the job's folder under the home"
     " (execution.checkpointing.interval spaces the micro-batches)"),
    ("execution.state-recovery.", "a job resumes from its folder under the home: RESUME JOB, or"
     " execution.savepoint.path for the next INSERT (docs/jobs.md)"),
    ("execution.savepoint", "a job resumes from its folder under the home: RESUME JOB, or execution.savepoint.path"
     " for the next INSERT (docs/jobs.md)"),
    ("execution.", "it configures Flink's job execution"),
    ("savepoints.", "STOP JOB ... WITH SAVEPOINT keeps a job's state in its folder under the home"),
    ("state.checkpoint", "Spark checkpoints every micro-batch of a job in the job's folder under the home"),
    ("state.savepoints.", "STOP JOB ... WITH SAVEPOINT keeps a job's state in its folder under the home"),
    ("state.", "Spark keeps a job's state in RocksDB (its state store), checkpointed with each micro-batch"),
    ("pipeline.auto-watermark-interval", "the watermark moves once per micro-batch"),
    ("pipeline.jars", "Spark takes extra jars from spark.jars"),
    ("pipeline.classpaths", "Spark takes extra jars from spark.jars"),
    ("pipeline.", "it configures Flink's job graph"),
    ("python.executable", "user functions run in PySpark's workers, with the shell's own Python"),
    ("python.client.executable", "user functions run in PySpark's workers, with the shell's own Python"),
    ("python.", "it configures Flink's Python runtime; user functions run in PySpark's workers (python.files ships"
     " their modules)"),
    ("sql-client.display.", "a display option of Flink's SQL client that this shell does not have"),
    ("restart-strategy.failure-rate.", "the failure-rate strategy is not offered: restart-strategy.type is"
     " fixed-delay or exponential-delay"),
    ("sql-gateway.", "Flink's SQL gateway: `streamshell gateway` speaks the PostgreSQL protocol instead"),
    ("materialized-table.", "Flink's materialized tables are not offered"),
    ("metrics.", "it configures Flink's metric reporters; a job here serves Prometheus metrics (docs/jobs.md)"),
    ("traces.", "it configures Flink's trace reporters"),
    ("", CLUSTER),
)


def canonical(key: str) -> str:
    """Our name for `key`: the setting a Flink key (an old name, or another) means here; else `key` itself."""
    if key in OTHER_NAMES:
        return OTHER_NAMES[key]
    return KEYS.get(key) or key


def no_effect(key: str) -> str | None:
    """Why a documented Flink key has no effect here, or None for any other key."""
    if key not in KEYS:
        return None
    current = KEYS[key] or key  # an old name is judged by the key it became
    return max((p for p in NO_EFFECT if current.startswith(p[0])), key=lambda p: len(p[0]))[1]


def notice(key: str) -> str | None:
    """The line SET and the config file say of a key that has no effect here."""
    why = no_effect(key)
    return None if why is None else f"'{key}' is a Flink setting with no effect here: {why}"
