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

CREATE VIEW running_totals AS
SELECT account, ts, amount,
       SUM(amount) OVER w AS running_total,
       COUNT(*) OVER w AS payments_so_far,
       MIN(amount) OVER w AS smallest_so_far
FROM payments
WINDOW w AS (PARTITION BY account ORDER BY ts);

SELECT account, ts, amount, running_total, payments_so_far, smallest_so_far
FROM running_totals
WHERE payments_so_far > 1;
