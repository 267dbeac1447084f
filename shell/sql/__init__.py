"""The SQL front end: Flink-style SQL text in, statement dataclasses and Spark SQL out.

split.py finds statements (tokenized once, by scanner.py), parse.py parses them with our sqlglot
dialect (dialect.py, grammar*.py, printer.py, nodes.py) into statements.py dataclasses, translate.py
turns queries into Spark SQL.
The names below are imported lazily, so `import shell.sql.hints` stays cheap and the catalog
package can import from shell.sql without an import cycle.
"""

from __future__ import annotations

import importlib
from typing import Any

from shell import compiled_sql

# A fresh compiled build of these modules (shell/compiled_sql.py), if one is in use, is found first.
__path__[:0] = compiled_sql.sql_package_dirs()

_EXPORTS = {
    "SourceStatement": "shell.sql.split",
    "split_statements": "shell.sql.split",
    "is_complete": "shell.sql.split",
    "parse_script": "shell.sql.parse",
    "parse_statement": "shell.sql.parse",
    "to_spark_sql": "shell.sql.translate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'shell.sql' has no attribute {name!r}")
