-- The user count by account of "Flink SQL job on Pulsar" (the seed article), on Apache Pulsar: the same tables and
-- the same INSERT, its input messages produced from the shell, and the delete step the article left for later.
--
--   export PULSAR_SERVICE_URL=pulsar://localhost:6650 PULSAR_ADMIN_URL=http://localhost:8080 DEMO_RUN=$(date +%s)
--   streamshell --demo examples/pulsar-user-count.sql               present it: Enter runs each statement, q quits
--   streamshell --demo examples/pulsar-user-count.sql < /dev/null   check it (CI): no pauses, exit 1 on a failure
--
-- A Pulsar standalone must be running: `scripts/services start pulsar`, or `docker compose up -d pulsar` (both on
-- the addresses above). The three variables are read when a table is used (`${env:NAME}` in an option value);
-- `${env:...}` has no default, so all three must be set.
-- DEMO_RUN ends every topic's name (persistent://public/default/users-<DEMO_RUN>, ...): an upsert table is read
-- from its topic's first message, so each run needs topics of its own, or it would count the users of the runs
-- before it. Give it a new value for each run; the demo never deletes topics.
-- Tables are TEMPORARY so that your saved catalog stays as it was; otherwise the DDL is the article's.

-- @say The article's source table: each message on the users topic is the latest version of one user (key = uid).
CREATE TEMPORARY TABLE users (
  uid STRING,
  accountId STRING,
  id INT,
  fullName STRING,
  op STRING,
  eventTime TIMESTAMP(3) METADATA,
  properties MAP<STRING, STRING> METADATA,
  topic STRING METADATA VIRTUAL,
  sequenceId BIGINT METADATA VIRTUAL,
  PRIMARY KEY (uid) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/users-${env:DEMO_RUN}',
  'key.format' = 'raw',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

-- @say The sink: one row per account, kept up to date by the job (key = accountId).
CREATE TEMPORARY TABLE user_count_by_account (
  accountId STRING,
  userCount BIGINT,
  PRIMARY KEY (accountId) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/user_count_by_account-${env:DEMO_RUN}',
  'key.format' = 'raw',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

-- @pause
-- @say The article's job: count the users of each account, forever. It runs detached; the prompt comes back at once.
INSERT INTO user_count_by_account (accountId, userCount)
SELECT accountId, COUNT(1) AS userCount
FROM users
GROUP BY accountId;
-- @expect output contains 'started'

-- @say Simulate a few create operations: the article's `pulsar-client produce` messages, from the shell.
INSERT INTO users (uid, accountId, id, fullName, op) VALUES
  ('100-1', '100', 1, 'bob', 'c'),
  ('100-2', '100', 2, 'bob', 'c');
-- @expect ok

-- @say The sink topic, read as a table: account 100 has two users. (`counted` is there for the checks below.)
SELECT accountId, userCount, CONCAT(accountId, '=', CAST(userCount AS STRING)) AS counted FROM user_count_by_account;
-- @wait row contains '100=2' timeout 180 s
-- @expect rows=1

INSERT INTO users (uid, accountId, id, fullName, op) VALUES
  ('101-1', '101', 1, 'bob', 'c'),
  ('101-2', '101', 2, 'bob', 'c');
-- @expect ok

-- @say Two more users, in account 101.
SELECT accountId, userCount, CONCAT(accountId, '=', CAST(userCount AS STRING)) AS counted FROM user_count_by_account;
-- @wait row contains '101=2' timeout 180 s
-- @expect rows=2
-- @expect row contains '100=2'

-- @pause
-- @say Simulate an update: user 100-1 is written again, still in account 100.
INSERT INTO users (uid, accountId, id, fullName, op) VALUES ('100-1', '100', 1, 'bob', 'u');
-- @expect ok

-- @say The users table now holds the new version of 100-1 (op 'u') ...
SELECT uid, accountId, op FROM users;
-- @wait row contains 'u' timeout 120 s
-- @expect rows=4

-- @say ... and no count changed, so the job wrote nothing new: the article's consumer saw no fifth message.
SELECT accountId, userCount, CONCAT(accountId, '=', CAST(userCount AS STRING)) AS counted FROM user_count_by_account;
-- @wait rows>=2 timeout 120 s
-- @expect rows=2
-- @expect row contains '100=2'
-- @expect row contains '101=2'

-- @pause
-- @say The delete the article left for later: a tombstone (the key, no value) removes user 100-2.
DELETE FROM users WHERE uid = '100-2';
-- @expect ok

-- @say Account 100 is down to one user.
SELECT accountId, userCount, CONCAT(accountId, '=', CAST(userCount AS STRING)) AS counted FROM user_count_by_account;
-- @wait row contains '100=1' timeout 180 s
-- @expect row contains '101=2'

-- @say Then both users of account 101 go.
DELETE FROM users WHERE uid IN ('101-1', '101-2');
-- @expect ok

-- @say With no users left, account 101's row is gone: the job sent a tombstone for key 101.
SELECT accountId, userCount, CONCAT(accountId, '=', CAST(userCount AS STRING)) AS counted FROM user_count_by_account;
-- @wait rows=1 timeout 180 s
-- @expect row contains '100=1'
-- @expect no row contains '101'

SHOW JOBS;
-- @expect row contains 'insert-into_user_count_by_account'

-- @say That's it. The counting job stops when the shell exits.
