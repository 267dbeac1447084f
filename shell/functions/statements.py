"""The session's function statements: CREATE FUNCTION, DROP FUNCTION, DESCRIBE FUNCTION and SHOW FUNCTIONS.

Why it exists: the session (shell/session.py) dispatches each statement kind to a handler; these are the handlers
for user functions, kept beside the registry they change so the session only wires them in.
"""

from __future__ import annotations

from typing import Any, Callable

from shell.catalog.function_def import PYTHON, FunctionDef
from shell.catalog.functions import FunctionStore
from shell.errors import UnsupportedFeatureError
from shell.functions.registry import FunctionRegistry
from shell.results import Message, Result, Rows
from shell.sql import statements as st


def user_functions(home, settings) -> FunctionRegistry:  # noqa: ANN001 - a Path, a Settings
    """The registry of a session on `home`: its persistent functions, and `python.files` from its settings."""
    return FunctionRegistry(FunctionStore(home / "catalog"), settings.get)


def function_statements(session) -> dict[type, Callable[[Any], Result]]:  # noqa: ANN001 - a Session
    return {
        st.CreateFunction: lambda s: create_function(session, s),
        st.DropFunction: lambda s: drop_function(session, s),
        st.DescribeFunction: lambda s: describe_function(session, s),
    }


def create_function(session, s: st.CreateFunction) -> Result:  # noqa: ANN001 - a Session
    language = s.language or "JAVA"
    if language != PYTHON:
        raise UnsupportedFeatureError(
            f"CREATE FUNCTION ... LANGUAGE {language} is not supported: functions run in Spark's Python workers",
            hint="write the function in Python and add LANGUAGE PYTHON (docs/functions.md)",
        )
    system = bool(s.node is not None and s.node.args.get("system"))
    definition = FunctionDef(s.name, s.target, PYTHON, temporary=s.temporary, system=system and s.temporary)
    outcome = session.functions.create(definition, if_not_exists=s.if_not_exists)
    if outcome == "created":
        return Message("Function has been created.")
    if s.if_not_exists:
        return Message(f"Function '{s.name}' already exists; skipped.")
    return Message(f"Function '{s.name}' already exists with this definition; unchanged.")


def drop_function(session, s: st.DropFunction) -> Result:  # noqa: ANN001 - a Session
    dropped = session.functions.drop(s.name, temporary=s.temporary, if_exists=s.if_exists)
    if not dropped:
        return Message(f"Function '{s.name}' does not exist; skipped.")
    if session.runtime.started and session.functions.find(s.name) is None:
        session.functions.unregister(session.runtime.get(), s.name)
    return Message("Function has been removed.")


def describe_function(session, s: st.DescribeFunction) -> Rows:  # noqa: ANN001 - a Session
    """Flink's layout (`info name`, `info value`); the function's target is imported to say what it is. A built-in
    function is described by its name and kind (Spark runs it; docs/functions.md says how it maps)."""
    from shell.sql.translate import FUNCTION_NAMES

    if s.name.upper() in {n.upper() for n in FUNCTION_NAMES} and s.name.lower() not in \
            {n.lower() for n in session.functions.names()}:
        return Rows(["info name", "info value"], [("name", s.name.upper()), ("kind", "BUILT-IN"),
                                                  ("system function", "TRUE")])
    definition = session.functions.get(s.name)
    loaded = session.functions.loaded(definition)
    result = ", ".join(f"{c} {t}" for c, t in zip(loaded.column_names, loaded.result_types)) \
        if loaded.kind == "table" else loaded.result_types[0]
    rows = [
        ("name", definition.name),
        ("kind", loaded.kind.upper()),
        ("language", definition.language),
        ("target", definition.target),
        ("result type", result),
        ("temporary", str(definition.temporary).upper()),
        ("system function", str(definition.system).upper()),
    ]
    if s.extended:
        rows += [
            ("vectorised", "TRUE (pandas Series, through Arrow)" if loaded.func_type == "pandas" else "FALSE"),
            ("arguments", loaded.arguments_text()),
            ("python.files", session.settings.get("python.files") or "(not set: the module is installed)"),
        ]
    return Rows(["info name", "info value"], rows)


def show_functions(session, s: st.Show) -> Rows:  # noqa: ANN001 - a Session
    """The built-in functions and the user's, sorted by name (a LIKE pattern filters them, as for tables)."""
    from shell.sql.translate import FUNCTION_NAMES

    names = sorted({*FUNCTION_NAMES, *session.functions.names()}, key=str.lower)
    like = getattr(s, "like", None)
    if like is not None:
        import re

        pattern = re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in like),
                             re.IGNORECASE | re.DOTALL)
        keep = (lambda n: not pattern.fullmatch(n)) if getattr(s, "not_like", False) else pattern.fullmatch
        names = [n for n in names if keep(n)]
    return Rows(["function name"], [(n,) for n in names])
