CREATE TABLE products (
  id INT,
  category STRING,
  price INT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/products.json',
  'format' = 'debezium-json'
);

SELECT category AS category,
       MIN(price) AS min_price,
       MAX(price) AS max_price,
       COUNT(*) AS row_count,
       COUNT(price) AS priced,
       SUM(price) AS total
FROM products
GROUP BY category;
