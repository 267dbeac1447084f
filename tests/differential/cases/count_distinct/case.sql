CREATE TABLE visits (
  visit_id INT,
  page STRING,
  user_id STRING,
  PRIMARY KEY (visit_id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/visits.json',
  'format' = 'debezium-json'
);

SELECT page AS page, COUNT(DISTINCT user_id) AS visitors, COUNT(*) AS visits
FROM visits
GROUP BY page;
