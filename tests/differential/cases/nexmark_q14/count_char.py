"""Nexmark's CountChar (query 14) as a Python function, for PyFlink and for streamshell: each engine's `udf`
decorator takes the same arguments (streamshell's is shell/udf.py)."""

try:
    from pyflink.table.udf import udf
except ImportError:
    from shell.udf import udf


@udf(result_type="BIGINT")
def count_char(text, char):
    """How often the first character of `char` occurs in `text` (Nexmark's Java CountChar); 0 for NULL."""
    if text is None or not char:
        return 0
    return text.count(char[0])
