"""Files the shell reads or writes never end in a traceback: bad encodings, broken or misplaced state files, full
disks. Each gets one line naming the file and what to do, and the shell starts (or, for a script, exits 2)."""

from __future__ import annotations

import errno
import os

import pytest

from shell.cli import main
from shell.config import read_config_file
from shell.errors import OptionError
from shell.exitcodes import EXIT_OK, EXIT_USAGE
from shell.files import FileProblem, decode_utf8, write_atomically
from shell.logfiles import rotate_logs
from shell.session import Session, SessionOptions


def test_text_that_is_not_utf8_is_named_by_line_column_and_byte():
    with pytest.raises(FileProblem) as info:
        decode_utf8("SELECT 1;\n-- café\n".encode("utf-8") + b"-- caf\xe9\n", "bad.sql")
    assert str(info.value) == "bad.sql:3:7: not UTF-8 text: byte 0xe9 at byte offset 25; save the file as UTF-8"
    assert decode_utf8(b"\xef\xbb\xbfSHOW TABLES;", "bom.sql") == "SHOW TABLES;"


def test_a_script_that_is_not_utf8_is_a_usage_error(tmp_path, capfd):
    script = tmp_path / "bad.sql"
    script.write_bytes(b"SHOW TABLES;\n-- caf\xe9\n")
    code = main(["--catalog", str(tmp_path / "home"), "-f", str(script)])
    err = capfd.readouterr().err
    assert code == EXIT_USAGE
    assert err == f"{script}:2:7: not UTF-8 text: byte 0xe9 at byte offset 19; save the file as UTF-8\n"
    code = main(["--catalog", str(tmp_path / "home"), "-i", str(script), "-e", "SHOW TABLES;"])
    assert code == EXIT_USAGE and "save the file as UTF-8" in capfd.readouterr().err


def test_a_demo_file_that_is_not_utf8_is_a_usage_error(tmp_path, capfd):
    demo = tmp_path / "demo.sql"
    demo.write_bytes(b"\xff")
    assert main(["--catalog", str(tmp_path / "home"), "--demo", str(demo)]) == EXIT_USAGE
    assert capfd.readouterr().err == f"{demo}:1:1: not UTF-8 text: byte 0xff at byte offset 0; save the file as UTF-8\n"


def test_the_shell_starts_with_one_warning_per_bad_file(tmp_path, capfd):
    home = tmp_path / "home"
    (home / "catalog" / "tables" / "t.json").mkdir(parents=True)
    (home / "catalog" / "tables" / "n.json").write_text('{"name": 5}')
    (home / "catalog" / "views").mkdir()
    (home / "catalog" / "views" / "v.json").write_text("not json")
    (home / "config.properties").write_bytes(b"sql-client.verbose = caf\xe9\n")
    code = main(["--catalog", str(home), "-e", "SHOW TABLES;"])
    out, err = capfd.readouterr()
    assert code == EXIT_OK and "Empty set" in out
    tables, views = home / "catalog" / "tables", home / "catalog" / "views"
    assert err.splitlines() == [
        f"streamshell: warning: ignored {home / 'config.properties'}:1:25: not UTF-8 text: byte 0xe9 at byte "
        "offset 24; save the file as UTF-8 (the shell starts without the settings in it)",
        f"streamshell: warning: skipped catalog file {tables / 'n.json'}: 'name' is a number, expected a string; "
        "fix the file or move it away (left as it is)",
        f"streamshell: warning: skipped catalog file {tables / 't.json'}: it is a directory, not a file; move it "
        "away (left as it is)",
        f"streamshell: warning: skipped catalog file {views / 'v.json'}: not valid JSON (line 1, column 1: "
        "Expecting value); fix the file or move it away (left as it is)",
    ]
    assert (home / "config.properties").read_bytes() == b"sql-client.verbose = caf\xe9\n"
    assert (tables / "n.json").read_text() == '{"name": 5}' and (tables / "t.json").is_dir()


