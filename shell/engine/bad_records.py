"""Records that do not decode: kept aside with their bytes, position and reason, and the query goes on.

A topic can always hold a message that does not fit its table (a producer's bug, a schema change, garbage).
Flink either fails the job or, with `ignore-parse-errors`, drops the record without a trace. Neither helps the
person debugging the pipeline, so by default (`'errors.mode' = 'dead-letter'`) a bad record is written to a
folder next to the catalog, where `SHOW ERRORS FOR t` finds it, and counted. `'errors.mode' = 'fail'` stops the
query at the first bad record; `'errors.mode' = 'ignore'` (or the format's `ignore-parse-errors`) drops it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors.topic import POSITION, RAW_KEY, RAW_VALUE
from shell.formats.base import ERROR_COLUMN, computed_once

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

CHECKED = "__checked"  # the reason a record is bad, computed once before the split
IGNORE_FLAGS = ("ignore-parse-errors",)  # a format option ending like this drops bad records, as in Flink


def errors_mode(table: TableDef) -> str:
    for key, value in table.options.items():
        if key.endswith(IGNORE_FLAGS) and value.strip().lower() == "true":
            return "ignore"
    return table.options.get("errors.mode", "dead-letter")


def dead_letter_dir(table: TableDef, errors_root: Path) -> Path:
    custom = table.options.get("errors.path")
    return Path(custom) if custom else errors_root / table.name.lower()


def split(frame: "DataFrame", table: TableDef) -> tuple["DataFrame", "DataFrame | None"]:
    """(good rows without the bookkeeping columns, bad records or None) of a decoded frame."""
    from pyspark.sql import functions as F

    # the reason once: otherwise the filters below and the projection after them each inline the whole decode check
    frame = frame.withColumn(CHECKED, computed_once(F.col(ERROR_COLUMN).alias("error")))
    bad = F.col(CHECKED).getField("error").isNotNull()
    mode = errors_mode(table)
    dead = None
    if mode == "fail":
        message = F.concat(F.lit(f"table {table.name}: a record does not decode at "), F.col(POSITION), F.lit(": "), F.col(ERROR_COLUMN))
        good = frame.where(F.when(bad, F.raise_error(message)).otherwise(F.lit(True)))
    else:
        good = frame.where(~bad)
        if mode == "dead-letter":
            dead = frame.where(bad).select(
                F.col(POSITION).alias("position"),
                F.col(ERROR_COLUMN).alias("error"),
                F.base64(F.col(RAW_KEY)).alias("key_base64"),
                F.base64(F.col(RAW_VALUE)).alias("value_base64"),
                F.current_timestamp().alias("seen_at"),
            )
    return good.drop(ERROR_COLUMN, RAW_KEY, RAW_VALUE, POSITION, CHECKED), dead


def with_bad_count(frame: "DataFrame", observation) -> "DataFrame":  # noqa: ANN001 - a name or an Observation
    """`frame` (decoded rows) with its records that did not decode counted, as the observed metric `bad`."""
    from pyspark.sql import functions as F

    return frame.observe(observation, F.count(F.col(ERROR_COLUMN)).alias("bad"))


def write_batch(dead: "DataFrame | None", folder: str, owner: str, batch_id: int, known_bad: bool = False) -> None:
    """Write one micro-batch's bad records into a folder of their own, `folder/owner/batch-N`: a batch replayed
    after a failure overwrites its own, so none are doubled. Nothing is written for a batch without any (checked
    first, unless `known_bad` says there are some)."""
    if dead is None or (not known_bad and not dead.limit(1).count()):
        return
    dead.coalesce(1).write.mode("overwrite").json(f"{folder}/{owner}/batch-{batch_id:012d}")


@dataclass(frozen=True)
class DeadLetter:
    """One kept record, as SHOW ERRORS shows it."""

    seen_at: str
    position: str
    error: str
    key: str | None
    value: str | None


def read_dead_letters(folder: Path, limit: int | None = None) -> list[DeadLetter]:
    """The records kept in `folder` (JSON lines written by Spark), newest first."""
    import base64

    def text(data: str | None) -> str | None:
        if data is None:
            return None
        raw = base64.b64decode(data)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return "x'" + raw.hex() + "'"

    letters = []
    for path in folder.rglob("part-*.json") if folder.is_dir() else []:
        if "_temporary" in path.relative_to(folder).parts:
            continue  # a task's file that Spark has not committed yet: it moves out of here when it is
        try:
            content = path.read_text(encoding="utf-8")
        except FileNotFoundError:  # removed between the listing and the read (a batch written again)
            continue
        for line in content.splitlines():
            record = json.loads(line)
            letters.append(
                DeadLetter(
                    record.get("seen_at", ""), record.get("position", ""), record.get("error", ""),
                    text(record.get("key_base64")), text(record.get("value_base64")),
                )  # fmt: skip
            )
    letters.sort(key=lambda d: d.seen_at, reverse=True)
    return letters[:limit] if limit is not None else letters
