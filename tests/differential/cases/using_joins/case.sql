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

CREATE TABLE flags (
  k INT,
  flag STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/flags.json',
  'format' = 'debezium-json'
);

SELECT a.k AS ak, b.k AS bk, a.owner AS owner, f.flag AS flag, b.amount AS amount
FROM accounts AS a
LEFT JOIN flags AS f USING (k)
FULL JOIN balances AS b USING (k)
WHERE a.k IS NULL OR a.k <> 99;
