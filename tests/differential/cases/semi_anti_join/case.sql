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

SELECT o.order_id AS order_id, o.customer_id AS customer_id, o.amount AS amount
FROM orders AS o
WHERE o.customer_id IN (SELECT id FROM customers WHERE tier <> 'bronze')
  AND NOT EXISTS (SELECT 1 FROM holds AS h WHERE h.customer_id = o.customer_id)
  AND o.amount > 1;
