"""One vocabulary for how rows change: the kinds of a row, of an input table, and of a changelog plan's result.

Why it exists: "append", "upsert" and "+I" are each one idea that the connectors, the planner, the engine, the
formats and the renderers all speak of. Spelled as string literals in each, two `UPSERT`s meant two different
things (an upsert table, and a result of upserts by key). Each is defined once here, as a `StrEnum`: a member
is its string (`RowKind.INSERT == "+I"`), so it goes into Spark expressions, JSON and pickled stage specs as is.
"""

from __future__ import annotations

from enum import StrEnum


class RowKind(StrEnum):
    """The kind of one change of a result or a changelog (Flink's RowKind, in its short form)."""

    INSERT = "+I"
    UPDATE_BEFORE = "-U"  # the old row of an update; an upsert sink drops it
    UPDATE_AFTER = "+U"
    DELETE = "-D"


class InputKind(StrEnum):
    """How a table's rows change, as its connector and format make them."""

    APPEND = "append"  # every message is an inserted row
    CHANGELOG = "changelog"  # rows carry their own RowKind (debezium-json); or a stage's weighted rows
    UPSERT = "upsert"  # a message is the new version of its key's row; a null value (tombstone) deletes it


class ResultKind(StrEnum):
    """What the rows of a changelog plan's result are."""

    RETRACT = "retract"  # rows with a weight `__w`: +n adds n copies of the row, -n takes n copies away
    UPSERTS = "upserts"  # the latest row of each key, with `__count` and `__having` saying whether it still exists
