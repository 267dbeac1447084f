CREATE TABLE a (
  v INT,
  tag STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/a.json',
  'format' = 'json'
);

CREATE TABLE b (
  v INT,
  tag STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/b.json',
  'format' = 'json'
);

SELECT 'a and b' AS kind, v, tag FROM (SELECT v * 10 AS v, tag FROM a INTERSECT ALL SELECT v * 10, tag FROM b) AS i
UNION ALL
SELECT 'a not b' AS kind, v, tag FROM (SELECT v, tag FROM a WHERE v > 1 EXCEPT ALL SELECT v, tag FROM b) AS e
UNION ALL
SELECT 'b not a' AS kind, v, tag FROM (SELECT v, tag FROM b EXCEPT ALL SELECT v, tag FROM a) AS f;
