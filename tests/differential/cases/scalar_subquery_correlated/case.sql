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
SELECT c.id AS id, c.name AS name,
  (SELECT SUM(o.amount) FROM orders AS o WHERE o.customer_id = c.id) AS total,
  (SELECT COUNT(*) FROM holds AS h WHERE h.customer_id = c.id AND h.reason <> 'address') AS open_holds,
  (SELECT MAX(o.order_id) FROM orders AS o WHERE c.id = o.customer_id AND o.amount > 5) AS last_big
FROM customers AS c
WHERE c.tier IS NOT NULL OR (SELECT COUNT(*) FROM orders AS o WHERE o.customer_id = c.id) > 0;
