"""Benchmark commands (run with `python -m benchmarks.<name>`)."""
