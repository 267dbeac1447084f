CREATE TABLE orders (
  order_id BIGINT,
  customer_id INT,
  amount DECIMAL(10, 2),
  order_time TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'json'
);

CREATE TABLE customers (
  id INT,
  name STRING,
  tier STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/customers.json',
  'format' = 'debezium-json'
);

SELECT o.order_id AS order_id, o.amount AS amount, c.name AS customer_name, c.tier AS tier
FROM orders AS o
LEFT JOIN customers AS c ON o.customer_id = c.id;
