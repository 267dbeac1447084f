"""The gateway: streamshell's sessions served over the PostgreSQL wire protocol (v3).

Why it exists: a person at a terminal is not the only user. psql, DBeaver and every JDBC tool, Grafana's and
Metabase's Postgres sources, psycopg and pandas all speak this protocol, so one server reaches them all. Each
connection is a `shell.session.Session`, with the CLI's statements, settings, catalog and jobs (one home).

Layers, lowest first: `protocol` (the byte codec, no sockets), `pgtypes` (type OIDs, values as text or binary),
`sqlstate` (errors as ErrorResponse fields), `params` ($n parameters), `scram` (SCRAM-SHA-256), `pgcatalog` (the
pg_catalog / information_schema answers tools send on connect), `compat` (PostgreSQL's session commands that
drivers send: BEGIN, SET x TO y, SHOW x), `results` (a session's Result as wire messages), `connection` (one
client, start to end), `server` (the listener, cancel requests, TLS), `metrics` (Prometheus) and `command` (the
`streamshell gateway` command line). Nothing here imports a terminal library. docs/gateway.md is the user's page.
"""
