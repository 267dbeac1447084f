"""Reading the kept bad records of a table (SHOW ERRORS) while Spark may be writing more of them: only committed
files, newest first, and no more files than LIMIT needs."""

from __future__ import annotations

import base64
import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from shell.engine.bad_records import committed_files, read_dead_letters, read_lines

pytestmark = pytest.mark.unit

T0 = 1_790_000_000.0  # seconds since the epoch: the first batch's time


def at(seconds: float) -> str:
    """A time as Spark's JSON writer puts `seen_at` (UTC, milliseconds, Z)."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def record(position: str, seen_at: float, value: bytes = b"{not json") -> str:
    return json.dumps({"seen_at": at(seen_at), "position": position, "error": "malformed JSON",
                       "value_base64": base64.b64encode(value).decode()})  # fmt: skip


def write(path: Path, lines: list[str], written_at: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    os.utime(path, (written_at, written_at))
    return path


def batch_folder(owner: Path, batch: int, lines: list[str], written_at: float, committed: bool = True) -> Path:
    """What write_batch leaves: `batch-N/part-00000-....json`, then `_SUCCESS` once Spark's job committed."""
    folder = owner / f"batch-{batch:012d}"
    part = write(folder / f"part-00000-{batch}-c000.json", lines, written_at)
    if committed:
        (folder / "_SUCCESS").write_text("")
    return part


def sink_log(owner: Path, batch: int, files: list[Path], compact: bool = False, deleted: tuple[Path, ...] = ()) -> None:
    """One file of Spark's file sink log: the files batch `batch` added (a compact one lists all before it too)."""
    entries = [{"path": f"file://{p}", "size": 1, "isDir": False, "modificationTime": 0, "blockReplication": 1,
                "blockSize": 1, "action": "add"} for p in files]  # fmt: skip
    entries += [{"path": f"file://{p}", "action": "delete"} for p in deleted]
    name = f"{batch}.compact" if compact else str(batch)
    write(owner / "_spark_metadata" / name, ["v1", *(json.dumps(e) for e in entries)], T0)


def positions(letters) -> list[str]:
    return [d.position for d in letters]


def test_a_batch_folder_is_read_once_spark_has_committed_it(tmp_path):
    owner = tmp_path / "t" / "job1"
    batch_folder(owner, 1, [record("0:7", T0 + 1)], T0 + 2)
    batch_folder(owner, 2, [record("0:9", T0 + 3)], T0 + 4, committed=False)  # its part file is being written
    pending = owner / "batch-000000000003" / "_temporary" / "0" / "task_1"  # a task's output before the commit
    write(pending / "part-00000-b.json", [record("0:11", T0 + 5)], T0 + 6)
    letters = read_dead_letters(tmp_path / "t")
    assert [(d.position, d.value, d.seen_at) for d in letters] == [("0:7", "{not json", at(T0 + 1))]


def test_a_dead_letter_querys_files_are_read_once_its_log_lists_them(tmp_path):
    owner = tmp_path / "t" / "select-1"
    files = [write(owner / f"part-0000{n}-q-c000.json", [record(f"0:{n}", T0 + n)], T0 + n + 0.5) for n in range(5)]
    sink_log(owner, 0, files[:1])
    sink_log(owner, 9, files[:3], compact=True)  # compacted: the batches before it may be gone
    sink_log(owner, 10, [files[3]], deleted=(files[1],))
    # files[4] is not in the log: the batch writing it has not committed (or its task failed)
    assert sorted(p.name for p in (f.path for f in committed_files(tmp_path / "t"))) == \
        sorted(files[n].name for n in (0, 2, 3))  # fmt: skip
    assert positions(read_dead_letters(tmp_path / "t")) == ["0:3", "0:2", "0:0"]


def test_limit_opens_only_the_newest_files(tmp_path):
    owner = tmp_path / "t" / "job1"
    for batch in range(60):
        lines = [record(f"0:{batch}-{n}", T0 + 10 * batch + n * 0.1) for n in range(2)]
        batch_folder(owner, batch, lines, T0 + 10 * batch + 1)
    opened: list[str] = []

    def counting(path: Path):
        opened.append(path.parent.name)
        return read_lines(path)

    letters = read_dead_letters(tmp_path / "t", limit=3, read=counting)
    assert positions(letters) == ["0:59-1", "0:59-0", "0:58-1"]
    assert opened == ["batch-000000000059", "batch-000000000058"]
    opened.clear()
    assert len(read_dead_letters(tmp_path / "t", read=counting)) == 120 and len(opened) == 60


def test_two_writers_records_come_newest_first_across_their_files(tmp_path):
    """A job and a SELECT keep the same table's bad records at once: their files interleave in time."""
    job, select = tmp_path / "t" / "job1", tmp_path / "t" / "select-1"
    batch_folder(job, 0, [record("job-a", T0 + 1)], T0 + 2)
    batch_folder(job, 1, [record("job-b", T0 + 5)], T0 + 9)  # a slow batch: written after the SELECT's
    selected = write(select / "part-00000-s-c000.json", [record("select-a", T0 + 6), record("select-b", T0 + 7)], T0 + 8)
    sink_log(select, 0, [selected])
    assert positions(read_dead_letters(tmp_path / "t")) == ["select-b", "select-a", "job-b", "job-a"]
    assert positions(read_dead_letters(tmp_path / "t", limit=2)) == ["select-b", "select-a"]


def test_damaged_lines_are_skipped_and_a_time_that_is_not_one_comes_last(tmp_path):
    owner = tmp_path / "t" / "job1"
    lines = [record("0:1", T0 + 1, value=b"\xff\xfe"), "{cut sho", "[1, 2]",
             json.dumps({"seen_at": "yesterday", "position": "0:2", "error": "e", "value_base64": "b2s="})]  # fmt: skip
    batch_folder(owner, 0, lines, T0 + 2)
    letters = read_dead_letters(tmp_path / "t")
    assert [(d.position, d.value) for d in letters] == [("0:1", "x'fffe'"), ("0:2", "ok")]
    assert read_dead_letters(tmp_path / "missing") == []
