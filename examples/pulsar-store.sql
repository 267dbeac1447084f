-- The online store of "Stateful Streams with Apache Pulsar and Apache Flink" (the seed article), on Apache Pulsar:
-- orders enriched with the current user and item, the orders whose user or item is missing sent aside to a topic of
-- their own by the same job, then the job stopped with a savepoint, input produced while it is stopped, and the job
-- resumed from where it stopped: every order comes out once.
--
--   export PULSAR_SERVICE_URL=pulsar://localhost:6650 PULSAR_ADMIN_URL=http://localhost:8080 DEMO_RUN=$(date +%s)
--   streamshell --demo examples/pulsar-store.sql               present it: Enter runs each statement, q quits
--   streamshell --demo examples/pulsar-store.sql < /dev/null   check it (CI): no pauses, exit 1 on a failure
--
-- A Pulsar standalone must be running: `scripts/services start pulsar`, or `docker compose up -d pulsar` (both on
-- the addresses above). The three variables are read when a table is used (`${env:NAME}` in an option value);
-- `${env:...}` has no default, so all three must be set. DEMO_RUN ends every topic's name
-- (persistent://public/default/orders-<DEMO_RUN>, ...): the users and items tables are read from their topics'
-- first message, so each run needs topics of its own. Give it a new value for each run; the demo deletes no topic.
-- Topics are made by Pulsar on first use (non-partitioned; the article makes partitioned topics of one partition
-- with pulsar-admin, and sets infinite retention on the changelog topics: do that for topics that must last).
--
-- Tables are TEMPORARY so that your saved catalog stays as it was. The article's job is Java (DataStream API: two
-- CoProcessFunctions keep the latest user and item per key, side outputs take the orders whose state is missing and
-- print them); here it is SQL: users and items are upsert tables (the latest message per key is the row), the
-- enrichment is a join, and "missing state" is a LEFT JOIN that keeps the orders that found no user or no item, in
-- a topic. One difference: a Flink side output is final, while the topic of missing orders here is an upsert topic
-- of what is missing *now*, so an order whose user arrives later leaves it (a tombstone) and is enriched (shown
-- below). Keyed state lives in RocksDB (Spark's state store here), as the article sets up by hand.
-- The rows are the article's printed orders, users and items (user 88300 Davis, item 930 module, ...); order lines
-- 326417 and 326500, invoices 67053 and 67060 and the name of user 112915 are made up (and line 229127 orders
-- item 930 here, 1982 in the article). The article's orders carry a
-- watermark (createdAt, 5 s); nothing here works by event time, so the orders table declares none.
-- Keys are JSON ({"id":88300}): the article's producers key each message by the id as text, but a Pulsar message
-- key is text and the 'raw' key format writes a BIGINT as 8 bytes, which the shell refuses ("a Pulsar message key
-- must be UTF-8 text"); a STRING id would make the values' ids strings, unlike the article's.
-- The job is named with SET 'pipeline.name' so that STOP JOB and RESUME JOB can name it: a demo file cannot carry
-- the id that the job gets when it starts into a later statement, and STOP JOB / RESUME JOB take a job's name as
-- well as its id (the running job of that name, or else the latest one).

-- @say The article's changelog topics: the latest message of each key is the current user or item.
CREATE TEMPORARY TABLE users (
  id BIGINT,
  firstName STRING,
  lastName STRING,
  emailAddress STRING,
  createdAt BIGINT,
  deletedAt BIGINT,
  mergedAt BIGINT,
  parentUserId BIGINT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/users-${env:DEMO_RUN}',
  'key.format' = 'json',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

CREATE TEMPORARY TABLE items (
  id BIGINT,
  createdAt BIGINT,
  adjective STRING,
  category STRING,
  modifier STRING,
  name STRING,
  price DOUBLE,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/items-${env:DEMO_RUN}',
  'key.format' = 'json',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

-- @say The orders topic is an event stream: every message is a new order line.
CREATE TEMPORARY TABLE orders (
  invoiceId BIGINT,
  lineItemId BIGINT,
  userId BIGINT,
  itemId BIGINT,
  itemName STRING,
  itemCategory STRING,
  price DOUBLE,
  createdAt BIGINT,
  paidAt BIGINT
) WITH (
  'connector' = 'pulsar',
  'topic' = 'persistent://public/default/orders-${env:DEMO_RUN}',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

-- @say Two sinks: the enriched orders, and the orders that miss their user or item (both keyed by order line).
CREATE TEMPORARY TABLE enriched_orders (
  invoiceId BIGINT,
  lineItemId BIGINT,
  userId BIGINT,
  firstName STRING,
  emailAddress STRING,
  itemId BIGINT,
  itemName STRING,
  price DOUBLE,
  createdAt BIGINT,
  paidAt BIGINT,
  PRIMARY KEY (lineItemId) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/enriched_orders-${env:DEMO_RUN}',
  'key.format' = 'json',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

CREATE TEMPORARY TABLE orders_missing_state (
  invoiceId BIGINT,
  lineItemId BIGINT,
  userId BIGINT,
  itemId BIGINT,
  missing STRING,
  createdAt BIGINT,
  PRIMARY KEY (lineItemId) NOT ENFORCED
) WITH (
  'connector' = 'upsert-pulsar',
  'topic' = 'persistent://public/default/orders_missing_state-${env:DEMO_RUN}',
  'key.format' = 'json',
  'value.format' = 'json',
  'service-url' = '${env:PULSAR_SERVICE_URL}',
  'admin-url' = '${env:PULSAR_ADMIN_URL}'
);
-- @expect output contains 'created'

-- @say The article's LookupDataProducer, from the shell: two users and six items.
INSERT INTO users (id, firstName, lastName, emailAddress, createdAt, deletedAt, mergedAt, parentUserId) VALUES
  (88300, 'Davis', 'MDavis1997@earthlink.edu', 'MDavis1997@earthlink.edu', 1441790913000, -1, -1, -1),
  (182477, 'Powell', 'MarinaPowell@mail.com', 'MarinaPowell@mail.com', 1485101903000, -1, -1, -1);
-- @expect ok

INSERT INTO items (id, createdAt, adjective, category, modifier, name, price) VALUES
  (930, 1388876010000, '', 'module', '', 'module', 100.0),
  (80, 1372810111000, 'rechargable', 'module', 'cleaner', 'rechargable module cleaner', 78.0),
  (336, 1385261877000, 'fuzzy', 'module', '', 'fuzzy module', 100.0),
  (1514, 1387918171000, 'miniature', 'apparatus', 'cleaner', 'miniature apparatus cleaner', 99.0),
  (2425, 1372279813000, '', 'apparatus', '', 'apparatus', 300.0),
  (3435, 1373472723000, 'industrial-strength', 'widget', 'cleaner', 'industrial-strength widget cleaner', 5.4);
-- @expect ok

-- @pause
-- @say The job gets a name, so that the statements below can stop and resume it by name ...
SET 'pipeline.name' = 'order-enrichment';
-- @expect ok

-- @say ... and, for a handful of orders, one task per shuffle (Flink's parallelism; Spark's shuffle partitions).
SET 'parallelism.default' = '1';
-- @expect ok

-- @say One job, two INSERTs on the same orders: enriched when both the user and the item are known, set aside
-- @say (with what is missing) when one of them is not: the article's side outputs.
EXECUTE STATEMENT SET BEGIN
  INSERT INTO enriched_orders
    SELECT o.invoiceId, o.lineItemId, u.id, u.firstName, u.emailAddress, i.id, i.name, i.price, o.createdAt, o.paidAt
    FROM orders o
    JOIN users u ON o.userId = u.id
    JOIN items i ON o.itemId = i.id;
  INSERT INTO orders_missing_state
    SELECT o.invoiceId, o.lineItemId, o.userId, o.itemId,
      CASE WHEN u.id IS NULL AND i.id IS NULL THEN 'user and item' WHEN u.id IS NULL THEN 'user' ELSE 'item' END,
      o.createdAt
    FROM orders o
    LEFT JOIN users u ON o.userId = u.id
    LEFT JOIN items i ON o.itemId = i.id
    WHERE u.id IS NULL OR i.id IS NULL;
END;
-- @expect output contains 'started'

-- @say The article's OrdersDataSource, from the shell: five order lines of known users and items, and three that
-- @say miss something (user 145493, user 112915 and item 602 are nowhere).
INSERT INTO orders (invoiceId, lineItemId, userId, itemId, itemName, itemCategory, price, createdAt, paidAt) VALUES
  (67052, 326416, 88300, 930, 'module', 'module', 100.0, 1443643093000, 1443745976000),
  (67052, 146888, 88300, 80, 'rechargable module cleaner', 'module', 78.0, 1443643093000, 1443745976000),
  (67052, 204597, 88300, 336, 'fuzzy module', 'module', 100.0, 1443643093000, 1443745976000),
  (220846, 48384, 182477, 1514, 'miniature apparatus cleaner', 'apparatus', 99.0, 1493699951000, 1493632923000),
  (220846, 230208, 182477, 2425, 'apparatus', 'apparatus', 300.0, 1493699951000, 1493632923000),
  (44172, 192933, 145493, 602, 'prize-winning instrument', 'instrument', 48.4, 1469834917000, 1469700797000),
  (245615, 229127, 112915, 930, 'module', 'module', 100.0, 1463179333000, 1463195221000),
  (67053, 326417, 88300, 602, 'prize-winning instrument', 'instrument', 48.4, 1443643093000, 1443745976000);
-- @expect ok

-- @say The enriched orders topic, read as a table: five order lines with their user's name and item's name.
SELECT invoiceId, lineItemId, firstName, itemName, price,
  CONCAT(CAST(lineItemId AS STRING), ' ', firstName, ' ', itemName) AS enriched
FROM enriched_orders;
-- @wait rows>=5 timeout 150 s
-- @expect rows=5
-- @expect row contains '326416 Davis module'
-- @expect row contains '230208 Powell apparatus'

-- @say The orders set aside, with what they miss.
SELECT lineItemId, userId, itemId, missing, CONCAT(CAST(lineItemId AS STRING), ' misses ', missing) AS aside
FROM orders_missing_state;
-- @wait rows>=3 timeout 60 s
-- @expect rows=3
-- @expect row contains '192933 misses user and item'
-- @expect row contains '229127 misses user'
-- @expect row contains '326417 misses item'

-- @pause
-- @say Stop the job with a savepoint: its running micro-batch completes, then its state and positions are kept.
STOP JOB 'order-enrichment' WITH SAVEPOINT;
-- @expect output contains 'stopped with a savepoint'

SHOW JOBS;
-- @expect row contains 'STOPPED'

-- @say While it is stopped, the shop goes on: user 112915 signs up at last, a new user 97081 orders, and Davis
-- @say (known to the job's state since before the stop) orders again.
INSERT INTO users (id, firstName, lastName, emailAddress, createdAt, deletedAt, mergedAt, parentUserId) VALUES
  (112915, 'Meyer', 'JMeyer@example.com', 'JMeyer@example.com', 1463100000000, -1, -1, -1),
  (97081, 'Adebayo', 'SunitaAdebayo@inbox.info', 'SunitaAdebayo@inbox.info', 1446040475000, -1, -1, -1);
-- @expect ok

INSERT INTO orders (invoiceId, lineItemId, userId, itemId, itemName, itemCategory, price, createdAt, paidAt) VALUES
  (278358, 129026, 97081, 3435, 'industrial-strength widget cleaner', 'widget', 5.4, 1453951447000, 1454087954000),
  (67060, 326500, 88300, 2425, 'apparatus', 'apparatus', 300.0, 1443700000000, 1443745976000);
-- @expect ok

-- @pause
-- @say Resume it: a new process continues from the savepoint, reading only what came while it was stopped.
RESUME JOB 'order-enrichment';
-- @expect output contains 'started'

-- @say Eight enriched order lines now: the two new ones, and 229127, whose user arrived while the job was stopped.
SELECT invoiceId, lineItemId, firstName, itemName, price,
  CONCAT(CAST(lineItemId AS STRING), ' ', firstName, ' ', itemName) AS enriched
FROM enriched_orders;
-- @wait rows>=8 timeout 150 s
-- @expect rows=8
-- @expect row contains '129026 Adebayo industrial-strength widget cleaner'
-- @expect row contains '326500 Davis apparatus'
-- @expect row contains '229127 Meyer module'
-- @expect row contains '326416 Davis module'

-- @say Every message the job wrote to the enriched topic, read as a plain stream of messages: each order line
-- @say once, nothing written twice across the stop and the resume.
CREATE TEMPORARY TABLE enriched_messages WITH ('connector' = 'pulsar', 'key.fields' = 'lineItemId')
  LIKE enriched_orders (EXCLUDING CONSTRAINTS);
-- @expect output contains 'created'

SELECT COUNT(*) AS messages, COUNT(DISTINCT lineItemId) AS orderLines,
  CONCAT('messages=', CAST(COUNT(*) AS STRING), ' orderLines=', CAST(COUNT(DISTINCT lineItemId) AS STRING)) AS tally
FROM enriched_messages;
-- @wait row contains 'orderLines=8' timeout 60 s
-- @expect rows=1
-- @expect row contains 'messages=8 orderLines=8'

-- @say And 229127 has left the orders set aside (a tombstone): two still miss their user or item.
SELECT lineItemId, userId, itemId, missing, CONCAT(CAST(lineItemId AS STRING), ' misses ', missing) AS aside
FROM orders_missing_state;
-- @wait rows=2 timeout 60 s
-- @expect rows=2
-- @expect row contains '192933 misses user and item'
-- @expect row contains '326417 misses item'
-- @expect no row contains '229127'

-- @say The same job (same id, same folder), running again.
SHOW JOBS;
-- @expect row contains 'order-enrichment'
-- @expect row contains 'RUNNING'

-- @say That's it. The enrichment job stops when the shell exits.
