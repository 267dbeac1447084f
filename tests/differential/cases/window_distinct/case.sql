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

SELECT window_start AS window_start, window_end AS window_end,
       COUNT(DISTINCT user_name) AS users, COUNT(DISTINCT url) AS urls
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '2' MINUTE))
GROUP BY window_start, window_end;
