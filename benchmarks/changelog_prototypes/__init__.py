"""Prototypes of the upsert-changelog engine on Spark, one script per design (see docs/changelog-engine.md)."""
