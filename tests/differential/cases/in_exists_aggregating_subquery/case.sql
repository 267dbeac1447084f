CREATE TABLE customers (
  id INT,
  name STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/customers.json',
  'format' = 'debezium-json'
);

CREATE TABLE orders (
  order_id INT,
  customer_id INT,
  amount INT,
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'debezium-json'
);

SELECT 'repeat buyer' AS kind, id, name FROM customers
WHERE id IN (SELECT customer_id FROM orders GROUP BY customer_id HAVING COUNT(*) >= 2)
UNION ALL
SELECT 'big spender' AS kind, id, name FROM customers c
WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.amount > 0
              GROUP BY o.customer_id HAVING SUM(o.amount) > 100)
UNION ALL
SELECT 'no big order' AS kind, id, name FROM customers c
WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id GROUP BY o.customer_id HAVING MAX(o.amount) >= 80);
