"""`table.exec.state.ttl` on the keyed join's state (on the JVM): a row not written for longer than the TTL is gone,
so a match that arrives after that finds nothing, and a job whose keys keep changing keeps a bounded state, where
without a TTL it keeps every key it ever saw. Micro-batches here are spaced by sleeps longer than the TTL (a TTL is
processing time); what is asserted is the rows and the state's size, not how long anything took."""

from __future__ import annotations

import json
import threading
import time

import pytest

from shell.paths import jvm_bundle_jars
from tests.spark.helpers import run, wait_for

pytestmark = [pytest.mark.spark, pytest.mark.skipif(not jvm_bundle_jars("stages"),
                                                     reason="jvm/stages is not built: scripts/jvm-deps stages")]

ROUNDS = 3


def _write(folder, name: str, rows: list[dict]) -> None:
    hidden = folder / f".{name}"
    hidden.write_text("".join(json.dumps(r) + "\n" for r in rows))
    hidden.rename(folder / name)  # files appear whole


def _joined(session, home, ttl: str | None) -> tuple[list[tuple], int]:
    """The join's rows and its state's rows at the end, with `ttl` (None: no TTL)."""
    left, right = home / "l", home / "r"
    left.mkdir(parents=True)
    right.mkdir()
    name = home.name
    run(session, f"""
        SET 'table.exec.changelog.jvm-stages' = 'true';
        {"SET 'table.exec.state.ttl' = '" + ttl + "';" if ttl else "RESET 'table.exec.state.ttl';"}
        CREATE TEMPORARY TABLE l_{name} (id STRING, a STRING) WITH ('connector' = 'filesystem', 'path' = '{left}',
          'format' = 'json', 'source.monitor-interval' = '1 s');
        CREATE TEMPORARY TABLE r_{name} (id STRING, b STRING) WITH ('connector' = 'filesystem', 'path' = '{right}',
          'format' = 'json', 'source.monitor-interval' = '1 s');""")
    stream = run(session, f"SELECT l.id, l.a, r.b FROM l_{name} AS l JOIN r_{name} AS r ON l.id = r.id")
    rows: list[tuple] = []

    def collect() -> None:
        for batch in stream.batches():
            rows.extend(c.row for c in batch or () if c.op == "+I")

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        for n in range(ROUNDS):  # a new key on both sides each round, its join at once; then longer than the TTL
            _write(left, f"{n:02}.json", [{"id": f"k{n}", "a": f"a{n}"}])
            _write(right, f"{n:02}.json", [{"id": f"k{n}", "b": f"b{n}"}])
            wait_for(lambda n=n: any(r[0] == f"k{n}" for r in rows), 120, f"the join of k{n}")
            time.sleep(2.0)
        _write(right, "late.json", [{"id": "k0", "b": "late"}])  # k0's left row was written rounds ago
        _write(left, "end.json", [{"id": "end", "a": "end"}])
        _write(right, "end.json", [{"id": "end", "b": "end"}])
        wait_for(lambda: any(r[0] == "end" for r in rows), 120, "the join of the last key")
        state_rows = stream.progress().state_rows
    finally:
        stream.cancel()
        reader.join(timeout=30)
    return rows, state_rows


def test_rows_idle_past_the_ttl_are_gone_and_the_state_stops_growing(session, tmp_path):
    with_ttl, ttl_state = _joined(session, tmp_path / "ttl", "1 s")
    without, kept_state = _joined(session, tmp_path / "kept", None)
    assert ("k0", "a0", "late") in without, "without a TTL k0's left row is there for the late match"
    assert ("k0", "a0", "late") not in with_ttl, "with a TTL it had expired: the late row finds nothing"
    assert {r[0] for r in with_ttl} == {r[0] for r in without} == {f"k{n}" for n in range(ROUNDS)} | {"end", "k0"}
    # without a TTL every key's rows stay (two per round, the late one and the last key's two); with it, only what
    # was written in the last TTL's time
    assert kept_state >= 2 * ROUNDS + 3
    assert ttl_state <= 3, (ttl_state, kept_state)


def test_a_join_the_python_stage_would_run_is_refused_with_a_ttl_not_run_without_it(session, tmp_path):
    from shell.errors import ExecutionError

    (tmp_path / "x").mkdir()
    run(session, f"""SET 'table.exec.changelog.jvm-stages' = 'false';
        SET 'table.exec.state.ttl' = '1 h';
        CREATE TEMPORARY TABLE ttl_x (id STRING, a STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "x"}',
          'format' = 'json', 'source.monitor-interval' = '1 s');""")
    try:
        with pytest.raises(ExecutionError, match="state TTL is carried out by the keyed join on the JVM") as refused:
            run(session, "SELECT a.id, b.a FROM ttl_x AS a JOIN ttl_x AS b ON a.id = b.id")
        assert "RESET 'table.exec.state.ttl'" in refused.value.hint
    finally:
        run(session, "RESET 'table.exec.state.ttl'; RESET 'table.exec.changelog.jvm-stages';")
