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

SELECT *
FROM (
  SELECT bidtime, price, item, supplier_id, window_start, window_end,
         ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rownum
  FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
)
WHERE rownum <= 3;
