"""Connectors: how a table's rows are read from and written to a system (topics, files, generators)."""
