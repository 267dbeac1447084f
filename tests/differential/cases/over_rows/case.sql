CREATE TABLE payments (
  account STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/payments.json',
  'format' = 'json'
);

SELECT account, ts, amount,
       SUM(amount) OVER last3 AS sum3,
       COUNT(amount) OVER last3 AS amounts3,
       COUNT(*) OVER last3 AS rows3,
       MIN(amount) OVER last3 AS min3,
       MAX(amount) OVER last3 AS max3,
       AVG(amount) OVER last3 AS avg3
FROM payments
WINDOW last3 AS (PARTITION BY account ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);
