-- The favourite colour and cheese join of "Flink SQL job on Pulsar" (the seed article), on Apache Pulsar: the
-- article's four tables and its INSERT, its input messages produced from the shell, and the delete steps the
-- article left for later.
--
--   export PULSAR_SERVICE_URL=pulsar://localhost:6650 PULSAR_ADMIN_URL=http://localhost:8080 DEMO_RUN=$(date +%s)
--   streamshell --demo examples/pulsar-colour-cheese.sql               present it: Enter runs each statement
--   streamshell --demo examples/pulsar-colour-cheese.sql < /dev/null   check it (CI): exit 1 on a failure
--
-- A Pulsar standalone must be running: `scripts/services start pulsar`, or `docker compose up -d pulsar` (both on
-- the addresses above). The three variables are read when a table is used (`${env:NAME}` in an option value);
-- `${env:...}` has no default, so all three must be set.
-- DEMO_RUN ends every topic's name (persistent://public/default/users-<DEMO_RUN>, ...): an upsert table is read
-- from its topic's first message, so each run needs topics of its own, or it would join the users, colours and
-- cheeses of the runs before it. Give it a new value for each run; the demo never deletes topics.
-- Tables are TEMPORARY so that your saved catalog stays as it was; otherwise the DDL is the article's. The
-- article's messages also carry an `op` field for the colour and cheese topics; those tables have no such column,
-- so the rows written here do not (the join never reads it).

-- @say Three upsert topics, each the latest version of a row per key: users, their favourite colour and cheese.
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

CREATE TEMPORARY TABLE user_favorite_color (
  userUid STRING,
  favoriteColor STRING,
  PRIMARY KEY (userUid) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/user_favorite_color-${env:DEMO_RUN}',
  'key.format' = 'raw',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

CREATE TEMPORARY TABLE user_favorite_cheese (
  userUid STRING,
  favoriteCheese STRING,
  PRIMARY KEY (userUid) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/user_favorite_cheese-${env:DEMO_RUN}',
  'key.format' = 'raw',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

-- @say The sink: one row per user, with both favourites (key = userUid).
CREATE TEMPORARY TABLE user_favorite_color_and_cheese (
  accountId STRING,
  userUid STRING,
  favoriteColor STRING,
  favoriteCheese STRING,
  PRIMARY KEY (userUid) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/user_favorite_color_and_cheese-${env:DEMO_RUN}',
  'key.format' = 'raw',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

-- @pause
-- @say The article's job: every user with their favourites, kept up to date as any of the three topics changes.
INSERT INTO user_favorite_color_and_cheese (accountId, userUid, favoriteColor, favoriteCheese)
SELECT
  u.accountId,
  u.uid,
  ufcol.favoriteColor,
  ufchz.favoriteCheese
FROM users u
LEFT JOIN user_favorite_color ufcol
  ON u.uid = ufcol.userUid
LEFT JOIN user_favorite_cheese ufchz
  ON u.uid = ufchz.userUid;
-- @expect output contains 'started'

-- @say Simulate creating a user: the article's `pulsar-client produce` messages, from the shell.
INSERT INTO users (uid, accountId, id, fullName, op) VALUES ('103-1', '103', 1, 'bob', 'c');
-- @expect ok

-- @say The sink topic, read as a table: user 103-1, no favourites yet. (`favourites` is there for the checks.)
SELECT accountId, userUid, favoriteColor, favoriteCheese,
  CONCAT(userUid, ': ', COALESCE(favoriteColor, 'no colour'), ', ', COALESCE(favoriteCheese, 'no cheese')) AS favourites
FROM user_favorite_color_and_cheese;
-- @wait row contains '103-1: no colour, no cheese' timeout 180 s
-- @expect rows=1
-- @expect row contains '103'

-- @pause
-- @say Simulate adding a favourite colour ...
INSERT INTO user_favorite_color (userUid, favoriteColor) VALUES ('103-1', 'blue');
-- @expect ok

SELECT accountId, userUid, favoriteColor, favoriteCheese,
  CONCAT(userUid, ': ', COALESCE(favoriteColor, 'no colour'), ', ', COALESCE(favoriteCheese, 'no cheese')) AS favourites
FROM user_favorite_color_and_cheese;
-- @wait row contains '103-1: blue, no cheese' timeout 180 s
-- @expect rows=1

-- @say ... and a favourite cheese.
INSERT INTO user_favorite_cheese (userUid, favoriteCheese) VALUES ('103-1', 'cheddar');
-- @expect ok

SELECT accountId, userUid, favoriteColor, favoriteCheese,
  CONCAT(userUid, ': ', COALESCE(favoriteColor, 'no colour'), ', ', COALESCE(favoriteCheese, 'no cheese')) AS favourites
FROM user_favorite_color_and_cheese;
-- @wait row contains '103-1: blue, cheddar' timeout 180 s
-- @expect rows=1

-- @pause
-- @say Simulate updating the favourite cheese: a new message with the same key replaces the old one.
INSERT INTO user_favorite_cheese (userUid, favoriteCheese) VALUES ('103-1', 'brie');
-- @expect ok

SELECT accountId, userUid, favoriteColor, favoriteCheese,
  CONCAT(userUid, ': ', COALESCE(favoriteColor, 'no colour'), ', ', COALESCE(favoriteCheese, 'no cheese')) AS favourites
FROM user_favorite_color_and_cheese;
-- @wait row contains '103-1: blue, brie' timeout 180 s
-- @expect rows=1
-- @expect no row contains 'cheddar'

-- @pause
-- @say The deletes the article left for later. A tombstone (the key, no value) removes the favourite colour ...
DELETE FROM user_favorite_color WHERE userUid = '103-1';
-- @expect ok

SELECT accountId, userUid, favoriteColor, favoriteCheese,
  CONCAT(userUid, ': ', COALESCE(favoriteColor, 'no colour'), ', ', COALESCE(favoriteCheese, 'no cheese')) AS favourites
FROM user_favorite_color_and_cheese;
-- @wait row contains '103-1: no colour, brie' timeout 180 s
-- @expect rows=1

-- @say ... and one removes the user: the join starts from users, so the job deletes the user's row from the sink.
DELETE FROM users WHERE uid = '103-1';
-- @expect ok

-- @say An empty sink cannot tell "deleted" from "not read yet", so ask from the side of the cheese, which is still
-- @say there: the cheese of 103-1 now has no joined row.
SELECT c.userUid, c.favoriteCheese,
  CASE WHEN j.userUid IS NULL THEN 'no joined row' ELSE 'joined row' END AS in_sink
FROM user_favorite_cheese c
LEFT JOIN user_favorite_color_and_cheese j ON c.userUid = j.userUid;
-- @wait row contains 'no joined row' timeout 180 s
-- @expect rows=1
-- @expect row contains 'brie'

SHOW JOBS;
-- @expect row contains 'insert-into_user_favorite_color_and_cheese'

-- @say That's it. The join job stops when the shell exits.
