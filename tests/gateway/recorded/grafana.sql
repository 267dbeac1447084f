-- The queries Grafana's PostgreSQL data source sends: its health check (pgx's ping), the server version its
-- settings page reads, the TimescaleDB check, and its query editor's table and column pickers. Each ends at '-- next'.
-- ping
-- next
SELECT 1
-- next
SELECT current_setting('server_version_num')::int/100 as version
-- next
SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'
-- next
select quote_ident(table_name) as "table" from information_schema.tables
    where quote_ident(table_schema) not in ('information_schema',
                             'pg_catalog',
                             '_timescaledb_cache',
                             '_timescaledb_catalog',
                             '_timescaledb_internal',
                             '_timescaledb_config',
                             'timescaledb_information',
                             'timescaledb_experimental')
      and table_type = 'BASE TABLE' and quote_ident(table_schema) IN (SELECT
    CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
  FROM
    generate_series(
      array_lower(string_to_array(current_setting('search_path'),','),1),
      array_upper(string_to_array(current_setting('search_path'),','),1)
    ) as i,
    string_to_array(current_setting('search_path'),',') s
  )
-- next
select quote_ident(column_name) as "column", data_type as "type"
    from information_schema.columns
    where quote_ident(table_name) = 'clicks'
-- next
SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'clicks' ORDER BY ordinal_position
