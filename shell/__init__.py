"""streamshell: an interactive streaming SQL shell on Spark Structured Streaming."""

__version__ = "0.1.0"
