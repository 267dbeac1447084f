"""Looking at a topic before declaring a table on it: `PRINT 'topic'` and `DESCRIBE TOPIC 'topic' SAMPLE n`.

Why it exists: the first question about a topic is "what is in it?", asked before any CREATE TABLE. This package
answers it without a table: `sample` reads raw messages (Spark's Kafka source, or pulsar-client for Pulsar),
`infer` turns sampled messages into a proposed CREATE TABLE (pure Python), and `commands` runs both statements
for the session and returns ordinary results.
"""
