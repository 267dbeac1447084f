CREATE TABLE payments (
  account STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '10' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/payments.json',
  'format' = 'json'
);

SELECT account, ts, amount,
       SUM(amount) OVER (PARTITION BY account ORDER BY ts
                         RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND CURRENT ROW) AS sum_10m,
       COUNT(*) OVER (PARTITION BY account ORDER BY ts
                      RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND CURRENT ROW) AS payments_10m,
       MAX(amount) OVER (PARTITION BY account ORDER BY ts
                         RANGE BETWEEN INTERVAL '10' MINUTE PRECEDING AND CURRENT ROW) AS max_10m
FROM payments;
