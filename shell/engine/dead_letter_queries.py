"""The side queries that keep a job's bad records when the job cannot keep them itself.

Why it exists: a job keeps its sources' bad records in its own micro-batches where it can read a batch again by
offset range (engine/batch_dead_letters.py); for the other sources, one small streaming query each reads the
source beside the job and writes its bad records as JSON lines. Starting them, and their trigger, is here.
"""

from __future__ import annotations

from shell.engine.bad_records import DeadLetterQuery
from shell.engine.run_context import Built, RunContext
from shell.planner.plan import Plan


def start_dead_letters(run: RunContext, plan: Plan, built: Built, owner: str) -> list[DeadLetterQuery]:
    """One small streaming query per source whose bad records the job cannot keep itself (batch_dead_letters:
    no read by offset range, or a topic two tables share), writing them as JSON lines beside the catalog.

    It reads the source again beside the job, so it takes a micro-batch less often than the job
    (`table.exec.errors.interval`): on a busy machine its batches would otherwise hold the task slots the job's
    own batches wait for. One that cannot start (its folder cannot be written) does not stop the job: it is
    returned failed, and the job says so (DEGRADED in SHOW JOBS, a note on a SELECT's status line)."""
    queries = []
    for table, frame, folder in built.dead_letters:
        try:
            query = (
                frame.writeStream.format("json")
                .option("path", f"{folder}/{owner}")
                .option("checkpointLocation", str(run.work_dir / "dead-letters" / table.lower()))
                .trigger(**dead_letter_trigger(plan, run))
                .start()
            )
        except Exception as exc:  # noqa: BLE001 - the job runs on without its bad records, and says so
            queries.append(DeadLetterQuery(table, None, exc))
            continue
        queries.append(DeadLetterQuery(table, query))
    return queries


def dead_letter_trigger(plan: Plan, run: RunContext) -> dict:
    """A dead-letter query's trigger: to the input's end for a bounded job, else every `errors_trigger_ms` (and
    not more often than the job's micro-batches; a real-time job's checkpoint interval is the length of its
    long-running batches, which says nothing of how often its bad records should be looked for)."""
    every = run.errors_trigger_ms if run.real_time else max(run.trigger_ms, run.errors_trigger_ms)
    return trigger_for(plan, every)


def trigger_for(plan: Plan, trigger_ms: int) -> dict:
    """Bounded inputs are read to their end and the query stops; unbounded ones run a batch per interval."""
    return {"availableNow": True} if plan.bounded else {"processingTime": f"{trigger_ms} milliseconds"}


