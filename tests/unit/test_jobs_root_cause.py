"""A failure's cause in one line: the end of a Python worker's traceback, the innermost Java cause, our message.

The texts are Spark 4.2's own, captured from real failed queries (trimmed where they run on)."""

from __future__ import annotations

import pytest

from shell.engine.spark_errors import from_spark, root_cause
from shell.errors import CatalogError, ExecutionError

pytestmark = pytest.mark.unit

QUERY_INFO = """
=== Streaming Query ===
Identifier: [id = 6ae474c1-0f8e-490b-99ae-61735dffd674, runId = 813f7156-9736-479c-b5a5-31241d4789a0]
Current Committed Offsets: {}

Current State: ACTIVE
Thread State: RUNNABLE
"""

PYTHON_DATA_SOURCE = (
    "[PYTHON_STREAMING_DATA_SOURCE_RUNTIME_ERROR] Failed when Python streaming data source perform latestOffset: "
    """Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/sql/streaming/python_streaming_source_runner.py", line 269, in main
  File "/work/main/shell/connectors/pulsar_source.py", line 88, in latestOffset
    positions = self.admin.latest(self.config.topics)
  File "/work/main/shell/connectors/pulsar_common.py", line 396, in get
    raise PulsarAdminError(f"cannot reach the Pulsar admin API at {self.base}: {reason}") from None
shell.connectors.pulsar_common.PulsarAdminError: cannot reach the Pulsar admin API at http://127.0.0.1:8080: [Errno 111] Connection refused
 SQLSTATE: 38000"""
    + QUERY_INFO
)

FOREACH_BATCH = (
    """An exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/py4j/clientserver.py", line 644, in _call_proxy
    return_value = getattr(self.pool[obj_id], method)(*params)
                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/pyspark/sql/utils.py", line 163, in call
    self.func(DataFrame(jdf, wrapped_session_jdf), batch_id)
  File "/tmp/job.py", line 10, in fb
    raise OSError("disk full")
OSError: disk full
"""
    + QUERY_INFO
)

PYTHON_UDF = (
    """[PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/tmp/udfs.py", line 25, in bad
    raise ValueError(f"bad value {x}")
ValueError: bad value 0
 SQLSTATE: 38000"""
    + QUERY_INFO
)

FOREACH_BATCH_SPARK_ERROR = (
    """An exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):
  File "/work/main/shell/engine/path_parts.py", line 281, in write
    connector.write_batch(built.ctx, sink_table, batch, batch_id)
pyspark.errors.exceptions.captured.SparkRuntimeException: [USER_RAISED_EXCEPTION] table src: a record does not decode at file:/in/ids.json:2: malformed JSON SQLSTATE: P0001
"""
    + QUERY_INFO
)

FOREACH_BATCH_ARITHMETIC = FOREACH_BATCH_SPARK_ERROR.replace(
    "SparkRuntimeException: [USER_RAISED_EXCEPTION] table src: a record does not decode at file:/in/ids.json:2: "
    "malformed JSON SQLSTATE: P0001", "ArithmeticException: [DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012")

CHAINED = """Traceback (most recent call last):
  File "a.py", line 1, in f
    int("x")
ValueError: invalid literal for int() with base 10: 'x'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "a.py", line 3, in g
    raise KeyError("k") from exc
KeyError: 'k'
"""

DIVIDE_BY_ZERO = (
    "[DIVIDE_BY_ZERO] Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL instead. "
    'If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error. SQLSTATE: 22012\n'
    "== SQL (line 1, position 1) ==\n1/(value-value) as x\n^^^^^^^^^^^^^^^\n" + QUERY_INFO
)

TASK_FAILURE = (
    "Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times, most recent failure: Lost task 0.0 in "
    "stage 3.0 (TID 3) (10.0.0.5 executor driver): java.io.FileNotFoundException: File file:/data/in/a.json does "
    "not exist\n\tat org.apache.hadoop.fs.RawLocalFileSystem.deprecatedGetFileStatus(RawLocalFileSystem.java:915)\n"
)

