CREATE TABLE orders (
  order_id INT,
  product STRING,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'json'
);

CREATE TABLE shipments (
  shipment_id INT,
  order_id INT,
  carrier STRING,
  ship_time TIMESTAMP(3),
  WATERMARK FOR ship_time AS ship_time - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/shipments.json',
  'format' = 'json'
);

SELECT o.order_id AS order_id, o.product AS product, s.carrier AS carrier,
       o.order_time AS order_time, s.ship_time AS ship_time
FROM orders AS o
JOIN shipments AS s
  ON o.order_id = s.order_id
 AND s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '1' HOUR;
