CREATE TABLE texts (
  id INT,
  s STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/texts.json',
  'format' = 'json'
);

-- the date as text: PyFlink cannot hand over a date of the year 0
SELECT id AS id,
       s AS s,
       CAST(TRY_CAST(s AS DATE) AS STRING) AS as_date
FROM texts;
