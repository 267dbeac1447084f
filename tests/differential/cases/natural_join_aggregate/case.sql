CREATE TABLE accounts (
  k INT,
  owner STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/accounts.json',
  'format' = 'debezium-json'
);

CREATE TABLE balances (
  k INT,
  amount INT
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/balances.json',
  'format' = 'debezium-json'
);

SELECT accounts.k AS k, COUNT(*) AS n, SUM(amount) AS total, MAX(owner) AS owner
FROM accounts NATURAL JOIN balances
GROUP BY accounts.k;
