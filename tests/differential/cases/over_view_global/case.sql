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

CREATE VIEW known_accounts AS
SELECT account, amount, ts FROM payments WHERE account IS NOT NULL;

SELECT account, ts,
       COUNT(*) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS nth_payment,
       MAX(amount) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS largest_so_far,
       SUM(amount) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS total_so_far
FROM known_accounts
WHERE amount IS NOT NULL OR account = 'c';
