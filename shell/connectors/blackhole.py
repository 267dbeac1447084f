"""The `blackhole` sink: accepts every row and keeps none, for measuring a job without a sink's cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors.base import Connector, ConnectorContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class BlackholeConnector(Connector):
    """Accepts every row and keeps none: a job measured without a sink's cost."""

    name = "blackhole"
    is_source = False
    writes_in_one_pass = True

    def accepts_changes(self, table: TableDef) -> bool:
        """Any result: it drops every row."""
        return True

    def write_batch(self, ctx: ConnectorContext, table: TableDef, batch: "DataFrame", batch_id: int) -> None:
        batch.write.format("noop").mode("overwrite").save()
