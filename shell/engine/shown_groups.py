"""A SELECT's grouped result shown as Flink shows it: +I for a new group, -U then +U for an update, -D of the
row last shown.

Why it exists: a GROUP BY of the changelog path runs as Spark's streaming aggregation in update mode, which gives
each touched group's new row and nothing of its old one. A sink keyed by the group needs no more. But a SELECT's
changelog, tableau and JSON views show the changes themselves, and Flink's client shows an update as the old row
retracted and the new one added, never a "-D" of a group that HAVING kept out all along, and a "-D" that carries
the group's last row (not its emptied aggregate, COUNT 0). So the publisher of a SELECT remembers the row it last
showed of each group, on the driver, for display only (a job keeps nothing of the kind). Past `cap` groups, a
new group's changes are shown as they come (+U, -D), so nothing is lost and the memory stays bounded.
"""

from __future__ import annotations

from shell.results import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, Change

MAX_SHOWN_GROUPS = 1_000_000  # Flink's default for the rows its client's table mode keeps


class ShownGroups:
    """The rows of an upsert result last shown, by group; turns each batch of upserts into Flink's changes.

    A batch's rows are `(op, row)` with op +U (the group's row now) or -D (the group is gone); `row` holds the
    shown columns, then any hidden key columns. `key` gives the positions in `row` that identify a group (none:
    one group, a global aggregate), `width` how many columns are shown.
    """

    def __init__(self, key: list[int], width: int, cap: int = MAX_SHOWN_GROUPS):
        self.key, self.width, self.cap = key, width, cap
        self.shown: dict[tuple, tuple] = {}

    def changes(self, batch: list[tuple[str, tuple]]) -> list[Change]:
        out: list[Change] = []
        for op, row in batch:
            group = tuple(row[i] for i in self.key)
            now = row[: self.width]
            last = self.shown.get(group)
            if op == DELETE:
                if last is not None:
                    del self.shown[group]
                    out.append(Change(DELETE, last))
                elif len(self.shown) >= self.cap:  # perhaps shown past the cap: say it as it comes
                    out.append(Change(DELETE, now))
            elif last is None:
                if len(self.shown) < self.cap:
                    self.shown[group] = now
                    out.append(Change(INSERT, now))
                else:
                    out.append(Change(UPDATE_AFTER, now))
            elif last != now:
                self.shown[group] = now
                out += [Change(UPDATE_BEFORE, last), Change(UPDATE_AFTER, now)]
        return out
