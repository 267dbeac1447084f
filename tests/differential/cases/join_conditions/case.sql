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

-- a comma join with its key in WHERE, an inner join with a non-equality, a LEFT JOIN filtering its joined table
SELECT o.order_id AS order_id, u.name AS name, c.city AS city
FROM orders AS o, users AS u
LEFT JOIN cities AS c ON u.city_id = c.city_id AND c.city <> 'paris'
WHERE o.user_id = u.user_id AND o.qty > 1 AND o.order_id <> u.user_id;
