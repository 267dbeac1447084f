CREATE TABLE orders (
  order_id INT,
  currency STRING,
  amount DECIMAL(10, 2),
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'json'
);

CREATE TABLE rates (
  currency STRING,
  rate DECIMAL(10, 4),
  update_time TIMESTAMP(3),
  WATERMARK FOR update_time AS update_time,
  PRIMARY KEY (currency) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/rates.json',
  'format' = 'debezium-json'
);

SELECT o.order_id AS order_id, o.currency AS currency, o.amount AS amount, r.rate AS rate,
       o.amount * r.rate AS converted
FROM orders AS o
JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r
  ON o.currency = r.currency;
