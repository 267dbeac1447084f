"""User-defined functions in Python: `CREATE FUNCTION f AS 'module.name' LANGUAGE PYTHON` (docs/functions.md)."""
