"""The list of Spark's built-in function names that planning checks calls against (shell/sql/spark_functions.py) is
the installed Spark's own: a Spark upgrade that adds or drops a function fails here, not in a user's query."""

from __future__ import annotations

import pytest

from shell.sql.spark_functions import SPARK_FUNCTIONS, builtin_names

pytestmark = pytest.mark.spark


def test_the_list_is_the_running_sparks_built_in_functions(spark_runtime):
    names = builtin_names(spark_runtime.get())
    assert len(names) > 300
    assert names == set(SPARK_FUNCTIONS), (
        f"Spark has {sorted(names - SPARK_FUNCTIONS)[:20]} more and {sorted(SPARK_FUNCTIONS - names)[:20]} fewer: "
        "write the list again with `.venv/bin/python -m shell.sql.spark_functions --write`")
