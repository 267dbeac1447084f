CREATE TABLE orders (
  order_id INT,
  account STRING,
  amount INT,
  price DECIMAL(10, 2),
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'debezium-json'
);

SELECT account AS account,
       SUM(DISTINCT amount) AS distinct_amounts, AVG(DISTINCT amount) AS average_distinct,
       COUNT(DISTINCT amount) AS amounts, SUM(DISTINCT price) AS distinct_prices,
       SUM(amount) AS total, COUNT(*) AS orders
FROM orders
GROUP BY account;
