"""The `print` sink: every change written as a line, Flink style (`+I[1, alice, 2.50]`), for watching a job.

Flink prints on its task managers; a shell user wants the lines in front of them, so batches are brought to the
driver and written to the shell's print stream (stderr unless the shell says otherwise). It is a debugging
sink: its batches are as large as the job's, so put a filter or an aggregate in front of a fast source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.changes import RowKind
from shell.catalog.model import TableDef
from shell.connectors.base import Connector, ConnectorContext, OptionSpec
from shell.values import format_value

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

OP_COLUMN = "__op"  # a changelog frame carries each row's kind (+I, -U, +U, -D) in this column


class PrintConnector(Connector):
    """Every change as a line (`+I[1, alice, 2.50]`) in front of the user, for watching a job."""

    name = "print"
    is_source = False
    options = (
        OptionSpec("print-identifier", description="a prefix for every printed line"),
        OptionSpec("standard-error", "bool", default="false", description="print to stderr instead of the shell"),
        OptionSpec("sink.parallelism", "int", description="accepted for Flink compatibility; has no effect"),
    )

    def accepts_changes(self, table: TableDef) -> bool:
        """Any result: it prints each row with its kind."""
        return True

    def write_batch(self, ctx: ConnectorContext, table: TableDef, batch: "DataFrame", batch_id: int) -> None:
        import sys

        prefix = self.option(table, "print-identifier")
        stream = sys.stderr if self.option(table, "standard-error") == "true" else ctx.print_stream
        names = [c.name for c in table.persisted_columns()]
        for row in batch.toLocalIterator():
            values = row.asDict()
            op = values.pop(OP_COLUMN, None) or RowKind.INSERT
            body = ", ".join(format_value(values.get(n)) for n in names)
            stream.write(f"{prefix + '> ' if prefix else ''}{op}[{body}]\n")
        stream.flush()
