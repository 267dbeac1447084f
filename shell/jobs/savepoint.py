"""Savepoints: a stopped job's checkpoint kept on disk with what it takes to start the job again.

In Flink a savepoint is a snapshot of a job's state that a new run of the job starts from. Spark keeps everything
a streaming query needs to continue (source positions, committed batches, operator state) in its checkpoint
directory, and a query started again on that directory continues where it stopped. So a savepoint here is the
job's own directory, `<home>/jobs/<id>/` (the query's `checkpoint/`, the checkpoints of its bad-record writers
under `dead-letters/`), with the job's record (record.py: its statement, name, settings and catalog), so that
`RESUME JOB 'id'` can run the statement again on the same directory, also from a new shell.

`SET 'execution.savepoint.path'` starts a *new* job from a copy of a savepoint instead, as Flink does: the
savepoint itself stays as it was, and the copy gets a new query id in place of the one Spark stored in it,
so the new job and a resumed original never pass for the same query (the filesystem sink names its files after
the query id).
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from shell.connectors.datagen import START_TIMES
from shell.engine.state_layout import BUCKETS_FILE, OPERATORS_FILE
from shell.errors import OptionError

CHECKPOINT = "checkpoint"
SIDE_CHECKPOINTS = "dead-letters"
KEPT_WITH_STATE = (BUCKETS_FILE, OPERATORS_FILE, START_TIMES)  # what of a job's directory a copy of its state needs


def is_checkpoint(path: Path) -> bool:
    """Whether `path` looks like a Spark streaming checkpoint (it has the offsets log or the query metadata)."""
    return path.is_dir() and ((path / "offsets").is_dir() or (path / "metadata").is_file())


def restore(savepoint: str, directory: Path) -> Path:
    """Copy a savepoint into a new job's `directory`; returns the savepoint's checkpoint that was copied.

    `savepoint` is a job directory (as STOP JOB ... WITH SAVEPOINT prints it) or a checkpoint directory (as SHOW
    JOBS shows it); a `file:` prefix is accepted.
    """
    given = Path(savepoint.removeprefix("file://").removeprefix("file:")).expanduser()
    if is_checkpoint(given / CHECKPOINT):
        source, side = given / CHECKPOINT, given / SIDE_CHECKPOINTS
    elif is_checkpoint(given):
        source, side = given, given.parent / SIDE_CHECKPOINTS if given.name == CHECKPOINT else None
    else:
        raise OptionError(
            f"execution.savepoint.path '{savepoint}' is not a savepoint: no Spark checkpoint there",
            hint="use the path STOP JOB ... WITH SAVEPOINT printed (a job's directory), or RESET 'execution.savepoint.path'",
        )
    shutil.copytree(source, directory / CHECKPOINT)
    forget_query_id(directory / CHECKPOINT)
    for other in sorted(source.parent.glob(f"{CHECKPOINT}-*")) if source.name == CHECKPOINT else []:
        if is_checkpoint(other):  # a statement set's other INSERTs
            shutil.copytree(other, directory / other.name)
            forget_query_id(directory / other.name)
    for kept in KEPT_WITH_STATE:  # what the state was built with goes with it
        if (source.parent / kept).is_dir():
            shutil.copytree(source.parent / kept, directory / kept, dirs_exist_ok=True)
        elif (source.parent / kept).is_file():
            shutil.copy2(source.parent / kept, directory / kept)
    if side is not None and side.is_dir():
        shutil.copytree(side, directory / SIDE_CHECKPOINTS)
        for checkpoint in (directory / SIDE_CHECKPOINTS).iterdir():
            forget_query_id(checkpoint)
    return source


def forget_query_id(checkpoint: Path) -> None:
    """Give a copied checkpoint a query id of its own (Spark keeps it in `metadata`, with a checksum beside it)."""
    metadata = checkpoint / "metadata"
    if metadata.is_file():
        metadata.write_text(json.dumps({"id": str(uuid.uuid4())}, separators=(",", ":")), encoding="utf-8")
        (checkpoint / ".metadata.crc").unlink(missing_ok=True)  # Hadoop checks a file only against a checksum it has
