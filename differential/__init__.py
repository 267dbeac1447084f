"""Differential tests: the same SQL over the same bounded files in streamshell and in Apache Flink (PyFlink).

Why it exists: streamshell promises Flink SQL's meaning (dynamic tables, changelogs, event time), and the surest
check of that promise is Flink itself. `cases` reads the case folders and holds what both sides share
(statement splitting, value normalization, changelog materialization; standard library only). `flink_runner`
runs cases under PyFlink in its own virtual environment (.venv-flink, made by scripts/flink-venv) and must never
import the `shell` package. `compare` runs in streamshell's .venv: it runs the Flink side through a subprocess
(results cached by a hash of the case files), runs streamshell's CLI on the same script, and diffs the results.
See docs/differential.md.
"""
