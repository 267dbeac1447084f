"""streamshell installed as a package, not a checkout: the wheel, installed with its dependencies in a fresh virtual
environment, gives a `streamshell` that runs from any folder, and what it starts imports the installed package.

Why it exists: in a checkout everything imports the checkout (an editable install, the working directory), so
a module or data file missing from the wheel, or a job process, Python worker or cluster zip that finds the
package by the checkout's path, only shows up once it is installed elsewhere. This test builds the wheel from the
checkout's files (tracked and new ones, not what .gitignore leaves out: never a stale build/ folder), installs it
(pip's cache makes the dependencies a copy, not a download), and from a folder outside the checkout, with no
PYTHONPATH, runs `streamshell -f` on a script whose detached INSERT job (a process of its own) calls a Python
function returning the file of the `shell` package that Spark's Python worker imported. About 40 s with pip's
cache warm (docs/development.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.e2e.cli import ROOT

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.environ.get("STREAMSHELL_INSTALL_TESTS") != "1",
                       reason="a fresh venv and a wheel, ~40 s: make test-pythons runs it with the other installs"),
]

FUNCTION = '''
"""A function that says where the `shell` package it runs beside was imported from."""
import sys

from shell.udf import udf


@udf(result_type="STRING")
def shell_file(n):
    import shell

    return f"{shell.__file__}|{sys.executable}"
'''


def checkout_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode()
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    for name in checkout_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path / "dist"),
                    str(source)], check=True, capture_output=True, text=True, timeout=600)
    (wheel,) = (tmp_path / "dist").glob("streamshell-*.whl")
    return wheel


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's terminal without this test run's: no PYTHONPATH, no virtual environment, and
    no PYSPARK_PYTHON (the test session's own Spark set it to the checkout's interpreter)."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONHOME", "PYTHONSTARTUP"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    venv_bin = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return {**env, **extra}


def test_the_installed_wheel_runs_a_detached_job_whose_functions_import_the_installed_package(tmp_path):
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        packaged = set(archive.namelist())
    data_files = [n for n in checkout_files() if n.startswith("shell/") and not n.endswith(".py")]
    assert "shell/engine/log4j2.properties" in data_files
    assert not [n for n in data_files if n not in packaged], "package-data in pyproject.toml misses these"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
                             capture_output=True, text=True, timeout=1200, env=clean_env())
    assert install.returncode == 0, install.stderr[-3000:]

    work = tmp_path / "elsewhere"  # outside the checkout: nothing here or in the environment points back to it
    work.mkdir()
    (work / "where_from.py").write_text(FUNCTION)
    out = tmp_path / "rows"
    (work / "job.sql").write_text(f"""
SET 'table.dml-sync' = 'true';
SET 'python.files' = '{work / "where_from.py"}';
CREATE TEMPORARY FUNCTION shell_file AS 'where_from.shell_file' LANGUAGE PYTHON;
CREATE TEMPORARY TABLE numbers (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '3');
CREATE TEMPORARY TABLE seen (n INT, shell_file STRING) WITH ('connector' = 'filesystem', 'path' = '{out}',
  'format' = 'json');
INSERT INTO seen SELECT n, shell_file(n) FROM numbers;
""")
    home = tmp_path / "home"
    run = subprocess.run([str(venv / "bin" / "streamshell"), "-f", "job.sql"], cwd=work, capture_output=True,
                         text=True, timeout=900, env=clean_env(STREAMSHELL_HOME=str(home)))
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Job 'insert-into_seen' started" in run.stdout + run.stderr  # a detached job, which the script waited for
    (record,) = [json.loads(p.read_text()) for p in (home / "jobs").glob("*/job.json")]
    assert [f["name"] for f in record["functions"]] == ["shell_file"]

    rows = sorted((row["n"], row["shell_file"]) for part in out.rglob("part-*")
                  for row in map(json.loads, part.read_text().splitlines()))
    assert [n for n, _ in rows] == [1, 2, 3]
    site_packages = next((venv / "lib").glob("python3.*/site-packages"))
    for _, where in rows:
        package_file, worker_python = where.split("|")
        assert Path(package_file).parent == site_packages / "shell", f"the worker imported {package_file}"
        assert Path(worker_python).parent == venv / "bin", f"the worker ran {worker_python}"

    # A cluster's executors get the package as a zip made from the installed files (shell/engine/pyfiles.py).
    shipped = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import sys, zipfile; from pathlib import Path; from shell.engine import pyfiles; "
         "z = pyfiles.package_zip(Path(sys.argv[1])); print(pyfiles.package_root()); "
         "print(*zipfile.ZipFile(z).namelist(), sep='\\n')", str(tmp_path / "pyfiles")],
        cwd=work, capture_output=True, text=True, timeout=120, env=clean_env(), check=True).stdout.splitlines()
    assert Path(shipped[0]) == site_packages / "shell"
    assert {"shell/engine/log4j2.properties", "shell/jobs/process.py"} <= set(shipped[1:])
