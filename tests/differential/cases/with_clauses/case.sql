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

CREATE TABLE cities (
  city_id INT,
  city STRING,
  PRIMARY KEY (city_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/cities.json',
  'format' = 'debezium-json'
);

WITH per_city AS (
  SELECT u.city_id AS city_id, COUNT(*) AS n, MAX(o.qty) AS top
  FROM orders AS o JOIN users AS u ON o.user_id = u.user_id
  GROUP BY u.city_id
), named AS (
  SELECT c.city AS city, p.n AS n, p.top AS top FROM per_city AS p JOIN cities AS c ON p.city_id = c.city_id
)
SELECT city, n, top FROM named WHERE n > 1;
