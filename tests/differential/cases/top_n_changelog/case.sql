CREATE TABLE products (
  id INT,
  category STRING,
  product STRING,
  sales INT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/products.json',
  'format' = 'debezium-json'
);

SELECT category AS category, product AS product, sales AS sales, rn AS rn
FROM (
  SELECT category, product, sales,
         ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS rn
  FROM products
)
WHERE rn <= 2;
