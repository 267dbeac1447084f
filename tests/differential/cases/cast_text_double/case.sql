CREATE TABLE texts (
  id INT,
  s STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/texts.json',
  'format' = 'json'
);

-- NaN and the infinities as text in *_kind: PyFlink cannot hand them over as numbers
SELECT id AS id,
       s AS s,
       IF(ABS(TRY_CAST(s AS DOUBLE)) <= 1.7976931348623157E308, TRY_CAST(s AS DOUBLE), CAST(NULL AS DOUBLE)) AS as_double,
       IF(ABS(TRY_CAST(s AS DOUBLE)) <= 1.7976931348623157E308, 'finite', CAST(TRY_CAST(s AS DOUBLE) AS STRING)) AS double_kind,
       IF(ABS(TRY_CAST(s AS FLOAT)) <= 3.4028234663852886E38, TRY_CAST(s AS FLOAT), CAST(NULL AS FLOAT)) AS as_float,
       IF(ABS(TRY_CAST(s AS FLOAT)) <= 3.4028234663852886E38, 'finite', CAST(TRY_CAST(s AS FLOAT) AS STRING)) AS float_kind
FROM texts;
