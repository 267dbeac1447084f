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

-- how many accounts have 1, 2, 3 ... users: an aggregate of an aggregate
SELECT user_count AS user_count, COUNT(*) AS accounts
FROM (
  SELECT account_id, COUNT(*) AS user_count
  FROM users
  GROUP BY account_id
) AS per_account
GROUP BY user_count;
