CREATE TABLE sales (
  shop STRING,
  qty INT,
  price DECIMAL(8, 2),
  weight DOUBLE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/sales.json',
  'format' = 'json'
);

SELECT window_start AS window_start, window_end AS window_end, shop AS shop,
       SUM(DISTINCT qty) AS distinct_qty, AVG(DISTINCT qty) AS average_qty, COUNT(DISTINCT qty) AS qtys,
       SUM(DISTINCT price) AS distinct_prices, SUM(DISTINCT weight) AS distinct_weights, SUM(qty) AS total
FROM TABLE(TUMBLE(TABLE sales, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, shop;
