CREATE TABLE texts (
  id INT,
  s STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/texts.json',
  'format' = 'json'
);

SELECT id AS id,
       s AS s,
       TRY_CAST(s AS INT) AS as_int,
       TRY_CAST(s AS TINYINT) AS as_tinyint,
       TRY_CAST(s AS SMALLINT) AS as_smallint
FROM texts;
