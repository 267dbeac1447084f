"""The session on local Spark: datagen tables, SELECT results, INSERT jobs, views and EXPLAIN."""

from __future__ import annotations

import io

import pytest

from tests.sessions import embedded_options
from shell.errors import CatalogError, OptionError
from shell.results import JobStarted, Rows, Text
from shell.session import Session
from tests.spark.helpers import changes, run

ORDERS = """
CREATE TEMPORARY TABLE orders (
  id BIGINT, qty INT, price DOUBLE, note STRING, flag BOOLEAN, ts TIMESTAMP(3),
  total AS qty * price,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen', 'number-of-rows' = '50',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '50',
  'fields.qty.min' = '1', 'fields.qty.max' = '3',
  'fields.price.min' = '10', 'fields.price.max' = '20',
  'fields.note.length' = '7', 'fields.note.null-rate' = '0.5'
);
"""


def test_bounded_select_returns_every_generated_row_and_ends(session):
    run(session, ORDERS)
    rows = changes(run(session, "SELECT id, qty, price, note, flag, total FROM orders;"))
    assert {op for op, _ in rows} == {"+I"}
    assert sorted(r[0] for _, r in rows) == list(range(1, 51))
    for _, (_, qty, price, note, flag, total) in rows:
        assert 1 <= qty <= 3 and 10 <= price <= 20
        assert total == pytest.approx(qty * price)
        assert note is None or len(note) == 7
        assert isinstance(flag, bool)
    nulls = sum(1 for _, r in rows if r[3] is None)
    assert 5 < nulls < 45, "null-rate 0.5 gives some NULLs and some values"


def test_generated_rows_are_deterministic(session):
    run(session, ORDERS)
    first = changes(run(session, "SELECT id, qty, note FROM orders;"))
    second = changes(run(session, "SELECT id, qty, note FROM orders;"))
    assert sorted(first) == sorted(second)


def test_filter_and_functions(session):
    run(session, ORDERS)
    rows = changes(run(session, "SELECT id, CHAR_LENGTH(note) AS n FROM orders WHERE id <= 10 AND note IS NOT NULL;"))
    assert rows and all(r[0] <= 10 and r[1] == 7 for _, r in rows)


def test_views_expand_into_the_query(session):
    run(session, ORDERS + "CREATE TEMPORARY VIEW small AS SELECT id, qty FROM orders WHERE qty = 1;")
    rows = changes(run(session, "SELECT id FROM small;"))
    expected = {r[0] for _, r in changes(run(session, "SELECT id FROM orders WHERE qty = 1;"))}
    assert {r[0] for _, r in rows} == expected and expected


def test_insert_runs_a_job_into_the_print_sink(tmp_path, spark_runtime):
    out = io.StringIO()
    session = Session(embedded_options(home=tmp_path, print_stream=out), runtime=spark_runtime)
    try:
        run(session, ORDERS)
        run(session, "CREATE TEMPORARY TABLE sink (id BIGINT, qty INT) WITH ('connector' = 'print', 'print-identifier' = 'x');")
        started = run(session, "INSERT INTO sink SELECT id, qty FROM orders WHERE id <= 5;")
        assert isinstance(started, JobStarted)
        assert session.jobs.wait_all() == []
        lines = sorted(out.getvalue().splitlines(), key=lambda l: int(l.split("[")[1].split(",")[0]))
        assert [l.split(",")[0] for l in lines] == [f"x> +I[{i}" for i in range(1, 6)]
        jobs = run(session, "SHOW JOBS;")
        assert isinstance(jobs, Rows) and jobs.rows[0][0] == started.job_id and jobs.rows[0][2] == "FINISHED"
    finally:
        session.close()


def test_insert_with_a_column_list_fills_the_rest_with_null(tmp_path, spark_runtime):
    out = io.StringIO()
    session = Session(embedded_options(home=tmp_path, print_stream=out), runtime=spark_runtime)
    try:
        run(session, ORDERS + "CREATE TEMPORARY TABLE sink (a BIGINT, b STRING) WITH ('connector' = 'print');")
        run(session, "INSERT INTO sink (a) SELECT id FROM orders WHERE id = 3;")
        session.jobs.wait_all()
        assert out.getvalue() == "+I[3, <NULL>]\n"
    finally:
        session.close()


def test_insert_with_the_wrong_number_of_columns_is_refused(session):
    run(session, ORDERS + "CREATE TEMPORARY TABLE sink (a BIGINT) WITH ('connector' = 'blackhole');")
    with pytest.raises(CatalogError, match="gives 2 columns but expects 1"):
        run(session, "INSERT INTO sink SELECT id, qty FROM orders;")


