"""The `blackhole` sink: accepts every row and keeps none, for measuring a job without a sink's cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.catalog.model import TableDef
from shell.connectors.base import Connector, ConnectorContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import DataStreamWriter


class BlackholeConnector(Connector):
    name = "blackhole"
    is_source = False

    def sink(self, ctx: ConnectorContext, table: TableDef, frame: "DataFrame") -> "DataStreamWriter":
        return frame.writeStream.format("noop")
