"""Finished results on a terminal (SHOW, DESCRIBE, SET): a table when it fits, one block per row when it does not,
and SHOW JOBS with every field readable (its watermark a timestamp, or empty when there is none)."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from rich.console import Console

from shell.jobs.registry import JOB_COLUMNS, Job, JobRegistry
from shell.render.terminal import TerminalRenderer
from shell.results import Progress, Rows, watermark_text

pytestmark = pytest.mark.unit

STALLED = "no batch completed for 42 s; Spark: Getting offsets from KafkaV2[Subscribe[enriched-orders-from-the-store]]"
JOB_ROW = ("a1b2c3d4", "insert-into_enriched_orders", "RUNNING", 1234.5, 1200.0, 850, "2024-05-01 10:00:00.123", 3, 0,
           STALLED, None)  # fmt: skip


def render(rows: Rows, width: int) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, highlight=False, emoji=False, markup=False)
    TerminalRenderer(console).rows(rows)
    return out.getvalue()


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_a_result_that_fits_is_a_table():
    text = render(Rows(["key", "value"], [("a", 1), ("b", None)]), 80)
    assert lines(text)[0].split() == ["key", "value"]
    assert "row 1" not in text and text.rstrip().endswith("2 rows in set")


@pytest.mark.parametrize("width", [60, 80, 140])
def test_a_result_wider_than_the_terminal_is_shown_one_block_per_row(width):
    text = render(Rows(JOB_COLUMNS, [JOB_ROW, JOB_ROW[:1] + ("second",) + JOB_ROW[2:]]), width)
    shown = lines(text)
    assert all(len(line) <= width for line in shown)
    assert [line.split()[:2] for line in shown if line.startswith("row ")] == [["row", "1"], ["row", "2"]]
    for column in JOB_COLUMNS:  # every column of every row is there, none lost at the edge
        assert sum(line.startswith(f"{column}:") for line in shown) == 2, column
    block = shown[: shown.index(next(line for line in shown[1:] if line.startswith("row 2")))]
    assert any(line.startswith("watermark:") and line.endswith("2024-05-01 10:00:00.123") for line in block)
    assert any(line.startswith("name:") and line.endswith("insert-into_enriched_orders") for line in block)
    assert any(line.startswith("last failure:") and line.endswith("<NULL>") for line in block)
    joined = " ".join(line.split(":", 1)[-1].strip() if line.startswith("detail:") else line.strip()
                      for line in block[block.index(next(x for x in block if x.startswith("detail:"))):]
                      if not line.startswith("last failure:"))  # fmt: skip
    assert " ".join(STALLED.split()) in " ".join(joined.split()) or STALLED.replace(" ", "") in joined.replace(" ", "")
    assert shown[-1] == "2 rows in set"


def test_the_same_result_on_a_wide_terminal_is_a_table():
    text = render(Rows(JOB_COLUMNS, [JOB_ROW]), 240)
    assert "row 1" not in text
    header = lines(text)[0]
    for column in JOB_COLUMNS:
        assert column in header


# ---- SHOW JOBS -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spark, shown",
    [
        ("2024-05-01T10:00:00.123Z", "2024-05-01 10:00:00.123"),
        ("2024-05-01T12:00:00.000+02:00", "2024-05-01 10:00:00.000"),
        ("1970-01-01T00:00:00.000Z", ""),  # Spark's watermark before any event: there is none
        (None, ""),  # a query without a watermark
    ],
)
def test_the_watermark_is_a_timestamp_or_empty(spark, shown):
    assert watermark_text(spark) == shown
    progress = {"batchId": 1, "eventTime": {"watermark": spark} if spark else {}}
    assert Progress.from_spark(progress).watermark == shown


class IdleQuery:
    """What a Job asks of Spark's StreamingQuery, running and reporting `lastProgress`."""

    def __init__(self, last_progress: dict):
        self.lastProgress = last_progress
        self.status = {"message": "Waiting for next trigger", "isDataAvailable": False, "isTriggerActive": False}
        self._ended = threading.Event()

    @property
    def isActive(self) -> bool:  # noqa: N802 - Spark's name
        return not self._ended.is_set()

    def exception(self):
        return None

    def stop(self) -> None:
        self._ended.set()

    def awaitTermination(self, timeout=None):  # noqa: N802
        return self._ended.wait(timeout)


def show_jobs(tmp_path: Path, watermark: str | None) -> dict:
    registry = JobRegistry(tmp_path)
    directory = tmp_path / "jobs" / "j1"
    (directory / "checkpoint").mkdir(parents=True)
    progress = {"batchId": 4, "inputRowsPerSecond": 10.0, "durationMs": {"triggerExecution": 12},
                "eventTime": {"watermark": watermark} if watermark else {}}  # fmt: skip
    registry.add(Job("j1", "insert-into_out", "INSERT INTO out SELECT * FROM src;", IdleQuery(progress), directory,
                     False))  # fmt: skip
    try:
        return dict(zip(JOB_COLUMNS, registry.rows()[0]))
    finally:
        registry.stop_all()


def test_show_jobs_shows_no_epoch_watermark(tmp_path):
    # no watermark yet is an empty cell, shown <NULL> as the others are, not a blank
    assert show_jobs(tmp_path, "1970-01-01T00:00:00.000Z")["watermark"] is None
    assert show_jobs(tmp_path / "none", None)["watermark"] is None
    assert show_jobs(tmp_path / "again", "2024-05-01T10:00:00.123Z")["watermark"] == "2024-05-01 10:00:00.123"


def test_show_jobs_at_80_columns_shows_every_field(tmp_path):
    row = show_jobs(tmp_path, "2024-05-01T10:00:00.123Z")
    shown = lines(render(Rows(JOB_COLUMNS, [tuple(row.values())]), 80))
    assert all(len(line) <= 80 for line in shown)
    for column in JOB_COLUMNS:
        assert sum(line.startswith(f"{column}:") for line in shown) == 1, column
    assert next(line for line in shown if line.startswith("watermark:")).endswith("2024-05-01 10:00:00.123")
