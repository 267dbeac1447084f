CREATE TABLE orders (
  order_id BIGINT,
  customer_id INT,
  amount DECIMAL(10, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'json'
);

CREATE TABLE payments (
  payment_id BIGINT,
  customer_id INT,
  status STRING,
  paid DECIMAL(10, 2)
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/payments.json',
  'format' = 'json'
);

SELECT o.order_id AS order_id, p.payment_id AS payment_id, p.paid AS paid
FROM orders AS o
LEFT JOIN payments AS p ON o.customer_id = p.customer_id AND p.status <> 'void';
