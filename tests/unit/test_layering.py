"""The core stays free of terminal libraries: only shell.repl and shell.render may import them."""

import subprocess
import sys

import pytest

CORE_MODULES = [
    "shell.session",
    "shell.script",
    "shell.cli",
    "shell.config",
    "shell.catalog.store",
    "shell.connectors.registry",
    "shell.engine.query",
    "shell.planner.planner",
    "shell.sql.parse",
    "shell.secrets",
    # UI-free parts of the shell's front end: the models behind the live table, completion and demo files
    "shell.render.materialize",
    "shell.repl.sqlcontext",
    "shell.repl.demo_script",
]


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_does_not_import_terminal_libraries(module):
    code = (
        f"import sys, {module}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('prompt_toolkit', 'rich'))\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"{module} pulled in {out}"


def test_core_does_not_import_pyspark_at_startup():
    """The prompt must not wait for pyspark: it is imported when Spark starts, not when the shell does."""
    code = "import sys, shell.cli, shell.session\nprint('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
