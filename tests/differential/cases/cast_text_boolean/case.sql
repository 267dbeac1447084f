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
       TRY_CAST(s AS BOOLEAN) AS as_boolean
FROM texts;
