"""Formats: a topic's record bytes to a table's columns and back (json, raw, csv, debezium-json).

Why it exists: connectors move bytes and tables declare columns; formats translate between them with Spark SQL
expressions only, and report records that do not decode in an error column instead of failing the query.
Start at `registry.format_options` (which format and options a table uses) and `base.Format` (the contract).
"""
