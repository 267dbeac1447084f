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
  oid INT,
  customer_id INT,
  amount INT,
  PRIMARY KEY (oid) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'debezium-json'
);

CREATE TABLE accounts (
  aid INT,
  owner INT,
  status STRING,
  PRIMARY KEY (aid) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/accounts.json',
  'format' = 'debezium-json'
);

CREATE VIEW big_customers AS
SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id HAVING SUM(amount) > 100;

CREATE VIEW active_owners AS
SELECT owner AS cid, aid FROM accounts WHERE status = 'active';

SELECT 'big' AS kind, id, name FROM customers WHERE id IN (SELECT customer_id FROM big_customers WHERE total < 1000)
UNION ALL
SELECT 'active' AS kind, id, name FROM customers c WHERE EXISTS (SELECT 1 FROM active_owners a WHERE a.cid = c.id)
UNION ALL
SELECT 'never big' AS kind, id, name FROM customers c
WHERE NOT EXISTS (SELECT 1 FROM big_customers b WHERE b.customer_id = c.id);
