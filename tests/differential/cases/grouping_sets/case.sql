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

-- orders per city and user, per city, and in all: ROLLUP over a join of two changelogs
SELECT u.city_id AS city_id, o.user_id AS user_id, COUNT(*) AS n, SUM(o.qty) AS qty
FROM orders AS o JOIN users AS u ON o.user_id = u.user_id
GROUP BY ROLLUP (u.city_id, o.user_id);
