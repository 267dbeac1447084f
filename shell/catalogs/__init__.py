"""The session's catalogs: the kinds CREATE CATALOG makes (ours, Pulsar, JDBC), name resolution over them, and the
catalog statements (SHOW CATALOGS, USE, CREATE DATABASE ...)."""
