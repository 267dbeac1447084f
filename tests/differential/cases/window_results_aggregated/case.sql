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

SELECT user_name AS user_name, MAX(clicks) AS busiest_minute, COUNT(*) AS minutes, SUM(clicks) AS clicks,
       COUNT(DISTINCT clicks) AS distinct_counts, MIN(urls) AS fewest_urls
FROM (
  SELECT window_start, window_end, user_name, COUNT(*) AS clicks, COUNT(DISTINCT url) AS urls
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY window_start, window_end, user_name
) AS per_minute
GROUP BY user_name;
