"""`table.local-time-zone` decides how local time is read and printed, as in Flink."""

from __future__ import annotations

import pytest

from tests.spark.helpers import changes, run

pytestmark = pytest.mark.spark


def test_the_same_instant_prints_in_the_zone_set(session):
    query = "SELECT DATE_FORMAT(TO_TIMESTAMP_LTZ(0, 3), 'yyyy-MM-dd HH:mm:ss') AS shown;"
    assert changes(run(session, query)) == [("+I", ("1970-01-01 00:00:00",))]
    run(session, "SET 'table.local-time-zone' = 'Asia/Shanghai';")
    assert changes(run(session, query)) == [("+I", ("1970-01-01 08:00:00",))]
    run(session, "RESET 'table.local-time-zone';")
    assert changes(run(session, query)) == [("+I", ("1970-01-01 00:00:00",))], "RESET goes back to UTC"
