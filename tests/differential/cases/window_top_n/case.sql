CREATE TABLE bids (
  item STRING,
  supplier_id STRING,
  price INT,
  bidtime TIMESTAMP(3),
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/bids.json',
  'format' = 'json'
);

SELECT window_start, window_end, supplier_id, price, cnt, rownum
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rownum
  FROM (
    SELECT window_start, window_end, supplier_id, SUM(price) AS price, COUNT(*) AS cnt
    FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
    GROUP BY window_start, window_end, supplier_id
  )
)
WHERE rownum <= 2;
