"""pyproject.toml builds without packaging warnings: the license is an SPDX expression (PEP 639), which setuptools
reads from version 77 on; the table form (`license = { text = ... }`) makes setuptools warn on every build."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_license_is_an_spdx_expression():
    assert PYPROJECT["project"]["license"] == "Apache-2.0"


def test_the_build_uses_a_setuptools_that_reads_it():
    requirement = next(r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools"))
    lowest = re.fullmatch(r"setuptools>=(\d+)(\.[\d.]+)?", requirement.replace(" ", ""))
    assert lowest is not None and int(lowest.group(1)) >= 77, requirement