PY4J = """An error occurred while calling o123.start.
: org.apache.spark.SparkException: Writing job aborted
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.writingJobAbortedError(QueryExecutionErrors.scala:767)
Caused by: java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: Topic out not present
\tat java.base/java.util.concurrent.FutureTask.report(FutureTask.java:122)
Caused by: org.apache.kafka.common.errors.TimeoutException: Topic out not present in metadata after 60000 ms.
"""


class Captured(Exception):
    """Shaped like pyspark's CapturedException: `_desc`, `_stackTrace`, and the Java cause in `_cause`."""

    def __init__(self, desc: str, stack: str = "", cause: "Captured | None" = None):
        super().__init__(desc)
        self._desc, self._stackTrace, self._cause = desc, stack, cause


@pytest.mark.parametrize(
    "text, cause",
    [
        (PYTHON_DATA_SOURCE, "cannot reach the Pulsar admin API at http://127.0.0.1:8080: [Errno 111] Connection refused"),
        (FOREACH_BATCH, "OSError: disk full"),
        (PYTHON_UDF, "ValueError: bad value 0"),
        (FOREACH_BATCH_SPARK_ERROR, "table src: a record does not decode at file:/in/ids.json:2: malformed JSON"),
        (FOREACH_BATCH_ARITHMETIC, "Division by zero."),
        (CHAINED, "KeyError: 'k'"),
        (DIVIDE_BY_ZERO, 'Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL instead. '
                         'If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error.'),
        (TASK_FAILURE, "FileNotFoundException: File file:/data/in/a.json does not exist"),
        (PY4J, "TimeoutException: Topic out not present in metadata after 60000 ms."),
        ("[USER_RAISED_EXCEPTION] table src: a record does not decode at t:0:3 SQLSTATE: P0001", "table src: a record does not decode at t:0:3"),
    ],
    ids=["python-data-source", "foreach-batch", "python-udf", "raise-error-in-batch", "spark-error-in-batch", "chained", "error-class", "task", "caused-by", "raise-error"],
)  # fmt: skip
def test_the_cause_of_a_spark_failure_in_one_line(text, cause):
    assert root_cause(text) == cause
    assert root_cause(Captured(text)) == cause


def test_the_innermost_java_cause_of_a_captured_exception():
    inner = Captured("org.apache.kafka.common.errors.TimeoutException: Timeout of 60000ms expired")
    outer = Captured("[STREAM_FAILED] Query [id = 1] terminated with exception: Writing job aborted", cause=Captured(
        "org.apache.spark.SparkException: Writing job aborted", cause=inner))  # fmt: skip
    assert root_cause(outer) == "TimeoutException: Timeout of 60000ms expired"


def test_a_python_traceback_in_a_cause_wins_over_the_java_wrapper():
    outer = Captured("[STREAM_FAILED] Query terminated with exception", cause=Captured(
        "org.apache.spark.SparkException: " + PYTHON_DATA_SOURCE))  # fmt: skip
    assert root_cause(outer).startswith("cannot reach the Pulsar admin API")


def test_our_own_errors_and_plain_python_exceptions():
    assert root_cause(ExecutionError("kafka: cannot reach 127.0.0.1:1")) == "kafka: cannot reach 127.0.0.1:1"
    assert root_cause(ValueError("no")) == "ValueError: no"
    assert root_cause(RuntimeError()) == "RuntimeError"
    try:
        try:
            raise OSError("socket closed")
        except OSError as exc:
            raise ExecutionError("the sink failed") from exc
    except ExecutionError as error:
        assert root_cause(error) == "the sink failed"


def test_from_spark_gives_the_cause_and_keeps_the_special_cases():
    error = from_spark(Captured(PYTHON_UDF))
    assert isinstance(error, ExecutionError) and error.message == "ValueError: bad value 0"
    unresolved = from_spark(Captured("[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter "
                                     "with name `nme` cannot be resolved. Did you mean one of the following? "
                                     "[`t`.`name`, `t`.`id`]. SQLSTATE: 42703"))  # fmt: skip
    assert isinstance(unresolved, CatalogError) and unresolved.hint == "did you mean name?"
