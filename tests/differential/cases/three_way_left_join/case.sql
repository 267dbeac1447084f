CREATE TABLE users (
  uid INT,
  name STRING,
  PRIMARY KEY (uid) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/users.json',
  'format' = 'debezium-json'
);

CREATE TABLE profiles (
  uid INT,
  city STRING,
  PRIMARY KEY (uid) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/profiles.json',
  'format' = 'debezium-json'
);

CREATE TABLE scores (
  uid INT,
  score INT,
  PRIMARY KEY (uid) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/scores.json',
  'format' = 'debezium-json'
);

SELECT u.uid AS uid, u.name AS name, p.city AS city, s.score AS score
FROM users AS u
LEFT JOIN profiles AS p ON u.uid = p.uid
LEFT JOIN scores AS s ON u.uid = s.uid;
