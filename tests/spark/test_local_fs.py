"""Hadoop's local file system without a process per file (shell/engine/local_fs.py, jvm/localfs): the test run's
Spark uses it, it writes, reads, renames and describes files as Hadoop's own does, and it starts no process."""

from __future__ import annotations

import stat

import pytest

from shell.engine import local_fs

pytestmark = pytest.mark.spark


@pytest.fixture
def jvm(spark_runtime):
    if not local_fs.jars():
        pytest.fail("the localfs bundle is not built: run `scripts/jvm-deps localfs` (make setup does)")
    spark = spark_runtime.get()
    return spark.sparkContext._jvm, spark.sparkContext._jsc.hadoopConfiguration()


def test_spark_uses_it_for_both_of_hadoops_file_apis(jvm):
    java, conf = jvm
    uri = java.java.net.URI("file:///")
    assert java.org.apache.hadoop.fs.FileSystem.get(uri, conf).getRawFileSystem().getClass().getName() == (
        "dev.streamshell.fs.NoForkRawLocalFileSystem")
    context = java.org.apache.hadoop.fs.FileContext.getFileContext(uri, conf)
    assert context.getDefaultFileSystem().getClass().getName() == local_fs.ABSTRACT_FILE_SYSTEM


def test_an_atomic_write_leaves_the_file_its_checksum_and_hadoops_permissions(jvm, tmp_path):
    java, conf = jvm
    target = java.org.apache.hadoop.fs.Path(f"file://{tmp_path}/logs/0")
    manager = java.org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.create(
        target.getParent(), conf)
    manager.mkdirs(target.getParent())
    stream = manager.createAtomic(target, False)
    stream.write(bytearray(b"v1\n{}"))
    stream.close()  # written to a temporary file, then renamed: the rename reads the files' link status
    written = tmp_path / "logs" / "0"
    assert written.read_bytes() == b"v1\n{}"
    assert (tmp_path / "logs" / ".0.crc").is_file(), "the checksum file, as Hadoop's LocalFileSystem writes it"
    assert stat.S_IMODE(written.stat().st_mode) == 0o644, "Hadoop's default file permission, its umask 022 applied"
    assert [p.name for p in (tmp_path / "logs").iterdir() if "tmp" in p.name] == [], "no temporary file left"
    status = java.org.apache.hadoop.fs.FileSystem.get(target.toUri(), conf).getFileStatus(target)
    assert (status.getLen(), status.isDirectory(), status.getPermission().toShort()) == (
        5, False, stat.S_IMODE(written.stat().st_mode))


def test_permissions_set_are_read_back(jvm, tmp_path):
    java, conf = jvm
    path = java.org.apache.hadoop.fs.Path(f"file://{tmp_path}/f")
    fs = java.org.apache.hadoop.fs.FileSystem.get(path.toUri(), conf)
    fs.create(path, True).close()
    fs.setPermission(path, java.org.apache.hadoop.fs.permission.FsPermission(0o640))
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o640
    assert fs.getFileStatus(path).getPermission().toShort() == 0o640
    assert fs.mkdirs(java.org.apache.hadoop.fs.Path(f"file://{tmp_path}/a/b"), java.org.apache.hadoop.fs.permission.FsPermission(0o750))
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o750


def test_a_link_is_described_as_hadoop_describes_it(jvm, tmp_path):
    java, conf = jvm
    (tmp_path / "real").write_text("abc")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "relative").symlink_to("real")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    Path = java.org.apache.hadoop.fs.Path
    fs = java.org.apache.hadoop.fs.FileSystem.get(Path(f"file://{tmp_path}").toUri(), conf).getRawFileSystem()
    for name in ("link", "relative"):
        own = fs.getFileLinkStatus(Path(f"file://{tmp_path}/{name}"))
        assert own.isSymlink() and own.getSymlink().toString() == f"file:{tmp_path}/real", name
        assert (own.getLen(), own.isDirectory()) == (3, False), "the status of what it points to"
    assert fs.getLinkTarget(Path(f"file://{tmp_path}/relative")).toString() == "real", "the link's text, as is"
    followed = fs.getFileStatus(Path(f"file://{tmp_path}/link"))
    assert not followed.isSymlink() and followed.getLen() == 3
    dangling = fs.getFileLinkStatus(Path(f"file://{tmp_path}/dangling"))
    assert dangling.isSymlink() and dangling.getLen() == 0


def test_its_operations_start_no_process_where_hadoops_own_start_one(jvm, tmp_path):
    """The point of it: recorded by the JVM's flight recorder (its `jdk.ProcessStart` events) while a file is
    written atomically, renamed, described and has its permissions set; Hadoop's own raw local file system, doing
    one of those, is recorded starting `chmod`, which shows that the recording sees such processes."""
    java, conf = jvm
    Path = java.org.apache.hadoop.fs.Path

    def processes_started(work) -> list[str]:  # noqa: ANN001 - a Python function that uses the JVM
        recording = java.jdk.jfr.Recording()
        recording.enable("jdk.ProcessStart")
        recording.start()
        try:
            work()
        finally:
            recording.stop()
        dump = java.java.io.File(str(tmp_path / f"{len(list(tmp_path.iterdir()))}.jfr")).toPath()
        recording.dump(dump)
        recording.close()
        events = java.jdk.jfr.consumer.RecordingFile.readAllEvents(dump)
        commands = [str(events.get(i).getValue("command")) for i in range(events.size())]
        return [c for c in commands if c.split(" ")[0] in ("chmod", "readlink", "stat", "ls")]

    def checkpoint_writes() -> None:
        target = Path(f"file://{tmp_path}/offsets/0")
        manager = java.org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.create(
            target.getParent(), conf)
        manager.mkdirs(target.getParent())
        stream = manager.createAtomic(target, False)
        stream.write(bytearray(b"v1"))
        stream.close()
        fs = java.org.apache.hadoop.fs.FileSystem.get(target.toUri(), conf)
        fs.getFileStatus(target)
        fs.setPermission(target, java.org.apache.hadoop.fs.permission.FsPermission(0o600))
        fs.getRawFileSystem().getFileLinkStatus(target)

    assert processes_started(checkpoint_writes) == []

    def hadoops_own() -> None:
        raw = java.org.apache.hadoop.fs.RawLocalFileSystem()
        raw.initialize(java.java.net.URI("file:///"), conf)
        (tmp_path / "plain").write_text("x")
        raw.setPermission(Path(f"file://{tmp_path}/plain"), java.org.apache.hadoop.fs.permission.FsPermission(0o600))

    assert [c.split(" ")[0] for c in processes_started(hadoops_own)] == ["chmod"]


def test_a_missing_file_is_not_found(jvm, tmp_path):
    from py4j.protocol import Py4JJavaError

    java, conf = jvm
    missing = java.org.apache.hadoop.fs.Path(f"file://{tmp_path}/nothing")
    fs = java.org.apache.hadoop.fs.FileSystem.get(missing.toUri(), conf)
    assert not fs.exists(missing)
    with pytest.raises(Py4JJavaError, match="FileNotFoundException"):
        fs.getFileStatus(missing)
    with pytest.raises(Py4JJavaError, match="FileNotFoundException"):
        fs.getRawFileSystem().getFileLinkStatus(missing)
