CREATE TABLE items (
  id INT,
  name STRING,
  code STRING,
  qty INT,
  price DECIMAL(10, 2),
  ratio DOUBLE,
  ts TIMESTAMP(3),
  tags STRING,
  doc STRING,
  day_text STRING,
  num_text STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/items.json',
  'format' = 'json'
);

SELECT id AS id,
       CASE WHEN qty > 5 THEN 'many' WHEN qty > 0 THEN 'few' WHEN qty IS NULL THEN 'unknown' ELSE 'none' END AS qty_class,
       CASE code WHEN 'ab-123' THEN 1 WHEN 'CD-9' THEN 2 END AS code_number,
       COALESCE(name, code, 'anonymous') AS display_name,
       COALESCE(price, 0) AS price_or_zero,
       NULLIF(qty, 0) AS qty_or_null,
       IF(ratio > 1, 'high', 'low') AS ratio_level,
       name IS NULL AS name_missing,
       code IS NOT NULL AND code <> '' AS has_code,
       CAST(qty AS STRING) AS qty_text,
       CAST(price AS STRING) AS price_text,
       CAST(price AS INT) AS price_int,
       CAST(ratio AS DECIMAL(10, 1)) AS ratio_decimal,
       CAST(qty AS DOUBLE) AS qty_double,
       CAST(qty > 0 AS STRING) AS positive_text,
       TRY_CAST(num_text AS INT) AS parsed_num,
       CAST(day_text AS DATE) AS parsed_day,
       CAST(ts AS STRING) AS ts_text,
       CAST(id AS BIGINT) * 10000000000 AS big_id,
       qty IS DISTINCT FROM 0 AS qty_not_zero
FROM items;
