CREATE TABLE orders (
  order_id INT,
  user_id INT,
  item_id INT,
  qty INT,
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'debezium-json'
);

-- AVG of integers is an integer in Flink (the sum divided as integers), beside MIN (a keyed stage) and a DOUBLE
SELECT user_id, AVG(qty) AS avg_qty, AVG(CAST(qty AS DOUBLE)) AS avg_double, MIN(qty) AS min_qty, AVG(-qty) AS avg_neg
FROM orders
GROUP BY user_id;
