CREATE TABLE orders (
  order_id INT,
  user_id INT,
  qty INT
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/old_orders.json',
  'format' = 'json'
);

CREATE TABLE users (
  user_id INT,
  city_id INT,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/users.json',
  'format' = 'debezium-json'
);

SELECT u.city_id AS city_id, COUNT(*) AS n, SUM(o.qty) AS qty
FROM orders /*+ OPTIONS('path' = '${data}/orders.json', 'format' = 'debezium-json') */ AS o
JOIN users AS u ON o.user_id = u.user_id
GROUP BY u.city_id;
