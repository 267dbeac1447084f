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
       COUNT(*) AS clicks, MIN(url) AS first_url
FROM TABLE(SESSION(TABLE clicks PARTITION BY user_name, DESCRIPTOR(ts), INTERVAL '30' SECOND))
GROUP BY window_start, window_end, user_name;
