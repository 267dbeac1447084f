CREATE TABLE items (
  id INT,
  name STRING,
  code STRING,
  qty INT,
  price DECIMAL(10, 2),
  ratio DOUBLE,
  ts TIMESTAMP(3),
  tags STRING,
  doc STRING,
  day_text STRING,
  num_text STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/items.json',
  'format' = 'json'
);

SELECT id AS id,
       ABS(qty) AS abs_qty,
       MOD(qty, 5) AS mod_qty,
       qty % 4 AS rem_qty,
       qty / 2 AS half_qty_int,
       CAST(qty AS DOUBLE) / 2 AS half_qty_double,
       price * 2 AS double_price,
       price + 0.005 AS price_plus,
       ROUND(price, 1) AS price_1dp,
       ROUND(ratio) AS ratio_rounded,
       FLOOR(ratio) AS ratio_floor,
       CEIL(ratio) AS ratio_ceil,
       TRUNCATE(ratio, 1) AS ratio_trunc,
       POWER(qty, 2) AS qty_squared,
       SQRT(ABS(ratio)) AS sqrt_ratio,
       EXP(ratio / 100) AS exp_ratio,
       LN(ABS(ratio) + 1) AS ln_ratio,
       LOG10(ABS(ratio) + 1) AS log10_ratio,
       SIGN(ratio) AS sign_ratio,
       GREATEST(qty, 1) AS at_least_1,
       LEAST(qty, 1) AS at_most_1,
       -qty AS negated,
       qty BETWEEN 0 AND 10 AS qty_small,
       id IN (1, 3, 5) AS odd_id
FROM items;
