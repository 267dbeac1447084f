CREATE TABLE left_rows (
  num INT,
  id STRING,
  row_time TIMESTAMP(3),
  WATERMARK FOR row_time AS row_time - INTERVAL '10' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/left_rows.json',
  'format' = 'json'
);

CREATE TABLE right_rows (
  num INT,
  id STRING,
  row_time TIMESTAMP(3),
  WATERMARK FOR row_time AS row_time - INTERVAL '10' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/right_rows.json',
  'format' = 'json'
);

SELECT L.num AS left_num, L.id AS left_id, R.num AS right_num, R.id AS right_id,
       COALESCE(L.window_start, R.window_start) AS window_start,
       COALESCE(L.window_end, R.window_end) AS window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE left_rows, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) L
FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE right_rows, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) R
  ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end;