def test_a_source_only_connector_cannot_be_written(session):
    run(session, ORDERS)
    with pytest.raises(OptionError, match="cannot be written to"):
        run(session, "INSERT INTO orders SELECT * FROM orders;")


def test_unknown_column_gets_a_suggestion(session):
    run(session, ORDERS)
    with pytest.raises(CatalogError) as info:
        run(session, "SELECT qtty FROM orders;")
    assert "qtty" in info.value.message
    assert info.value.hint == "did you mean qty?"


def test_explain_names_the_path_and_shows_sparks_plan(session):
    run(session, ORDERS)
    text = run(session, "EXPLAIN SELECT id FROM orders WHERE qty > 1;")
    assert isinstance(text, Text)
    assert "path: native (every input is append-only)" in text.text
    assert "source: orders via datagen" in text.text
    assert "== Physical Plan ==" in text.text


def test_select_without_tables(session):
    assert changes(run(session, "SELECT 1 + 1 AS two, 'x' AS s;")) == [("+I", (2, "x"))]


def test_insert_values_writes_the_rows_at_once(tmp_path, spark_runtime):
    out = io.StringIO()
    session = Session(embedded_options(home=tmp_path, print_stream=out), runtime=spark_runtime)
    try:
        run(session, "CREATE TEMPORARY TABLE sink (id BIGINT, name STRING, ts TIMESTAMP(3)) WITH ('connector' = 'print');")
        message = run(session, "INSERT INTO sink VALUES (1, 'ada', TIMESTAMP '2024-01-02 03:04:05.678'), (2, NULL, NULL);")
        assert message.text == "Wrote 2 rows to sink."
        assert sorted(out.getvalue().splitlines()) == [
            "+I[1, ada, 2024-01-02 03:04:05.678]",
            "+I[2, <NULL>, <NULL>]",
        ]
    finally:
        session.close()


WINDOWED = """
CREATE TEMPORARY TABLE ev (id BIGINT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
WITH ('connector' = 'datagen', 'number-of-rows' = '200', 'fields.ts.max-past' = '10 min',
      'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '200', 'fields.v.min' = '1', 'fields.v.max' = '1');
"""


@pytest.mark.parametrize(
    "query",
    [
        "SELECT window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end;",
        "SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE) AS window_start, TUMBLE_END(ts, INTERVAL '1' MINUTE) AS window_end, COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE);",
    ],
    ids=["tvf", "legacy"],
)
def test_every_window_fires_when_a_bounded_input_ends(session, query):
    """Flink moves the watermark to the end of time when a bounded input ends; so do we."""
    run(session, WINDOWED)
    rows = [r for _, r in changes(run(session, query))]
    assert sum(r[2] for r in rows) == 200 and sum(r[3] for r in rows) == 200
    starts = [r[0] for r in rows]
    assert len(set(starts)) == len(starts) >= 10
    assert all((end - start).total_seconds() == 60 for start, end, *_ in rows)


def test_hop_windows_count_each_row_once_per_window(session):
    run(session, WINDOWED)
    query = "SELECT window_start, COUNT(*) AS n FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)) GROUP BY window_start, window_end;"
    rows = [r for _, r in changes(run(session, query))]
    assert sum(r[1] for r in rows) == 400, "each row is in two 1-minute windows sliding by 30 s"


def test_the_end_of_a_bounded_file_fires_every_pending_window(session, tmp_path):
    """As in Flink, the end of a bounded input moves event time past every window: the last one is emitted too."""
    import json

    (tmp_path / "ev.json").write_text("\n".join(
        json.dumps({"id": i, "ts": f"2024-01-01 00:00:{i * 7 % 60:02d}.000"}) for i in range(1, 9)) + "\n")
    run(session, f"""CREATE TEMPORARY TABLE ev (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'ev.json'}', 'format' = 'json');""")
    query = "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '20' SECOND)) GROUP BY window_start, window_end;"
    rows = sorted(r for _, r in changes(run(session, query)))
    assert [(w.second, n) for w, n in rows] == [(0, 2), (20, 3), (40, 3)]
    assert sorted(r[0] for _, r in changes(run(session, "SELECT id FROM ev;"))) == list(range(1, 9)), "no marker row"


def test_the_end_of_a_bounded_file_fires_every_window_of_a_view_that_filters_it(session, tmp_path):
    """The watermark sees every row of the table, as in Flink, whatever a view filters: the end-of-input row (all
    NULL, so no view's filter lets it through) still fires the last window of the view's rows."""
    import json

    events = [(2, 1), (2, 5), (1, 20), (2, 12)]  # (type, second): only type 2 is a bid; the last bid is at 12 s
    (tmp_path / "ev.json").write_text("\n".join(
        json.dumps({"t": t, "ts": f"2024-01-01 00:00:{s:02d}.000"}) for t, s in events) + "\n")
    run(session, f"""CREATE TEMPORARY TABLE evs (t INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'ev.json'}', 'format' = 'json');
        CREATE TEMPORARY VIEW bids AS SELECT ts FROM evs WHERE t = 2;""")
    query = "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end;"
    rows = sorted(r for _, r in changes(run(session, query)))
    assert [(w.second, n) for w, n in rows] == [(0, 2), (10, 1)]


