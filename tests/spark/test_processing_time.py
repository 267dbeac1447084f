"""Processing-time windows on local Spark: a window fires once the wall clock passes its end, with no further input;
on a bounded input the windows still open at its end are dropped, as in Flink. Counts only, no timing: a file's rows
are read in one micro-batch, so they share one processing time and one window."""

from __future__ import annotations

import os
from pathlib import Path

from tests.spark.helpers import changes, run

WATCHED = """CREATE TEMPORARY TABLE clicks (user_id STRING, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json', 'source.monitor-interval' = '1 s');"""


def add_file(folder: Path, name: str, *users: str) -> None:
    """A file of clicks that appears whole in the watched folder."""
    folder.mkdir(parents=True, exist_ok=True)
    hidden = folder / f".{name}.tmp"
    hidden.write_text("".join(f'{{"user_id": "{u}"}}\n' for u in users), encoding="utf-8")
    os.rename(hidden, folder / name)


def next_rows(stream, count: int, timeout: float = 120) -> list[tuple]:
    """The next `count` rows of a running result (appended rows only), without cancelling it."""
    import time

    deadline = time.monotonic() + timeout
    out: list[tuple] = []
    for batch in stream.batches():
        assert all(change.op == "+I" for change in batch or ())
        out += [change.row for change in batch or ()]
        if len(out) >= count:
            return out
        assert time.monotonic() < deadline, f"only {out} after {timeout} s"
    return out


def test_a_processing_time_tumble_fires_when_the_wall_clock_passes_its_end(session, tmp_path):
    folder = tmp_path / "clicks"
    add_file(folder, "1.json", "a", "a", "b")
    run(session, WATCHED.format(path=folder))
    stream = run(session, "SELECT user_id, COUNT(*) AS n, window_start, window_end FROM TABLE(TUMBLE(TABLE clicks, "
                          "DESCRIPTOR(pt), INTERVAL '2' SECOND)) GROUP BY user_id, window_start, window_end;")  # fmt: skip
    assert not stream.bounded
    try:
        first = next_rows(stream, 2)  # no row arrives after the file: the heartbeat moves the watermark on
        assert sorted(r[:2] for r in first) == [("a", 2), ("b", 1)]
        assert len({r[2:] for r in first}) == 1 and (first[0][3] - first[0][2]).total_seconds() == 2
        add_file(folder, "2.json", "a", "c")
        second = next_rows(stream, 2)
        assert sorted(r[:2] for r in second) == [("a", 1), ("c", 1)]
        assert second[0][2] >= first[0][3], "a later window"
    finally:
        stream.cancel()


def test_hop_and_session_windows_over_a_views_proctime_alias(session, tmp_path):
    folder = tmp_path / "clicks"
    add_file(folder, "1.json", "a", "a", "b")
    run(session, f"""CREATE TEMPORARY TABLE raw_clicks (user_id STRING) WITH ('connector' = 'filesystem',
          'path' = '{folder}', 'format' = 'json', 'source.monitor-interval' = '1 s');
        CREATE TEMPORARY VIEW timed AS SELECT *, PROCTIME() AS p_time FROM raw_clicks;""")
    hop = run(session, "SELECT user_id, COUNT(*) AS n FROM TABLE(HOP(TABLE timed, DESCRIPTOR(p_time), INTERVAL '1' SECOND, "
                       "INTERVAL '2' SECOND)) GROUP BY user_id, window_start, window_end;")  # fmt: skip
    try:
        assert sorted(next_rows(hop, 4)) == [("a", 2), ("a", 2), ("b", 1), ("b", 1)], "each row is in two windows"
    finally:
        hop.cancel()
    sessions = run(session, "SELECT user_id, COUNT(*) AS n FROM TABLE(SESSION(TABLE timed PARTITION BY user_id, "
                            "DESCRIPTOR(p_time), INTERVAL '2' SECOND)) GROUP BY user_id, window_start, window_end;")  # fmt: skip
    try:
        assert sorted(next_rows(sessions, 2)) == [("a", 2), ("b", 1)]
    finally:
        sessions.cancel()


def test_cumulate_over_processing_time_counts_a_batch_in_each_cumulative_window_after_it(session, tmp_path):
    folder = tmp_path / "clicks"
    add_file(folder, "1.json", "a", "a", "b")
    run(session, WATCHED.format(path=folder))
    stream = run(session, "SELECT user_id, COUNT(*) AS n, window_end FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(pt), "
                          "INTERVAL '1' SECOND, INTERVAL '2' SECOND)) GROUP BY user_id, window_start, window_end;")  # fmt: skip
    try:
        rows = next_rows(stream, 2)  # the whole 2 s window closes at once: all its cumulative windows come together
        ends = {r[2] for r in rows}
        assert sorted((u, n) for u, n, _ in rows) == sorted([("a", 2), ("b", 1)] * len(ends)) and len(ends) in (1, 2)
    finally:
        stream.cancel()


def test_on_a_bounded_input_the_open_processing_time_windows_are_dropped(session, tmp_path):
    """Flink does not fire the processing-time windows still open when a bounded input ends: nor do we."""
    (tmp_path / "clicks.json").write_text('{"user_id": "a"}\n{"user_id": "b"}\n', encoding="utf-8")
    run(session, f"""CREATE TEMPORARY TABLE clicks (user_id STRING, pt AS PROCTIME())
          WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'clicks.json'}', 'format' = 'json');""")
    stream = run(session, "SELECT user_id, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), "
                          "INTERVAL '1' MINUTE)) GROUP BY user_id, window_start, window_end;")  # fmt: skip
    assert stream.bounded and changes(stream) == [], "the query ends, with its one window dropped"
