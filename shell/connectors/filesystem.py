"""`filesystem` tables with Flink's options: files in a directory read and written as lines in one of our formats.

Why it exists: files are the simplest source and sink there is (fixtures, exports, data handed over by another
system), and Flink SQL users expect `'connector' = 'filesystem'` to just work. Spark has file sources, but its
own json/csv readers have other type rules and cannot report which line was bad, so this connector reads the
bytes and decodes them with our formats, exactly as the topic connectors decode messages:

* Reading uses Spark's `binaryFile` stream source over `path` (a file or a directory, read recursively; names
  starting with '_' or '.' are skipped, as Spark and Flink do). Each file is cut into lines (one record per line,
  as Flink's filesystem connector does for every format, raw included; a trailing '\\r' is dropped and empty
  lines are skipped), and every line is decoded with the table's format. A line that does not decode keeps its
  bytes and reason in `__error` / `__raw_value` and its position `path:line` (1-based line number) in
  `__position`, so the engine keeps it aside for SHOW ERRORS. The bytes are cut through ISO-8859-1, which maps
  every byte to one character and back, so every byte reaches the format untouched.
* Without `source.monitor-interval` the table is bounded: the files present when the query starts are read
  (the engine uses the available-now trigger) and the query ends. With it, the directory is watched and new
  files are read as they appear (Spark lists the directory once per micro-batch, so the query's trigger
  interval, not the option's value, sets how often). Files must appear whole: write them elsewhere (or under a
  hidden name) and rename them into the directory.
* `PARTITIONED BY (dt, ...)` columns come from `dt=value` directories (Hive-style escaping, as both Spark and
  Flink write them; `partition.default-name` and Spark's `__HIVE_DEFAULT_PARTITION__` are NULL) and are not in
  the files.
* Metadata columns: `file.path`, `file.name`, `file.size`, `file.modification-time`, as in Flink (read-only).

Writing (`write_batch`, driven from foreachBatch) encodes each row with the format, writes the batch with
Spark's text writer to a hidden staging folder under `path` and renames its files into place as
`[col=value/...]part-<writer>-<batch id>-<n>`. `<writer>` is the streaming query's id (kept in its checkpoint,
so a restarted job keeps it), or a fresh id for `INSERT ... VALUES`. A batch Spark replays first deletes the
files its earlier attempt left, so a batch's rows land once, and a second job writing the same table adds files
next to the first one's. Nothing here runs per row in Python.

The whole of a file is held by one task while it is cut into lines, so very large files (beyond a few hundred MB)
should be split; Flink's size-based rolling (`sink.rolling-policy.*`) and compaction options are accepted but
have no effect: every micro-batch writes its own files.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from shell.catalog.model import Column, TableDef
from shell.connectors import topic
from shell.connectors.base import APPEND, Connector, ConnectorContext, OptionSpec, SourceFrame
from shell.connectors.topic import POSITION, RAW_KEY, RAW_VALUE, Metadata, TopicLayout
from shell.errors import CatalogError, ExecutionError, OptionError, UnsupportedFeatureError
from shell.formats.base import ERROR_COLUMN, OP_COLUMN, Format
from shell.formats.fields import SCALAR_KINDS, column, expectation, field_type, from_text, to_text
from shell.formats.registry import format_options
from shell.sql.types import flink_type_to_spark

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame, SparkSession

# The raw columns of Spark's binaryFile source; its schema is fixed, but a stream source must be given it.
BINARY_FILE_SCHEMA = "path STRING, modificationTime TIMESTAMP, length BIGINT, content BINARY"

METADATA = {
    "file.path": Metadata("path", "STRING"),
    "file.name": Metadata("regexp_extract(path, '[^/]*$', 0)", "STRING"),
    "file.size": Metadata("length", "BIGINT"),
    "file.modification-time": Metadata("modificationTime", "TIMESTAMP_LTZ(3)"),
}

DEFAULT_PARTITION = "__DEFAULT_PARTITION__"  # Flink's partition.default-name
SPARK_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # what Spark (and Hive) write for NULL: read as NULL too
PREFIX = "__fs_"  # intermediate columns of a read
LINE, LINE_NUMBER = f"{PREFIX}line", f"{PREFIX}line_number"
STAGING = "_streamshell-staging-"  # hidden (leading '_') from Spark's and Flink's file listings
QUERY_ID_PROPERTY = "sql.streaming.queryId"  # set by Spark on the thread that runs a micro-batch

NO_EFFECT = "accepted for Flink compatibility; no effect"
FORMAT_KEYS = ("format", "value.format", "errors.mode", "errors.path")
LINELESS_FORMATS = ("avro",)  # binary records, which may hold a newline: not one per line


class FilesystemConnector(Connector):
    """Files under a path, one record per line in the table's format; bounded unless `source.monitor-interval`
    watches for new files. `PARTITIONED BY` columns come from `col=value` directories."""

    name = "filesystem"
    changelog_mode = APPEND
    has_formats = True
    writes_in_one_pass = True
    options = (
        OptionSpec("path", required=True, description="a file or directory: 'file:///tmp/x', '/tmp/x', 's3a://b/x'"),
        *(s for s in topic.FORMAT_OPTIONS if s.key in FORMAT_KEYS),
        OptionSpec(
            "source.monitor-interval", "duration",
            description="watch the directory for new files (unbounded table); without it the table is bounded. "
            "New files are looked for once per micro-batch of the query",
        ),
        OptionSpec(
            "source.path.regex-pattern",
            description="read only files whose path (without scheme) fully matches this regular expression",
        ),
        OptionSpec("source.report-statistics", "enum", default="ALL", allowed=("NONE", "ALL"), description=NO_EFFECT),
        OptionSpec(
            "partition.default-name", default=DEFAULT_PARTITION,
            description="directory name of a NULL or empty partition value",
        ),
        OptionSpec("partition.time-extractor.*", description=NO_EFFECT),
        OptionSpec("sink.rolling-policy.file-size", description=NO_EFFECT + " (every micro-batch writes its own files)"),
        OptionSpec(
            "sink.rolling-policy.rollover-interval", "duration", description=NO_EFFECT + " (files roll at every micro-batch)"
        ),
        OptionSpec("sink.rolling-policy.check-interval", "duration", description=NO_EFFECT),
        OptionSpec("sink.rolling-policy.inactivity-interval", "duration", description=NO_EFFECT),
        OptionSpec("sink.partition-commit.*", description=NO_EFFECT + " (a partition's files are visible once written)"),
        OptionSpec("sink.shuffle-by-partition.enable", "bool", default="false", description=NO_EFFECT),
        OptionSpec("sink.parallelism", "int", description=NO_EFFECT),
        OptionSpec("auto-compaction", "bool", default="false", description=NO_EFFECT),
        OptionSpec("compaction.file-size", description=NO_EFFECT),
        OptionSpec("compaction.parallelism", "int", description=NO_EFFECT),
    )  # fmt: skip

    # -- validation ------------------------------------------------------------------------------------------

    def check(self, table: TableDef) -> None:
        fmt, options = format_of(table)
        if fmt.name in LINELESS_FORMATS:
            raise OptionError(
                f"format '{fmt.name}' of table '{table.name}' is binary: a filesystem table keeps one record per line",
                hint="use 'json', 'csv', 'raw' or 'debezium-json' for files; 'avro' is for Kafka and Pulsar tables",
            )
        fmt.check(value_fields(table), options)
        for col in partition_columns(table):
            if field_type(col.data_type).kind not in SCALAR_KINDS:
                raise OptionError(
                    f"partition column '{col.name}' has type {col.data_type}, which a directory name cannot hold",
                    hint="partition by columns of a scalar type (STRING, INT, DATE, ...)",
                )
        for col in table.metadata_columns():
            if col.metadata_name not in METADATA:
                raise OptionError(
                    f"column '{col.name}': unknown metadata key '{col.metadata_name}'",
                    hint="available: " + ", ".join(sorted(METADATA)),
                )

    def is_bounded(self, table: TableDef) -> bool:
        return "source.monitor-interval" not in table.options

    # -- reading ---------------------------------------------------------------------------------------------

    def source(self, ctx: ConnectorContext, table: TableDef) -> SourceFrame:
        from pyspark.sql import functions as F

        path = table.options["path"]
        files = HadoopFiles(ctx.spark, path)
        if not files.exists(path):
            if self.is_bounded(table):
                raise OptionError(
                    f"path '{path}' of table '{table.name}' does not exist",
                    hint="create it, or write to the table first with INSERT INTO",
                )
            files.mkdirs(path)  # a watched directory may be empty, and missing, when the query starts
        raw = (
            ctx.spark.readStream.format("binaryFile")
            .schema(BINARY_FILE_SCHEMA)
            .option("recursiveFileLookup", "true")  # partition values are taken from the path below
            .option("maxFileAge", "36500d")  # every new file is read, however old its modification time
            .load(path)
        )
        pattern = table.options.get("source.path.regex-pattern")
        if pattern:
            without_scheme = F.regexp_replace(F.col("path"), "^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?", "")
            raw = raw.where(without_scheme.rlike(f"^(?:{pattern})$"))
        return SourceFrame(decode(split_lines(raw), table), self.is_bounded(table))

    # -- writing ---------------------------------------------------------------------------------------------

    def write_batch(self, ctx: ConnectorContext, table: TableDef, batch: "DataFrame", batch_id: int) -> None:
        from pyspark.sql import functions as F

        written = [c.name for c in table.metadata_columns() if c.is_persisted]
        if written:
            raise UnsupportedFeatureError(
                f"metadata column '{written[0]}' of table '{table.name}' cannot be written: file metadata is read-only",
                hint="declare it METADATA VIRTUAL",
            )
        layout = TopicLayout([], value_fields(table), [], None, format_of(table), APPEND)
        encoded = topic.encode(batch, table, layout)  # refuses updates unless the format is a changelog one
        default = self.option(table, "partition.default-name") or DEFAULT_PARTITION
        partitions = partition_columns(table)
        out = encoded.select(
            F.col(topic.VALUE_BYTES).cast("string").alias(LINE),  # the bytes as they are: the text writer writes them
            *[
                F.coalesce(F.nullif(to_text(column(c.name), field_type(c.data_type)), F.lit("")), F.lit(default)).alias(c.name)
                for c in partitions
            ],
        )
        HadoopFiles(ctx.spark, table.options["path"]).write_batch(
            out, [c.name for c in partitions], f"part-{writer_id(ctx.spark)}-{batch_id:08d}"
        )


# ---- the table's layout --------------------------------------------------------------------------------------


def format_of(table: TableDef) -> tuple[Format, dict[str, str]]:
    """The table's format and its options; OptionError naming the option when it is missing or unknown."""
    key = "value.format" if "value.format" in table.options else "format"
    try:
        found = format_options(table.options, "value")
    except OptionError as exc:
        if exc.message.startswith("unknown format"):
            raise OptionError(f"option '{key}' of table '{table.name}': {exc.message}", hint=exc.hint) from None
        raise
    if found is None:
        raise OptionError(
            f"table '{table.name}' needs option 'format'", hint="e.g. 'format' = 'json' (or 'csv', 'raw', 'debezium-json')"
        )
    return found


