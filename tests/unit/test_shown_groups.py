"""A grouped SELECT's upserts shown as Flink's changes (shell/engine/shown_groups.py)."""

from __future__ import annotations

import pytest

from shell.engine.shown_groups import ShownGroups
from shell.results import Change

pytestmark = pytest.mark.unit


def shown(changes: list[Change]) -> list[tuple[str, tuple]]:
    return [(c.op, c.row) for c in changes]


def test_a_new_group_is_inserted_then_updated_as_its_old_row_retracted_and_its_new_one_added():
    groups = ShownGroups(key=[0], width=2)

    assert shown(groups.changes([("+U", ("a", 1)), ("+U", ("b", 1))])) == [("+I", ("a", 1)), ("+I", ("b", 1))]
    assert shown(groups.changes([("+U", ("a", 2))])) == [("-U", ("a", 1)), ("+U", ("a", 2))]
    assert shown(groups.changes([("+U", ("b", 1))])) == []  # the same row again: nothing changed


def test_a_delete_retracts_the_row_last_shown_and_a_group_never_shown_is_not_deleted():
    groups = ShownGroups(key=[0], width=3)
    groups.changes([("+U", ("a", 2, 30))])

    # Spark's emptied aggregate (COUNT 0, SUM NULL) is not what was shown: the shown row is retracted
    assert shown(groups.changes([("-D", ("a", 0, None))])) == [("-D", ("a", 2, 30))]
    # HAVING kept group c out all along: no change of it is shown
    assert shown(groups.changes([("-D", ("c", 1, 5))])) == []
    assert shown(groups.changes([("+U", ("a", 1, 7))])) == [("+I", ("a", 1, 7))]


def test_hidden_key_columns_tell_apart_groups_whose_shown_rows_are_equal():
    # SELECT COUNT(*) ... GROUP BY grp: the group is in a hidden column after the shown one
    groups = ShownGroups(key=[1], width=1)

    assert shown(groups.changes([("+U", (3, "x")), ("+U", (3, "y"))])) == [("+I", (3,)), ("+I", (3,))]
    assert shown(groups.changes([("+U", (4, "y"))])) == [("-U", (3,)), ("+U", (4,))]


def test_a_global_aggregate_is_one_group():
    groups = ShownGroups(key=[], width=1)

    assert shown(groups.changes([("+U", (1,))])) == [("+I", (1,))]
    assert shown(groups.changes([("+U", (2,))])) == [("-U", (1,)), ("+U", (2,))]
    assert shown(groups.changes([("-D", (0,))])) == [("-D", (2,))]


def test_past_the_cap_a_new_groups_changes_are_shown_as_they_come():
    groups = ShownGroups(key=[0], width=2, cap=1)
    groups.changes([("+U", ("a", 1))])

    assert shown(groups.changes([("+U", ("b", 1)), ("+U", ("a", 2))])) == [
        ("+U", ("b", 1)), ("-U", ("a", 1)), ("+U", ("a", 2))]
    assert shown(groups.changes([("-D", ("b", 0))])) == [("-D", ("b", 0))]  # it may have been shown: say so
    assert groups.shown == {("a",): ("a", 2)}
