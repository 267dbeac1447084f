CREATE TABLE users (
  user_id INT,
  name STRING,
  city_id INT,
  account STRING,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/users.json',
  'format' = 'debezium-json'
);

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

SELECT u.name AS name, t.n AS n, t.total AS total
FROM users AS u
LEFT JOIN (SELECT user_id, COUNT(*) AS n, SUM(qty) AS total FROM orders GROUP BY user_id) AS t
  ON u.user_id = t.user_id;
