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

CREATE TABLE items (
  item_id INT,
  title STRING,
  PRIMARY KEY (item_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/items.json',
  'format' = 'debezium-json'
);

-- Flink's names: a column keeps its own, an expression is EXPR$<position>, a repeated name gets a number
SELECT o.order_id, u.name, i.title AS name, UPPER(u.name), o.qty * 2
FROM orders AS o
JOIN users AS u ON o.user_id = u.user_id
LEFT JOIN items AS i ON o.item_id = i.item_id;
