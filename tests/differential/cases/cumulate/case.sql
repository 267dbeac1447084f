CREATE TABLE orders (
  order_id INT,
  item STRING,
  amount DECIMAL(10, 2),
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'json'
);

SELECT window_start AS window_start, window_end AS window_end,
       COUNT(*) AS order_count, SUM(amount) AS revenue
FROM TABLE(CUMULATE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '3' MINUTE))
GROUP BY window_start, window_end;
