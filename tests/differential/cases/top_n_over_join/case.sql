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

CREATE VIEW big_orders AS SELECT order_id, user_id, qty FROM orders WHERE qty >= 2;

-- the two biggest orders of each city, over a join of a view with users
SELECT city_id, order_id, qty, rn
FROM (
  SELECT u.city_id AS city_id, o.order_id AS order_id, o.qty AS qty,
         ROW_NUMBER() OVER (PARTITION BY u.city_id ORDER BY o.qty DESC, o.order_id) AS rn
  FROM big_orders AS o JOIN users AS u ON o.user_id = u.user_id
)
WHERE rn <= 2;
