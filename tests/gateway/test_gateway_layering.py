"""The gateway is UI-free: none of its modules imports a terminal library (only shell.repl and shell.render may)."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

MODULES = ["shell.gateway.command", "shell.gateway.server", "shell.gateway.connection", "shell.gateway.pgcatalog"]


@pytest.mark.parametrize("module", MODULES)
def test_the_gateway_does_not_import_terminal_libraries(module):
    code = (
        f"import sys, {module}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('prompt_toolkit', 'rich'))\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"{module} pulled in {out}"
