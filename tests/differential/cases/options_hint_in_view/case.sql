CREATE TABLE readings (
  id INT,
  sensor STRING,
  v INT
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/decoy.json',
  'format' = 'json'
);

CREATE VIEW hot AS
SELECT sensor, v FROM readings /*+ OPTIONS('path' = '${data}/readings.json') */ WHERE v > 10;

SELECT sensor AS sensor, COUNT(*) AS n, MAX(v) AS top, MIN(v) AS low
FROM hot
GROUP BY sensor;
