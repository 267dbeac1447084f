CREATE TABLE trades (
  sym STRING,
  qty INT,
  price BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/trades.json',
  'format' = 'json'
);

-- Every aggregate a HOP window combines from its slices: COUNT(*), COUNT(x), integer SUM and AVG (truncated,
-- negatives too), MIN, MAX of a string, a FILTER, a HAVING over an aggregate, an expression of a key, a WHERE;
-- NULL keys and values, rows out of order, ties between windows
SELECT window_start AS window_start, window_end AS window_end, sym AS sym, UPPER(sym) AS upper_sym,
       COUNT(*) AS n, COUNT(qty) AS qtys, SUM(qty) AS total, AVG(qty) AS avg_qty, SUM(price) AS amount,
       MIN(qty) AS min_qty, MAX(ts) AS last_ts, MAX(sym) AS max_sym,
       COUNT(*) FILTER (WHERE qty > 10) AS big, SUM(qty) FILTER (WHERE price < 0) AS negative_qty
FROM TABLE(HOP(TABLE trades, DESCRIPTOR(ts), INTERVAL '20' SECOND, INTERVAL '1' MINUTE))
WHERE price <> 0
GROUP BY window_start, window_end, sym
HAVING COUNT(*) > 1 OR SUM(qty) IS NULL;
