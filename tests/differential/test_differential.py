"""streamshell's final result of each case equals Apache Flink's (PyFlink, same SQL, same files).

Which cases run: the ones whose case.json says `"default": true` (a few, in every `make test`), or every case
with STREAMSHELL_DIFFERENTIAL=all (`make test-differential`), or a comma-separated list of names in
STREAMSHELL_DIFFERENTIAL. Flink's results come from one PyFlink run for all selected cases, cached by a hash of
the case files, so a second run starts no Flink. A case fails with the first line of streamshell's error, or
with a diff of the final rows; a case with a `known_difference` in its case.json is expected to fail.
"""

from __future__ import annotations

import os

import pytest

from differential import compare
from differential.cases import load_cases

SELECTION = os.environ.get("STREAMSHELL_DIFFERENTIAL", "").strip()


def selected_cases():
    if SELECTION == "all":
        return load_cases()
    if SELECTION:
        return load_cases([n.strip() for n in SELECTION.split(",") if n.strip()])
    return [c for c in load_cases() if c.default]


CASES = selected_cases()


@pytest.fixture(scope="module")
def flink():
    try:
        return compare.flink_results(CASES)
    except compare.FlinkUnavailable as e:
        pytest.fail(f"Flink side unavailable: {e}", pytrace=False)


def with_marks(case):  # noqa: ANN001, ANN201
    """A case whose difference from Flink is known and documented is an expected failure (strict: it is reported
    when it starts to pass)."""
    marks = [pytest.mark.xfail(reason=case.known_difference, strict=True)] if case.known_difference else []
    return pytest.param(case, marks=marks, id=case.name)


@pytest.mark.parametrize("case", [with_marks(c) for c in CASES])
def test_same_result_as_flink(case, flink, tmp_path):
    ok, message, _ = compare.check_case(case, flink[case.name], tmp_path)
    if not ok:
        pytest.fail(message, pytrace=False)
