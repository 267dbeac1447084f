"""Renderers: how results look in a terminal or a pipe. Only this package and repl/ may import rich."""
