"""Example Python functions for streamshell (docs/functions.md): one of each kind.

    SET 'python.files' = 'examples/functions/text_functions.py';
    CREATE TEMPORARY FUNCTION count_char AS 'text_functions.count_char' LANGUAGE PYTHON;
    CREATE TEMPORARY FUNCTION split_words AS 'text_functions.split_words' LANGUAGE PYTHON;
    CREATE TEMPORARY FUNCTION shout AS 'text_functions.shout' LANGUAGE PYTHON;
    CREATE TEMPORARY FUNCTION median AS 'text_functions.median' LANGUAGE PYTHON;
"""

from shell.udf import udaf, udf, udtf


@udf(result_type="BIGINT")
def count_char(text, char):
    """Nexmark's CountChar (query 14): how often the first character of `char` occurs in `text`; 0 for NULL."""
    if text is None or not char:
        return 0
    return text.count(char[0])


@udf(result_type="STRING", func_type="pandas")
def shout(text):
    """Vectorised: a pandas Series of strings in, the same upper-cased with a '!' out (NULL stays NULL)."""
    return text.str.upper() + "!"


@udtf(result_types=["STRING", "INT"])
def split_words(line):
    """A table function: one row (word, its length) per word of the line; no rows for NULL or ''."""
    for word in (line or "").split():
        yield word, len(word)


@udaf(result_type="DOUBLE", func_type="pandas")
def median(values):
    """A vectorised aggregate: the median of a group's values (NULLs ignored; NULL for none)."""
    values = values.dropna()
    return None if values.empty else float(values.median())
