CREATE TABLE users (
  uid INT,
  account_id STRING,
  full_name STRING,
  PRIMARY KEY (uid) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/users.json',
  'format' = 'debezium-json'
);

-- the seed's user count: users per account over a changelog of users
SELECT account_id AS account_id, COUNT(*) AS user_count
FROM users
GROUP BY account_id;