def test_cumulate_windows_give_running_totals_that_close_with_the_window(session, tmp_path):
    """CUMULATE(step 20 s, size 1 min): each row counts in every cumulative window of its minute ending after it."""
    import json

    seconds = [5, 25, 26, 59, 61, 130]  # minute 0: 1 row in [0,20), 2 in [20,40), 1 in [40,60); minute 1: 1; minute 2: 1
    (tmp_path / "ev.json").write_text("\n".join(
        json.dumps({"id": i, "ts": f"2024-01-01 00:{s // 60:02d}:{s % 60:02d}.000"}) for i, s in enumerate(seconds)) + "\n")
    run(session, f"""CREATE TEMPORARY TABLE ev (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'ev.json'}', 'format' = 'json');""")
    query = ("SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), "
             "INTERVAL '20' SECOND, INTERVAL '1' MINUTE)) GROUP BY window_start, window_end;")
    rows = sorted((start.minute, (end - start).total_seconds(), n) for _, (start, end, n) in changes(run(session, query)))
    assert rows == [(0, 20, 1), (0, 40, 3), (0, 60, 4), (1, 20, 1), (1, 40, 1), (1, 60, 1), (2, 20, 1), (2, 40, 1), (2, 60, 1)]


def test_a_bounded_datagen_query_starts_again_from_its_checkpoint(session, tmp_path):
    """A restarted or resumed job builds the same rate source: its first event time is kept in the job's folder."""
    from shell.engine import query
    from shell.planner.planner import plan_query
    from shell.sql.parse import parse_query

    run(session, ORDERS)
    plan = plan_query(parse_query("SELECT id FROM orders"), session.catalog)
    context = session._run_context(tmp_path / "job")
    first = changes(query.start_select(context, plan))
    again = changes(query.start_select(context, plan))  # would fail: "startTimestamp(...) > endTimestamp(...)"
    assert sorted(r[0] for _, r in first) == list(range(1, 51)) and again == []
    assert (tmp_path / "job" / "datagen" / "orders.start").read_text().isdigit()


def test_a_bounded_datagen_table_with_a_rate_comes_at_that_rate_then_ends(session):
    """As in Flink: `rows-per-second` beside `number-of-rows` paces the rows (a live result), event times too."""
    run(session, "CREATE TEMPORARY TABLE slow (id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen', "
                 "'number-of-rows' = '12', 'rows-per-second' = '40', 'fields.id.kind' = 'sequence', "
                 "'fields.id.start' = '1', 'fields.id.end' = '12');")
    batches = [batch for batch in run(session, "SELECT id, ts FROM slow;").batches() if batch]
    rows = [change.row for batch in batches for change in batch]
    assert sorted(r[0] for r in rows) == list(range(1, 13))
    assert len(batches) >= 2, "the rows came in one micro-batch: the rate was not kept"
    times = [ts for _, ts in sorted(rows)]
    assert {(b - a).total_seconds() for a, b in zip(times, times[1:])} == {0.025}  # 1/40 s apart, in row order


def test_an_options_hint_reads_and_writes_a_table_with_its_options_for_that_statement_alone(tmp_path, spark_runtime):
    """Flink's dynamic table options: `/*+ OPTIONS(...) */` after a table or an INSERT's target, over the declared
    options, for that statement; the table's own definition is unchanged."""
    out = io.StringIO()
    session = Session(embedded_options(home=tmp_path, print_stream=out), runtime=spark_runtime)
    try:
        run(session, "CREATE TEMPORARY TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10', "
                     "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '10');"
                     "CREATE TEMPORARY TABLE sink (id BIGINT) WITH ('connector' = 'print');")
        hinted = changes(run(session, "SELECT id FROM seq /*+ OPTIONS('fields.id.start' = '8', "
                                      "'number-of-rows' = '3') */;"))
        assert sorted(row for _, row in hinted) == [(8,), (9,), (10,)]
        assert sorted(row for _, row in changes(run(session, "SELECT id FROM seq;"))) == [(i,) for i in range(1, 11)]
        message = run(session, "INSERT INTO sink /*+ OPTIONS('print-identifier' = 'hinted') */ VALUES (7);")
        assert message.text == "Wrote 1 row to sink." and out.getvalue().splitlines() == ["hinted> +I[7]"]
    finally:
        session.close()
