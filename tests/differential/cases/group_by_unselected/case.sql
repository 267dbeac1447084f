CREATE TABLE orders (
  order_id INT,
  customer STRING,
  amount DECIMAL(10, 2),
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'debezium-json'
);

SELECT COUNT(*) AS order_count, SUM(amount) AS total
FROM orders
GROUP BY customer
HAVING SUM(amount) < 30;