def partition_columns(table: TableDef) -> list[Column]:
    columns = []
    for name in table.partitioned_by:
        column = table.column(name)
        if column is None or not column.is_physical:
            raise CatalogError(f"partition column '{name}' is not a physical column of table '{table.name}'")
        columns.append(column)
    return columns


def value_fields(table: TableDef) -> list[Column]:
    """The columns stored in the files: every physical column but the partition columns (those are folders)."""
    partitioned = {c.name.lower() for c in partition_columns(table)}
    fields = [c for c in table.physical_columns() if c.name.lower() not in partitioned]
    if not fields:
        raise OptionError(f"table '{table.name}' has no column left for the files: every physical column is a partition column")
    return fields


# ---- reading -------------------------------------------------------------------------------------------------


def split_lines(raw: "DataFrame") -> "DataFrame":
    """One row per non-empty line of every file: the file's columns, the line's bytes and its 1-based number."""
    from pyspark.sql import functions as F

    text = F.decode(F.col("content"), "ISO-8859-1")  # one character per byte: splitting keeps every byte
    lines = raw.where(F.col("length") > 0).select(
        "path", "modificationTime", "length", F.posexplode(F.split(text, "\n")).alias("pos", "text")
    )
    line = F.regexp_replace(F.col("text"), "\r\\z", "")
    return lines.select(
        "path", "modificationTime", "length",
        F.encode(line, "ISO-8859-1").alias(LINE),
        (F.col("pos") + F.lit(1)).alias(LINE_NUMBER),
    ).where(F.octet_length(F.col(LINE)) > 0)  # fmt: skip


