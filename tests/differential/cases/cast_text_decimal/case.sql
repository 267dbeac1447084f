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
       TRY_CAST(s AS DECIMAL(5, 2)) AS as_decimal_5_2,
       TRY_CAST(s AS DECIMAL(20, 4)) AS as_decimal_20_4
FROM texts;
