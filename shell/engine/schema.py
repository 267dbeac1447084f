"""The columns and Spark types a planned query produces, without running it.

Why it exists: CREATE TABLE ... AS SELECT declares its table with the query's result columns, as Flink does; only
Spark's analysis knows their types. The query is built over its sources (nothing is read) and dropped again.
"""

from __future__ import annotations

from typing import Any

from shell.engine.path_parts import parts_for
from shell.engine.query import RunContext, build_frame
from shell.planner.plan import Plan


def result_columns(run: RunContext, plan: Plan) -> list[tuple[str, Any]]:
    """(name, pyspark DataType) of each column the query's result has, in order."""
    built = build_frame(run, plan)
    try:
        types = {field.name: field.dataType for field in built.frame.schema.fields}
        return [(name, types[name]) for name in parts_for(plan).shown_columns(built.frame)]
    finally:
        for lookup in getattr(built, "lookups", None) or []:
            lookup.close()
