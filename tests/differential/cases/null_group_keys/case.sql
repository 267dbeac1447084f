CREATE TABLE products (
  id INT,
  region STRING,
  category STRING,
  price INT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/products.json',
  'format' = 'debezium-json'
);

SELECT region, category,
       MIN(price) AS min_price,
       MAX(price) AS max_price,
       COUNT(DISTINCT price) AS prices,
       COUNT(*) AS products
FROM products
GROUP BY region, category;
