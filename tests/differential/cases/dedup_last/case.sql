CREATE TABLE events (
  event_id STRING,
  payload STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/events.json',
  'format' = 'json'
);

SELECT event_id AS event_id, payload AS payload, ts AS ts
FROM (
  SELECT event_id, payload, ts,
         ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY ts DESC) AS rn
  FROM events
)
WHERE rn = 1;
