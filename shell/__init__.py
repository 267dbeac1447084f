"""streamshell: an interactive streaming SQL shell on Spark Structured Streaming."""

from shell import compiled_sql

__version__ = "0.1.0"

# Before anything imports sqlglot: a fresh compiled SQL front end, if one was built, goes first.
compiled_sql.activate()
