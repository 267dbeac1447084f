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

-- the two users with the most ordered, over a join, ranked by an aggregate
SELECT u.name AS name, SUM(o.qty) AS total
FROM orders AS o JOIN users AS u ON o.user_id = u.user_id
GROUP BY u.name
ORDER BY total DESC, name
LIMIT 2;
