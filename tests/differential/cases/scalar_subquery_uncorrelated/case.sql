CREATE TABLE orders (
  order_id BIGINT,
  customer_id INT,
  amount DECIMAL(10, 2)
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

CREATE TABLE holds (
  hold_id INT,
  customer_id INT,
  reason STRING,
  PRIMARY KEY (hold_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/holds.json',
  'format' = 'debezium-json'
);
SELECT o.order_id AS order_id, o.amount AS amount,
  (SELECT MAX(amount) FROM orders) - o.amount AS below_max,
  (SELECT COUNT(*) FROM customers WHERE tier = 'gold') AS gold_customers
FROM orders AS o
WHERE o.amount * 4 >= (SELECT MAX(amount) FROM orders WHERE customer_id IS NOT NULL);
