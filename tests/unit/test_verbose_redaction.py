"""`-v` shows tracebacks; a password in one (an exception's message, its cause, the user's text) is hidden as
everywhere else (shell/errors.py: traceback_text, RedactedStream; shell/cli.py puts the stream on stderr)."""

from __future__ import annotations

import sys

import pytest

from shell.cli import main
from shell.errors import RedactedStream, traceback_text
from shell.session import Session

pytestmark = pytest.mark.unit

SECRETS = ("pw-cause-1", "pw-url-2", "pw-bare-3", "pw-jaas-4")


def failing(self, statement):  # noqa: ANN001 - Session.execute's place
    try:
        raise KeyError("'properties.sasl.jaas.config' = 'PlainLoginModule required password=\"pw-jaas-4\";'")
    except KeyError as cause:
        raise ValueError("reading SASL_SSL://bob:pw-url-2@host:9093 and bob:pw-bare-3@h2:9093, "
                         "'auth-params' = 'pw-cause-1'") from cause


def test_traceback_text_is_redacted():
    try:
        failing(None, None)
    except ValueError as error:
        text = traceback_text(error)
    assert "Traceback" in text and "ValueError: reading SASL_SSL://bob:****@host:9093 and bob:****@h2:9093" in text
    assert "KeyError" in text  # the cause is there, its password is not
    assert not [s for s in SECRETS if s in text]


def test_verbose_script_mode_prints_the_traceback_redacted(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(Session, "execute", failing)
    stderr = sys.stderr
    code = main(["-v", "--catalog", str(tmp_path / "home"), "-e", "SHOW TABLES;"])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback (most recent call last)" in err and "internal error" in err
    assert "bob:****@h2:9093" in err
    assert not [s for s in SECRETS if s in err], err
    assert sys.stderr is stderr  # put back


def test_the_redacted_stream_passes_everything_else_through(capsys):
    stream = RedactedStream(sys.stderr)
    assert stream.write("bob:pw-bare-3@h2:9093\n") == len("bob:pw-bare-3@h2:9093\n")
    stream.writelines(["plain ", "text\n"])
    stream.flush()
    assert stream.isatty() == sys.stderr.isatty()
    assert capsys.readouterr().err == "bob:****@h2:9093\nplain text\n"
