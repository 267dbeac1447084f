"""A SELECT brings at most `sql-client.display.max-rows-per-batch` rows of a micro-batch to the shell, cut on the
executors, and says so; every row is still computed (a stateful result's state and the batch's bad records are
as without the cap)."""

from __future__ import annotations

from pathlib import Path

from tests.spark.helpers import changes, run, wait_for


def write(path: Path, *lines: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    hidden = path.with_name(f".{path.name}.tmp")
    hidden.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    hidden.rename(path)


def test_a_batch_larger_than_the_cap_is_shown_in_part_and_its_bad_records_are_all_kept(session, tmp_path):
    folder = tmp_path / "in"
    write(folder / "a.json", *(f'{{"id": {i}}}' for i in range(1, 6)))
    write(folder / "b.json", *(f'{{"id": {i}}}' for i in range(6, 11)), "{the last line is bad")
    run(session, f"""
        SET 'sql-client.display.max-rows-per-batch' = '3';
        CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json');""")
    stream = run(session, "SELECT id FROM t;")
    got = changes(stream)
    assert len(got) == 3 and {op for op, _ in got} == {"+I"} and {row for _, row in got} <= {(i,) for i in range(1, 11)}
    assert stream.notes == {"shown-rows": "showing 3 of 10 rows of batch 0 (sql-client.display.max-rows-per-batch = 3)"}
    errors = run(session, "SHOW ERRORS FOR t;").rows
    assert [e[4] for e in errors] == ["{the last line is bad"], "the rows past the cap were read: the bad one too"


def test_a_batch_within_the_cap_is_shown_whole_without_a_note(session, tmp_path):
    write(tmp_path / "in" / "a.json", '{"id": 1}', '{"id": 2}')
    run(session, f"""
        SET 'sql-client.display.max-rows-per-batch' = '2';
        CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "in"}', 'format' = 'json');""")
    stream = run(session, "SELECT id FROM t;")
    assert sorted(row for _, row in changes(stream)) == [(1,), (2,)]
    assert stream.notes == {}


def test_a_select_without_a_table_is_cut_too(session):
    run(session, "SET 'sql-client.display.max-rows-per-batch' = '2';")
    stream = run(session, "SELECT * FROM (VALUES (1), (2), (3), (4)) AS v(x);")
    assert len(changes(stream)) == 2
    assert stream.notes == {"shown-rows": "showing 2 of 4 rows of batch 0 (sql-client.display.max-rows-per-batch = 2)"}


def test_a_grouped_result_keeps_every_groups_state_when_a_batch_is_shown_in_part(session, tmp_path):
    """Cut with a filter, not a LIMIT: a LIMIT would leave partitions of the stateful stage unread (their state
    not committed), and the next batch would count from nothing, or fail."""
    folder = tmp_path / "in"
    write(folder / "a.json", *(f'{{"id": {i}}}' for i in range(1, 9)))  # four groups, two rows each
    run(session, f"""
        SET 'sql-client.display.max-rows-per-batch' = '1';
        CREATE TEMPORARY TABLE t (id INT) WITH ('connector' = 'filesystem', 'path' = '{folder}', 'format' = 'json',
          'source.monitor-interval' = '1 s');""")
    stream = run(session, "SELECT id % 4 AS k, COUNT(*) AS n FROM t GROUP BY id % 4;")
    seen: list = []
    try:
        batches = stream.batches()

        def next_changes():
            for batch in batches:
                if batch:
                    seen.extend(batch)
                    return batch
            return None

        first = wait_for(next_changes, 120, "the first batch", interval=0)
        assert len(first) == 1 and first[0].row[1] == 2, first
        assert stream.notes["shown-rows"].startswith("showing 1 of 4 rows of batch "), stream.notes
        write(folder / "b.json", *(f'{{"id": {i}}}' for i in range(9, 17)))  # two more rows in each group
        second = wait_for(next_changes, 120, "the second batch", interval=0)
        updated = [c for c in second if c.op in ("+U", "+I")]
        assert updated and all(c.row[1] == 4 for c in updated), f"counts continue from the state: {seen}"
    finally:
        stream.cancel()


def test_an_aggregate_and_a_join_over_values_alone_give_their_final_rows(session):
    run(session, "RESET 'sql-client.display.max-rows-per-batch';")
    stream = run(session, "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM (VALUES ('a', 1), ('a', 2), ('b', 3)) AS t(k, v) "
                          "GROUP BY k;")
    assert sorted(row for _, row in changes(stream)) == [("a", 2, 3), ("b", 1, 3)]
    stream = run(session, "SELECT a.k, b.v FROM (VALUES ('a'), ('c')) AS a(k) LEFT JOIN (VALUES ('a', 1)) AS b(k, v) "
                          "ON a.k = b.k;")
    assert sorted(changes(stream), key=repr) == [("+I", ("a", 1)), ("+I", ("c", None))]
