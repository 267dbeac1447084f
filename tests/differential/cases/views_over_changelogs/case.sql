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

CREATE VIEW active_orders AS SELECT order_id, user_id, item_id, qty FROM orders WHERE qty > 1;

CREATE VIEW user_totals AS SELECT user_id, SUM(qty) AS total, COUNT(*) AS n FROM active_orders GROUP BY user_id;

SELECT u.name AS name, t.total AS total, t.n AS n
FROM users AS u
LEFT JOIN user_totals AS t ON u.user_id = t.user_id;
