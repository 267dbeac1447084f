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

SELECT window_start AS window_start, window_end AS window_end, user_name AS user_name,
       COUNT(*) AS clicks, MAX(ts) AS last_click
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, user_name;
