"""What one call of pyspark's state API costs from a `transformWithStateInPandas` processor, by value size and type.

Why it exists: the keyed stage of the changelog path reads and writes one `MapState` entry per sub-bucket it
touches, and at 1M keys and 1K changes/s that is most of a micro-batch (docs/changelog-engine.md). This times
those calls alone: one grouping key, a `MapState` of `--entries` entries whose values are `--sizes` bytes held
as BINARY, or as the same bytes in base64 as STRING; `--batches` micro-batches, each writing every entry once
(`updateValue`) and reading it back (`getValue`); and, for the same values as BINARY, a `ListState` written with one
`appendList` of all the entries and read back whole, its cost divided by the entries. Spark runs with
streamshell's settings (RocksDB state store, changelog checkpointing), `local[2]`, one shuffle partition.

    .venv/bin/python -m benchmarks.state_api [--sizes 1000,30000,120000] [--entries 100] [--batches 6]

Prints a markdown table: milliseconds per call, the median over the batches after the first.
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import sys
import time
from typing import Iterator

from benchmarks.scratch import scratch_dir

SIZES = "1000,30000,120000"


def processor_class(sizes: list[int], entries: int):  # noqa: ANN201 - a StatefulProcessor subclass
    import pandas as pd
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor
    from pyspark.sql.types import BinaryType, IntegerType, StringType, StructField, StructType

    key = StructType([StructField("entry", IntegerType())])

    class Timed(StatefulProcessor):
        def init(self, handle) -> None:  # noqa: ANN001
            self.maps = {
                "BINARY": handle.getMapState("binary", key, StructType([StructField("v", BinaryType())])),
                "STRING": handle.getMapState("text", key, StructType([StructField("v", StringType())])),
            }
            self.list = handle.getListState("list", StructType([StructField("v", BinaryType())]))

        def handleInputRows(self, _key, rows, _timers) -> Iterator[pd.DataFrame]:  # noqa: ANN001, N802
            for _ in rows:
                pass
            out = []
            for size in sizes:
                blob = os.urandom(size)
                for kind, value in (("BINARY", blob), ("STRING", base64.b64encode(blob[: size * 3 // 4]).decode())):
                    state = self.maps[kind]
                    began = time.perf_counter()
                    for i in range(entries):
                        state.updateValue((i,), (value,))
                    written = time.perf_counter()
                    for i in range(entries):
                        state.getValue((i,))
                    read = time.perf_counter()
                    out.append((size, kind, (written - began) * 1000 / entries, (read - written) * 1000 / entries))
                began = time.perf_counter()
                self.list.clear()
                self.list.appendList([(blob,)] * entries)
                written = time.perf_counter()
                read_back = sum(1 for _ in self.list.get())
                read = time.perf_counter()
                assert read_back == entries, read_back
                out.append((size, "LIST", (written - began) * 1000 / entries, (read - written) * 1000 / entries))
            yield pd.DataFrame(out, columns=["size", "kind", "put_ms", "get_ms"])

        def close(self) -> None:
            pass

    return Timed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=SIZES, help="value sizes in bytes, comma-separated")
    parser.add_argument("--entries", type=int, default=100)
    parser.add_argument("--batches", type=int, default=6)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from shell.engine.spark import BASE_CONF, python_for_workers

    python_for_workers()
    builder = SparkSession.builder.master("local[2]").appName("bench-state-api")
    for key, value in {**BASE_CONF, "spark.sql.shuffle.partitions": "1"}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    with scratch_dir("bench-state-api-") as checkpoint:
        results: list[list] = []
        source = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1).load().select(F.lit(1).alias("k"))
        query = (
            source.groupBy("k")
            .transformWithStateInPandas(processor_class(sizes, args.entries)(), "size INT, kind STRING, put_ms DOUBLE, get_ms DOUBLE", "Append", "None")
            .writeStream.foreachBatch(lambda batch, _id: results.append([tuple(r) for r in batch.collect()]))
            .option("checkpointLocation", str(checkpoint))
            .trigger(processingTime="500 milliseconds")
            .start()
        )  # fmt: skip
        while len(results) < args.batches:
            time.sleep(0.5)
            if query.exception() is not None:
                raise SystemExit(f"state API benchmark failed: {query.exception()}")
        query.stop()
        spark.stop()

    measured = [rows for rows in results if rows][1:]  # the first batch opens the state store: left out
    print(f"{args.entries} entries, {len(measured)} micro-batches, load average {os.getloadavg()[0]:.1f}\n")
    print("| value bytes | stored as | put ms | get ms |\n| ---: | --- | ---: | ---: |")
    for i, (size, kind, _, _) in enumerate(measured[0]):
        put = statistics.median(rows[i][2] for rows in measured)
        get = statistics.median(rows[i][3] for rows in measured)
        shown = {"STRING": "STRING (base64)", "LIST": "BINARY, one `appendList` / one list read"}.get(kind, kind)
        print(f"| {size:,} | {shown} | {put:.2f} | {get:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
