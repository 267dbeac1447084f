"""What running a plan needs from the session, and what building it gives: the query's DataFrame and its sides.

Why it exists: the engine's modules that build a plan (engine/path_parts.py), keep its bad records
(engine/dead_letter_queries.py) and run it (engine/query.py) all pass these two along; here they depend on none
of those modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from shell.connectors.base import ConnectorContext, Lookup
from shell.engine import state_layout
from shell.engine.batch_dead_letters import CountedTable, QueryHandle, keep_bad_records

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from shell.engine.path_parts import PerBatch


@dataclass
class RunContext:
    """What running a plan needs from the session."""

    spark: "SparkSession"
    work_dir: Path
    trigger_ms: int
    errors_dir: Path | None = None
    errors_trigger_ms: int = 10_000  # the dead-letter queries' interval (in micro-batches never shorter than trigger_ms)
    print_stream: TextIO | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)
    # the changelog path's keyed stage: key buckets and sub-buckets per bucket
    layout: tuple[int, int] = (state_layout.DEFAULT_BUCKETS, state_layout.DEFAULT_SUB_BUCKETS)
    local_copies: bool = True  # the keyed stage reads its sub-buckets from local copies (engine/stage_cache.py)
    jvm_stages: bool = True  # keyed join stages run on the JVM (jvm/stages), when that is built
    net_changes: bool = True  # a JVM keyed join nets its changes per key of the upsert sink it writes to
    state_ttl_ms: int = 0  # `table.exec.state.ttl`: a JVM keyed join's rows expire when not written for this long
    max_rows_per_batch: int = 10_000  # the most rows of one micro-batch a SELECT brings to the driver
    real_time: bool = False  # `execution.latency` = 'low': Spark's real-time mode (engine/real_time.py)

    def connector_context(self, session: "SparkSession") -> ConnectorContext:
        ctx = ConnectorContext(session, self.work_dir, self.errors_dir)
        if self.print_stream is not None:
            ctx.print_stream = self.print_stream
        return ctx


@dataclass
class Built:
    """A plan made into DataFrames: the query, and the records of its sources that did not decode."""

    frame: "DataFrame"
    ctx: ConnectorContext
    dead_letters: list[tuple[str, "DataFrame", str]] = field(default_factory=list)  # (table, frame, folder)
    per_batch: "PerBatch | None" = None  # set when one query both keeps the bad records and runs the plan
    counted: list[CountedTable] = field(default_factory=list)  # tables whose bad records the query keeps itself
    handle: QueryHandle = field(default_factory=QueryHandle)
    lookups: list[Lookup] = field(default_factory=list)  # the static sides of lookup joins (their caches expire)
    netted: bool = False  # the changelog path's stage gives one change per key of the upsert sink it writes to

    def keeping_bad_records(self, write, owner: str):  # noqa: ANN001, ANN201 - foreachBatch functions
        """`write` followed by writing aside the batch's bad records of the tables the query counts, then by each
        lookup join's turn to let its cached copy expire (read again by the next micro-batch)."""
        if not self.counted and not self.lookups:
            return write

        def write_and_keep(batch: "DataFrame", batch_id: int) -> None:
            write(batch, batch_id)
            if self.counted:
                keep_bad_records(self.handle, self.counted, self.ctx, batch_id, owner)
            for lookup in self.lookups:
                lookup.after_batch()

        return write_and_keep

    def close_lookups(self) -> None:
        for lookup in self.lookups:
            lookup.close()
