CREATE TABLE texts (
  id INT,
  s STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/texts.json',
  'format' = 'json'
);

-- TIMESTAMP_LTZ as text: PyFlink cannot hand over its values
SELECT id AS id,
       s AS s,
       TRY_CAST(s AS TIMESTAMP(3)) AS as_timestamp_3,
       TRY_CAST(s AS TIMESTAMP(0)) AS as_timestamp_0,
       TRY_CAST(s AS TIMESTAMP) AS as_timestamp,
       CAST(TRY_CAST(s AS TIMESTAMP_LTZ(3)) AS STRING) AS as_ltz_3
FROM texts;
