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

-- orders and users per user id: a UNION ALL of two changelogs under an aggregate
SELECT user_id, COUNT(*) AS n, MAX(v) AS top
FROM (
  SELECT user_id, qty AS v FROM orders
  UNION ALL
  SELECT user_id, city_id FROM users
) AS t
GROUP BY user_id;
