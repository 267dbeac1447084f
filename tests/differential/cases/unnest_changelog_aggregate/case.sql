CREATE TABLE orders (
  id INT,
  cust STRING,
  tags ARRAY<STRING>,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'debezium-json'
);

SELECT t.tag, COUNT(*) AS n, COUNT(DISTINCT o.cust) AS custs, MAX(o.id) AS last_id
FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag)
GROUP BY t.tag;
