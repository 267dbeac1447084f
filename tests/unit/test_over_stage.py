"""The OVER aggregation stage (engine/over_stage.py) against a plain reference: each released row's frame
aggregates, whatever the batches, the frame kind and the history carried between calls."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import numpy as np
import pyarrow as pa
import pytest

from shell.engine import keyed_stage as ks
from shell.engine.over_stage import OverSpec, step_over

pytestmark = pytest.mark.unit

BASE = datetime(2024, 1, 1)
SCHEMA = pa.schema([("k", pa.string()), ("t", pa.timestamp("us")), ("v", pa.int64()), ("s", pa.string()),
                    (ks.W, pa.int32()), (ks.SRC, pa.int32()), (ks.KEY, pa.string())])
FUNCTIONS = (("n", "count", None), ("nv", "count", "v"), ("total", "sum", "v"), ("mean", "avg", "v"),
             ("low", "min", "v"), ("high", "max", "v"), ("first_s", "min", "s"), ("last_s", "max", "s"))
TYPES = (pa.int64(), pa.int64(), pa.int64(), pa.int64(), pa.int64(), pa.int64(), pa.string(), pa.string())


def spec(rows: bool, preceding: int | None) -> OverSpec:
    return OverSpec(SCHEMA, ("k", "t", "v", "s"), "t", rows, preceding, FUNCTIONS, TYPES)


def batch(rows: list[tuple]) -> pa.Table:
    data = {"k": [r[0] for r in rows], "t": [BASE + timedelta(seconds=r[1]) for r in rows],
            "v": [r[2] for r in rows], "s": [r[3] for r in rows], ks.W: [1] * len(rows), ks.SRC: [0] * len(rows),
            ks.KEY: [r[0] for r in rows]}
    return pa.table(data, schema=SCHEMA)


def seconds(t: datetime) -> int:
    return int((t - BASE).total_seconds())


def run(over: OverSpec, batches: list[tuple[list[tuple], int]]) -> list[dict]:
    """Every row released over the batches; each batch is (rows, watermark in seconds after BASE)."""
    state = [over.waiting_schema().empty_table(), over.history_schema().empty_table()]
    out = []
    for rows, mark in batches:
        micros = int((BASE - datetime(1970, 1, 1) + timedelta(seconds=mark)).total_seconds() * 1e6)
        step = step_over(over, state, batch(rows), micros)
        state = step.state
        out += step.output.to_pylist()
    return out


def reference(over: OverSpec, rows: list[tuple], late: set[int]) -> list[dict]:
    """Each non-late row with its frame's aggregates, computed row by row."""
    kept = [r for i, r in enumerate(rows) if i not in late]
    result = []
    for i, (k, t, v, s) in enumerate(kept):
        part = [(j, r) for j, r in enumerate(kept) if r[0] == k]
        part.sort(key=lambda x: (x[1][1], x[0]))
        pos = [j for j, _ in part].index(i)
        if over.rows:
            lo = 0 if over.preceding is None else max(0, pos - over.preceding)
            frame = [r for _, r in part[lo:pos + 1]]
        else:
            span = None if over.preceding is None else over.preceding / 1e6
            frame = [r for _, r in part if r[1] <= t and (span is None or r[1] >= t - span)]
        values = [r[2] for r in frame if r[2] is not None]
        strings = [r[3] for r in frame if r[3] is not None]
        result.append({"k": k, "t": BASE + timedelta(seconds=t), "v": v, "s": s, "n": len(frame),
                       "nv": len(values), "total": sum(values) if values else None,
                       "mean": int(sum(values) / len(values)) if values else None,
                       "low": min(values) if values else None, "high": max(values) if values else None,
                       "first_s": min(strings) if strings else None, "last_s": max(strings) if strings else None,
                       ks.W: 1})
    return result


def _sorted(rows: list[dict]) -> list:
    return sorted(rows, key=lambda r: tuple(str(r[c]) for c in ("k", "t", "v", "s", "n")))


@pytest.mark.parametrize("rows_frame,preceding", [(True, 2), (True, 0), (True, None), (False, 300_000_000),
                                                  (False, None), (False, 0)])
def test_released_rows_carry_their_frames_aggregates(rows_frame, preceding):
    rng = random.Random(11)
    # times about 25 s apart, out of order by up to 12 minutes (some behind the 10-minute watermark: late), and
    # often equal (ROWS orders equal times by arrival, which the reference takes as the list's order)
    rows = [(rng.choice(["a", "b", None]), max(0, (i * 25 + rng.randrange(-720, 720)) // 60 * 60),
             rng.choice([1, 5, None, 9, -3]), rng.choice(["x", "y", None, "z"])) for i in range(150)]
    over = spec(rows_frame, preceding)
    batches, late, seen = [], set(), -10**9
    for start in range(0, len(rows), 17):  # each batch meets the watermark of the rows before it, as in Spark
        mark = seen - 600
        chunk = rows[start:start + 17]
        late |= {start + j for j, r in enumerate(chunk) if r[1] <= mark}
        batches.append((chunk, mark))
        seen = max(seen, max(r[1] for r in chunk))
    batches.append(([], 10_000))  # the end of the input
    got = run(over, batches)
    expected = reference(over, rows, late)
    assert late and len(got) > 50
    assert _sorted(got) == _sorted(expected)

