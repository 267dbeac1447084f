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

SELECT n AS n, COUNT(*) AS cities
FROM (SELECT u.city_id AS city_id, COUNT(*) AS n FROM orders AS o JOIN users AS u ON o.user_id = u.user_id GROUP BY u.city_id) AS t
GROUP BY n;
