"""Row numbers at a rate, for a bounded `datagen` table that names its `rows-per-second`.

Why it exists: in Flink, a datagen table with both `number-of-rows` and `rows-per-second` emits its rows at that
rate and then ends, so a query over it changes while you watch and then finishes. Spark has no such source: its
`rate` source paces rows but never ends, and its `rate-micro-batch` source ends under Trigger.AvailableNow (how
a bounded query runs) but gives the whole range at once. This Python streaming source gives the row numbers
0..N (N is the end-of-input row, see datagen.py) as they fall due at the rate, counted on the driver's clock;
datagen.py computes the columns from them with the same Spark expressions as for its other sources.

- Offsets are `{"next": n}`: rows 0..n-1 were given. A restarted job starts again from its checkpoint's offset,
  at the same rate from there.
- Under Trigger.AvailableNow, Spark ends the query at the first micro-batch without new rows, so `latestOffset`
  waits until at least one more row is due (at most 1/rate seconds); under a processing-time trigger (the
  table read beside an unbounded one) it returns what is due, possibly nothing.
- Rows that fell due while a micro-batch ran are given at most a second's worth at a time (Flink's datagen paces
  with a rate limiter that saves up at most a second): after Spark's slow first batch the query does not jump.
- Row i's `timestamp` is the table's start plus i/rate seconds, whatever the clock says when it is read: event
  times advance at the rate and are the same when a batch is read again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow
from pyspark.sql.types import LongType, StructField, StructType, TimestampType

if TYPE_CHECKING:
    import pyarrow as pa

SHORT_NAME = "streamshell-paced-rows"
SCHEMA = StructType([StructField("value", LongType()), StructField("timestamp", TimestampType())])


@dataclass
class RowRange(InputPartition):
    """Rows `start` to `end` - 1 of one micro-batch."""

    start: int
    end: int


@dataclass(frozen=True)
class Pace:
    rows: int  # row numbers 0..rows-1 (the last one is the end-of-input row)
    per_second: float
    start_millis: int  # event time of row 0
    partitions: int


def parse_options(options: dict) -> Pace:
    return Pace(int(options["rows"]), float(options["rowsPerSecond"]), int(options["startTimestamp"]),
                max(1, int(options.get("numPartitions", "1"))))


class PacedRowsDataSource(DataSource):
    """`streamshell-paced-rows`: options rows, rowsPerSecond, startTimestamp (epoch ms), numPartitions."""

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    def schema(self) -> StructType:
        return SCHEMA

    def streamReader(self, schema: StructType) -> "PacedRowsReader":
        return PacedRowsReader(parse_options(self.options))


class PacedRowsReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans each micro-batch's range on the driver; the workers turn a range into Arrow rows."""

    def __init__(self, pace: Pace, clock=time.monotonic, sleep=time.sleep):
        self.pace = pace
        self._clock, self._sleep = clock, sleep
        self._origin: float | None = None  # the clock's reading at which row 0 fell due
        self._wait = False  # Trigger.AvailableNow: never answer "no new rows" before the end

    def __getstate__(self):  # only the pace travels to the workers that call read()
        return {"pace": self.pace}

    def __setstate__(self, state):
        self.__init__(state["pace"])

    def initialOffset(self) -> dict:
        return {"next": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        self._wait = True

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        given = int(start["next"])
        if given >= self.pace.rows:
            return start
        if self._origin is None:  # first call, or a restart: rows already given are not owed again
            self._origin = self._clock() - given / self.pace.per_second
        due = self._due()
        most = given + max(1, int(self.pace.per_second))
        if due > most:  # a batch took longer than a second: a second's rows now, and the pace goes on from here
            due = most
            self._origin = self._clock() - (most - 1) / self.pace.per_second
        if due <= given and self._wait:
            self._sleep(max(0.0, self._origin + given / self.pace.per_second - self._clock()))
            due = max(self._due(), given + 1)
        return {"next": min(self.pace.rows, max(due, given))}

    def _due(self) -> int:
        return int((self._clock() - self._origin) * self.pace.per_second) + 1

    def partitions(self, start: dict, end: dict) -> list[RowRange]:
        return split(int(start["next"]), int(end["next"]), self.pace.partitions)

    def commit(self, end: dict) -> None:
        """Nothing to do: the offsets live in Spark's checkpoint."""

    def read(self, partition: RowRange) -> Iterator["pa.RecordBatch"]:
        yield rows(self.pace, partition.start, partition.end)


def split(start: int, end: int, parts: int) -> list[RowRange]:
    """Rows start..end-1 in up to `parts` consecutive ranges of nearly equal size (none empty)."""
    count = end - start
    parts = max(1, min(parts, count))
    bounds = [start + count * i // parts for i in range(parts + 1)]
    return [RowRange(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def rows(pace: Pace, start: int, end: int) -> "pa.RecordBatch":
    """Rows start..end-1 as Arrow: the row number and its event time (start_millis + i / rate, in microseconds)."""
    import pyarrow as pa

    numbers = pa.array(range(start, end), type=pa.int64())
    micros = [pace.start_millis * 1000 + int(i * 1_000_000 / pace.per_second) for i in range(start, end)]
    times = pa.array(micros, type=pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    return pa.RecordBatch.from_arrays([numbers, times], names=["value", "timestamp"])


def register(spark) -> None:
    """Register the source with `spark` (as the Pulsar source does: the session active on this thread too)."""
    spark.dataSource.register(PacedRowsDataSource)
    spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)
