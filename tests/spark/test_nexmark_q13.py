"""Nexmark q13 as Nexmark writes it: bids joined with a side input file FOR SYSTEM_TIME AS OF their processing time."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter

import pytest

from differential.nexmark_events import write_events
from tests.spark.helpers import changes, run
from tests.spark.nexmark import BID_DDL

pytestmark = pytest.mark.spark

SIDE_KEYS = 10_000

NEXMARK = BID_DDL + """
CREATE TEMPORARY TABLE side_input (
  key BIGINT,
  `value` VARCHAR
) WITH ('connector' = 'filesystem', 'path' = '{side}', 'format' = 'csv');
"""
# Nexmark's q13.sql (nexmark-flink/src/main/resources/queries), its INSERT INTO discard_sink made the bare query.
Q13 = """
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.dateTime,
    S.`value`
FROM (SELECT *, PROCTIME() as p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON mod(B.auction, 10000) = S.key;
"""


def test_nexmark_q13_joins_every_bid_with_its_side_input_row(session, tmp_path):
    events, side = tmp_path / "nexmark.json", tmp_path / "side"
    write_events(events, 2000, seed=13, start=dt.datetime(2024, 1, 1, 12, 0, 0), gap_ms=20)
    side.mkdir()
    (side / "side_input.csv").write_text("".join(f"{k},value-{k}\n" for k in range(SIDE_KEYS)))
    run(session, NEXMARK.format(path=events, side=side))

    got = changes(run(session, Q13))
    assert {op for op, _ in got} == {"+I"}
    expected = []
    for line in events.read_text().splitlines():
        event = json.loads(line)
        if event["event_type"] == 2:
            bid = event["bid"]
            when = dt.datetime.strptime(bid["dateTime"], "%Y-%m-%d %H:%M:%S.%f")
            expected.append((bid["auction"], bid["bidder"], bid["price"], when, f"value-{bid['auction'] % 10000}"))
    assert len(expected) > 1000
    assert Counter(r for _, r in got) == Counter(expected)
