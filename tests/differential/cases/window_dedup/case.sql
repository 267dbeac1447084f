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

SELECT supplier_id, item, price, bidtime, window_start, window_end
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier_id ORDER BY bidtime DESC) AS rownum
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
)
WHERE rownum <= 1;
