CREATE TABLE clicks (
  user_name STRING,
  url STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/clicks.json',
  'format' = 'json'
);

SELECT window_start AS window_start, window_end AS window_end, COUNT(*) AS clicks,
       MIN(url) AS min_url, MAX(ts) AS last_click
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;