def test_bad_lines_of_the_config_file_are_warnings_naming_the_line(tmp_path):
    path = tmp_path / "config.properties"
    path.write_text("sql-client.verbose = maybe\nno equals sign\nsql-client.display.max-column-width = 7\n"
                    "password hunter2\nsql-client.nope = 1\n")  # fmt: skip
    warnings = []
    assert read_config_file(path, warnings.append) == {"sql-client.display.max-column-width": "7"}
    assert warnings == [
        f"{path}:1: setting 'sql-client.verbose' must be one of true, false, got 'maybe'; the line is ignored",
        f"{path}:2: expected key=value, got 'no equals sign'; the line is ignored",
        f"{path}:4: expected key=value, got '****'; the line is ignored",
        f"{path}:5: unknown setting 'sql-client.nope'; the line is ignored",
    ]
    session = Session(SessionOptions(home=tmp_path))
    assert session.warnings == warnings and session.max_column_width() == 7


def test_a_config_file_that_cannot_be_read_is_an_error_without_a_warning_callback(tmp_path):
    (tmp_path / "config.properties").mkdir()
    with pytest.raises(OptionError, match="config.properties: it is a directory, not a file; move it away"):
        read_config_file(tmp_path / "config.properties")
    warnings = []
    assert read_config_file(tmp_path / "config.properties", warnings.append) == {}
    assert len(warnings) == 1


def test_an_atomic_write_replaces_the_file_and_leaves_nothing_else(tmp_path):
    path = tmp_path / "folder" / "record.json"
    write_atomically(path, "one")
    write_atomically(path, "two")
    assert path.read_text() == "two" and os.listdir(path.parent) == ["record.json"]


@pytest.mark.parametrize("step", ["replace", "fsync"])
def test_a_failed_atomic_write_leaves_the_old_file_and_no_temporary_one(tmp_path, monkeypatch, step):
    path = tmp_path / "record.json"
    write_atomically(path, "old")

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, step, full)
    with pytest.raises(OSError, match="No space left on device"):
        write_atomically(path, "new")
    monkeypatch.undo()
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["record.json"]


def test_logs_are_rotated_by_size_keeping_a_few(tmp_path):
    logs = tmp_path / "log"
    logs.mkdir()
    for generation in range(5):
        (logs / "spark.log").write_text(f"run {generation}\n" + "x" * 100)
        (logs / "stderr.log").write_text("small")
        assert rotate_logs(logs, max_bytes=50, backups=3) == [logs / "spark.log"]
    assert sorted(p.name for p in logs.iterdir()) == ["spark.log.1", "spark.log.2", "spark.log.3", "stderr.log"]
    assert (logs / "spark.log.1").read_text().startswith("run 4")
    assert (logs / "spark.log.3").read_text().startswith("run 2")


def test_a_session_rotates_the_logs_of_its_home(tmp_path, monkeypatch):
    from shell import logfiles

    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "spark.log").write_text("x" * 100)
    monkeypatch.setattr(logfiles, "MAX_BYTES", 10)
    Session(SessionOptions(home=tmp_path))
    assert sorted(p.name for p in (tmp_path / "log").iterdir()) == ["spark.log.1"]


def test_stdin_that_is_not_utf8_is_a_usage_error(tmp_path):
    import io

    from shell.script import ScriptRunner

    err = io.StringIO()
    runner = ScriptRunner(Session(SessionOptions(home=tmp_path)), out=io.StringIO(), err=err)
    assert runner.run_bytes(b"SHOW TABLES;\xc3(", "<stdin>") == EXIT_USAGE
    assert err.getvalue() == "<stdin>:1:13: not UTF-8 text: byte 0xc3 at byte offset 12; save the file as UTF-8\n"


def test_the_jvm_stderr_log_is_created_readable_by_its_owner_only(tmp_path):
    from shell.stdio import divert_native_stderr

    with divert_native_stderr(tmp_path / "log" / "stderr.log"):
        pass
    assert (tmp_path / "log" / "stderr.log").stat().st_mode & 0o777 == 0o600
