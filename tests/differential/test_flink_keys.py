"""shell/flink_keys.py is what the Flink beside it declares: written again from PyFlink's jars, it is unchanged.

The differential tier has .venv-flink (PyFlink, the Flink the cases are compared with); a Flink upgrade that adds
or renames keys fails here until `scripts/flink-config-keys` writes the list again (and the new keys get a reason
in shell/flink_settings.py, which tests/unit/test_flink_settings.py checks).
"""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.cli import ROOT

pytestmark = pytest.mark.differential


def test_the_committed_flink_keys_are_the_jars_keys(tmp_path):
    written = tmp_path / "flink_keys.py"
    done = subprocess.run([str(ROOT / "scripts" / "flink-config-keys"), str(written)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert written.read_text() == (ROOT / "shell" / "flink_keys.py").read_text()
