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

-- Aggregates a HOP window does not combine from slices (a DISTINCT, a DOUBLE's sum) beside ones it could: the
-- window is aggregated as a whole
SELECT window_start AS window_start, window_end AS window_end, sym AS sym,
       COUNT(DISTINCT qty) AS qtys, SUM(CAST(qty AS DOUBLE) / 4) AS quarter_qty, COUNT(*) AS n
FROM TABLE(HOP(TABLE trades, DESCRIPTOR(ts), INTERVAL '20' SECOND, INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, sym;
