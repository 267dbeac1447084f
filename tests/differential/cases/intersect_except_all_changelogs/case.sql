CREATE TABLE members (
  id INT,
  name STRING,
  grp STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/members.json',
  'format' = 'debezium-json'
);

CREATE TABLE guests (
  id INT,
  name STRING,
  grp STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/guests.json',
  'format' = 'debezium-json'
);

SELECT 'both' AS kind, name, grp FROM (SELECT name, grp FROM members INTERSECT ALL SELECT name, grp FROM guests) AS b
UNION ALL
SELECT 'members only' AS kind, name, grp FROM (SELECT name, grp FROM members EXCEPT ALL SELECT name, grp FROM guests) AS m
UNION ALL
SELECT 'guests only' AS kind, name, grp FROM (SELECT name, grp FROM guests EXCEPT ALL SELECT name, grp FROM members) AS g;
