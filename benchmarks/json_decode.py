"""The cost of decoding JSON records: streamshell's 'json' format beside one hand-written from_json, in Spark batch.

Why it exists: the append path's throughput (benchmarks/engine_append.py) is mostly JSON decoding, and the gap to
hand-written PySpark is the price of naming and keeping bad records. This isolates it: `--rows` order records (id,
price, qty, ts, as the append benchmark writes them), cached, then each variant written to Spark's `noop` sink
(best of `--rounds`, each round writing every variant once, so that the JVM's warm-up and the machine's load do not
favour the variants written last): the hand-written typed `from_json` with the filter/projection of the append
benchmark, the same query over streamshell's decode (good rows only), that with its timestamps read by the pattern
alone (no cast for the usual shape), that with the typed parse in a projection of its own (not beside the text read
of the records it refuses), the same with every record read as text (no typed first parse), that with the older
staging that listed every record's keys (`json_object_keys`, now only read for `fail-on-missing-field`), the text
read with the older inline checks (each field's check converted its text again, beside its value), and the two
parses alone. Then the same orders as Debezium create events (`{"before": null, "after": {...}, "op": "c"}`)
through the 'debezium-json' format, as it is and with its before/after rows read inline (parsed and converted again
for their checks, as they were).

    .venv/bin/python -m benchmarks.json_decode [--rows 1000000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import time


def inline_checks(records, fields):  # noqa: ANN001, ANN201
    """The decode as it was before each field's value was staged: values and checks built inline in one
    projection, where Spark converts each field twice (once for its value, once inside its check)."""
    from pyspark.sql import functions as F

    import shell.formats.json as json_format
    from shell.formats.base import error_column, replace_source, temp_column

    reader, t, raw = json_format.JsonReader(json_format.style_for(None)), json_format.row_type(fields), F.col("value")
    staged, parts = json_format.stage_object(records, raw.cast("string"), t, temp_column("", "json"), keys=False)
    converted = reader.convert_object(parts, t)
    checks = [F.when(F.octet_length(raw) == 0, F.lit("empty record")), F.when(parts.malformed, F.lit("malformed JSON")),
              converted.error]  # fmt: skip
    error = F.when(raw.isNotNull(), json_format.first_error(checks))
    return replace_source(staged, "value", fields, converted.value, error, error_column(""), "")


def read_as_text(records, fields):  # noqa: ANN001, ANN201
    """The decode without its typed first parse: every record read field by field as text (what only a record the
    typed parse refuses goes through now)."""
    import shell.formats.json as json_format
    from shell.formats.base import error_column, replace_source

    reader = json_format.JsonFormat().reader({})
    staged, values, error = json_format.decode_object(records, "value", fields, reader, "", typed_first=False)
    return replace_source(staged, "value", fields, values, error, error_column(""), "")


def parses_apart(json_format, stage_row):  # noqa: ANN001, ANN201
    """json.stage_row as the decode called it before the typed parse shared a projection with the text read of
    what it refused: the typed parse staged first, in a projection of its own that copies every record."""
    from pyspark.sql import functions as F

    def staged_apart(frame, reader, text, t, path, exact, name, only_if=None, beside=None):  # noqa: ANN001, ANN202
        if beside:
            frame = frame.withColumns(beside)
            (typed,) = beside
            only_if = json_format.refused(F.col(typed).getField("row"))
        return stage_row(frame, reader, text, t, path, exact, name, only_if)

    return staged_apart


def inline_row(frame, reader, text, t, path, exact, name):  # noqa: ANN001, ANN201, ARG001
    """debezium-json's before/after rows as they were read before `json.stage_row`: inline, in one projection."""
    return frame, None, reader.convert(text, t, path, exact)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import shell.formats.debezium as debezium_format
    import shell.formats.fields as fields_module
    import shell.formats.json as json_format
    from shell.catalog.model import Column
    from shell.formats.base import error_column
    from shell.formats.registry import FORMATS

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())  # fmt: skip
    spark.sparkContext.setLogLevel("ERROR")
    records = spark.range(args.rows).selectExpr(
        "CAST(to_json(named_struct('id', id, 'price', round(rand(1) * 100, 2), 'qty', CAST(id % 7 AS INT), "
        "'ts', date_format(timestamp_millis(1700000000000 + id), 'yyyy-MM-dd HH:mm:ss.SSS'))) AS BINARY) AS value"
    ).cache()
    records.count()
    fields = [Column("id", "BIGINT"), Column("price", "DOUBLE"), Column("qty", "INT"), Column("ts", "TIMESTAMP(3)")]

    def seconds(frame) -> float:  # noqa: ANN001
        started = time.perf_counter()
        frame.write.format("noop").mode("overwrite").save()
        return time.perf_counter() - started

    def query(decoded):  # noqa: ANN001, ANN202
        return decoded.where(F.col(error_column("")).isNull()).where("qty > 2").selectExpr("id", "price * qty AS total")

    text = F.col("value").cast("string")
    hand = records.select(F.from_json(text, "id BIGINT, price DOUBLE, qty INT, ts TIMESTAMP",
                                      {"timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS"}).alias("o"))
    variants = {"hand-written from_json": hand.select("o.*").where("qty > 2").selectExpr("id", "price * qty AS total")}
    typed_first = json_format.JsonFormat().decode(records, "value", fields, {})
    variants["streamshell json (typed first parse)"] = query(typed_first)
    timestamp = fields_module.FROM_TEXT["TIMESTAMP"]
    fields_module.FROM_TEXT["TIMESTAMP"] = lambda raw, t, style: F.try_to_timestamp(raw, F.lit(style.parse_pattern(t)))
    try:
        variants["streamshell json, timestamps by the pattern alone"] = query(json_format.JsonFormat().decode(
            records, "value", fields, {}))
    finally:
        fields_module.FROM_TEXT["TIMESTAMP"] = timestamp
    stage_row = json_format.stage_row
    json_format.stage_row = parses_apart(json_format, stage_row)
    try:
        variants["streamshell json, typed parse in a projection of its own"] = query(json_format.JsonFormat().decode(
            records, "value", fields, {}))
    finally:
        json_format.stage_row = stage_row
    variants["streamshell json, read as text"] = query(read_as_text(records, fields))
    staging = json_format.stage_object
    json_format.stage_object = lambda *a, **k: staging(*a, **{**k, "keys": True})
    try:
        variants["streamshell json, read as text, keys listed too"] = query(read_as_text(records, fields))
    finally:
        json_format.stage_object = staging
    variants["streamshell json, checks convert again"] = query(inline_checks(records, fields))
    event = F.concat(F.lit('{"before": null, "after": '), text, F.lit(', "op": "c"}'))
    events = records.select(event.cast("binary").alias("value")).cache()
    events.count()
    debezium = FORMATS["debezium-json"]
    variants["debezium-json"] = query(debezium.decode(events, "value", fields, {}))
    staged_rows = debezium_format.stage_row
    debezium_format.stage_row = inline_row
    try:
        variants["debezium-json, rows read inline"] = query(debezium.decode(events, "value", fields, {}))
    finally:
        debezium_format.stage_row = staged_rows
    variants["json_object_keys alone"] = records.select(F.json_object_keys(text))
    variants["from_json as text alone"] = records.select(F.from_json(text, "id STRING, price STRING, qty STRING, ts STRING"))

    best = dict.fromkeys(variants, float("inf"))
    for _ in range(args.rounds):
        for name, frame in variants.items():
            best[name] = min(best[name], seconds(frame))
    hand_seconds = best["hand-written from_json"]
    for name, fastest in best.items():
        print(f"{name}: {fastest:.2f} s ({hand_seconds / fastest:.2f}x the hand-written rate)", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