def partition_value(path: "SparkColumn", column: Column, default: str) -> tuple["SparkColumn", "SparkColumn"]:
    """(the column's value, an error when the folder's text does not fit its type) from a file's path."""
    from pyspark.sql import functions as F

    t = field_type(column.data_type)
    found = F.regexp_extract(path, f".*/\\Q{column.name}\\E=([^/]*)/", 1)
    text = F.try_url_decode(F.replace(found, F.lit("+"), F.lit("%2B")))  # Hive-style %XX escapes; '+' is itself
    text = F.when(~found.isin("", default, SPARK_DEFAULT_PARTITION), text)
    value = from_text(text, t).cast(flink_type_to_spark(column.data_type))
    error = F.when(text.isNotNull() & value.isNull(), F.lit(f"partition '{column.name}': expected {expectation(t)}"))
    return value, error


def decode(lines: "DataFrame", table: TableDef) -> "DataFrame":
    """The table's physical and metadata columns from `split_lines`, plus `__error`, the raw bytes, the position
    (`path:line`) and, for a changelog format, `__op`: the columns the engine's bad-record handling expects."""
    from pyspark.sql import functions as F

    fmt, options = format_of(table)
    default = table.options.get("partition.default-name", DEFAULT_PARTITION)
    partitions = partition_columns(table)
    staged = [
        F.col(LINE).alias(RAW_VALUE),
        F.concat(F.col("path"), F.lit(":"), F.col(LINE_NUMBER).cast("string")).alias(POSITION),
    ]
    part_errors = []
    for i, column_def in enumerate(partitions):
        value, error = partition_value(F.col("path"), column_def, default)
        staged += [value.alias(f"{PREFIX}part_{i}"), error.alias(f"{PREFIX}part_error_{i}")]
        part_errors.append(F.col(f"{PREFIX}part_error_{i}"))
    metadata = table.metadata_columns()
    for i, column_def in enumerate(metadata):
        source = METADATA[column_def.metadata_name]
        staged.append(F.expr(source.expression).cast(flink_type_to_spark(column_def.data_type)).alias(f"{PREFIX}meta_{i}"))
    frame = lines.select(F.col(LINE), *staged)
    frame = fmt.decode(frame, LINE, value_fields(table), options)
    part_index = {c.name.lower(): i for i, c in enumerate(partitions)}
    columns = []
    for column_def in table.physical_columns():
        index = part_index.get(column_def.name.lower())
        columns.append(F.col(f"{PREFIX}part_{index}").alias(column_def.name) if index is not None else column(column_def.name))
    columns += [F.col(f"{PREFIX}meta_{i}").alias(c.name) for i, c in enumerate(metadata)]
    error = F.coalesce(F.col(ERROR_COLUMN), *part_errors) if part_errors else F.col(ERROR_COLUMN)
    extras = [error.alias(ERROR_COLUMN), F.lit(None).cast("binary").alias(RAW_KEY), F.col(RAW_VALUE), F.col(POSITION)]
    if fmt.produces_changelog:
        extras.append(F.col(OP_COLUMN))
    return frame.select(*columns, *extras)


