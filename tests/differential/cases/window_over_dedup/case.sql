CREATE TABLE clicks (
  id INT,
  url STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/clicks.json',
  'format' = 'json'
);

CREATE VIEW first_clicks AS
SELECT id, url, ts
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts ASC) AS rn FROM clicks)
WHERE rn = 1;

SELECT window_start, window_end, COUNT(*) AS firsts, COUNT(DISTINCT url) AS urls, MAX(id) AS top_id
FROM TABLE(TUMBLE(TABLE first_clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;
