"""Runs plans on Spark: the Spark session itself, streaming queries, and the changelog engine."""