# ---- writing -------------------------------------------------------------------------------------------------


def writer_id(spark: "SparkSession") -> str:
    """Who writes: the streaming query's id when called from its foreachBatch (the same after a restart from the
    checkpoint, so a replayed batch overwrites its own files), else a fresh id (INSERT ... VALUES)."""
    query_id = spark.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
    return query_id or str(uuid.uuid4())


class HadoopFiles:
    """The few file-system operations the connector needs, through Hadoop's FileSystem (local, HDFS, S3, ...)."""

    def __init__(self, spark: "SparkSession", base: str):
        self.jvm = spark.sparkContext._jvm
        self.base = self.jvm.org.apache.hadoop.fs.Path(base)
        self.fs = self.base.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def path(self, text: str):  # noqa: ANN201 - a Hadoop Path
        return self.jvm.org.apache.hadoop.fs.Path(text)

    def exists(self, text: str) -> bool:
        return bool(self.fs.exists(self.path(text)))

    def mkdirs(self, text: str) -> None:
        self.fs.mkdirs(self.path(text))

    def write_batch(self, frame: "DataFrame", partitions: list[str], stem: str) -> None:
        """Write `frame` (one STRING column of lines, plus the partition columns) as files named `stem-<n>`
        under the base directory, in `col=value/` folders; files an earlier attempt left under `stem` go first."""
        base = self.fs.makeQualified(self.base)
        if self.fs.exists(base) and self.fs.getFileStatus(base).isFile():
            raise ExecutionError(f"cannot write into '{base}': it is a file", hint="give the table a directory as 'path'")
        staging = self.jvm.org.apache.hadoop.fs.Path(base, STAGING + stem)
        self.fs.delete(staging, True)
        writer = frame.write.mode("overwrite")
        if partitions:
            writer = writer.partitionBy(*partitions)
        writer.text(staging.toString())
        pattern = self.jvm.org.apache.hadoop.fs.Path(base, "/".join(["*"] * len(partitions) + [f"{stem}-*"]))
        for status in self.fs.globStatus(pattern) or []:
            self.fs.delete(status.getPath(), False)
        staged = []
        files = self.fs.listFiles(staging, True)
        while files.hasNext():
            status = files.next()
            name = status.getPath().getName()
            if status.getLen() > 0 and not name.startswith(("_", ".")):
                staged.append(status.getPath())
        prefix = staging.toUri().getPath().rstrip("/") + "/"
        for n, source in enumerate(sorted(staged, key=lambda p: p.toString())):
            folder = source.getParent().toUri().getPath()
            relative = folder[len(prefix) :] if folder.startswith(prefix) else ""
            parent = self.jvm.org.apache.hadoop.fs.Path(base, relative) if relative else base
            self.fs.mkdirs(parent)
            target = self.jvm.org.apache.hadoop.fs.Path(parent, f"{stem}-{n}")
            if not self.fs.rename(source, target):
                raise ExecutionError(f"could not move '{source}' to '{target}'")
        self.fs.delete(staging, True)
