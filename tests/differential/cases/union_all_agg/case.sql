CREATE TABLE web_orders (
  customer STRING,
  amount DECIMAL(10, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/web_orders.json',
  'format' = 'json'
);

CREATE TABLE app_orders (
  customer STRING,
  amount DECIMAL(10, 2),
  device STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/app_orders.json',
  'format' = 'json'
);

SELECT customer AS customer, COUNT(*) AS order_count, SUM(amount) AS total, COUNT(DISTINCT channel) AS channels
FROM (
  SELECT customer, amount, 'web' AS channel FROM web_orders
  UNION ALL
  SELECT customer, amount, 'app' AS channel FROM app_orders
) AS all_orders
GROUP BY customer;
