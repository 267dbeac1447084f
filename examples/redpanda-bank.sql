-- The bank of "Stream Processing: Hands-on with Apache Flink" (the seed book), on the Kafka API as Redpanda speaks
-- it: the book's transactions, customers and accounts tables, rows of the book's shape produced from the shell,
-- debits and credits split into two topics by one job, windows over the transactions, and the transactions joined
-- with their accounts.
--
--   export KAFKA_BOOTSTRAP_SERVERS=localhost:9092 DEMO_RUN=$(date +%s)
--   (create the topics: below)
--   streamshell --demo examples/redpanda-bank.sql               present it: Enter runs each statement, q quits
--   streamshell --demo examples/redpanda-bank.sql < /dev/null   check it (CI): no pauses, exit 1 on a failure
--
-- A Redpanda (`docker compose up -d redpanda`) or a Kafka (`scripts/services start kafka`) must be running on the
-- address above. Both variables are read when a table is used (`${env:NAME}` in an option value, no default).
-- DEMO_RUN ends every topic's name (transactions-<DEMO_RUN>, ...): the upsert tables are read from their topics'
-- first message, so each run needs topics of its own. Give it a new value for each run; the demo deletes no topic.
--
-- The shell cannot create a topic: a CREATE TABLE names one, and writing to a topic that is not there leaves it to
-- the broker, which makes it with one partition and no compaction when it creates topics on first use (Kafka by
-- default; Redpanda in dev-container mode, as docker-compose.yml runs it) and refuses otherwise. So make the book's
-- topics first, with its partitions and compaction, as the book does with `rpk`:
--
--   docker compose exec redpanda rpk topic create transactions-$DEMO_RUN -p 5
--   docker compose exec redpanda rpk topic create transactions.debits-$DEMO_RUN transactions.credits-$DEMO_RUN -p 5
--   docker compose exec redpanda rpk topic create customers-$DEMO_RUN accounts-$DEMO_RUN -p 1 -c cleanup.policy=compact
--
-- or with Kafka's `kafka-topics.sh --bootstrap-server $KAFKA_BOOTSTRAP_SERVERS --create --topic transactions-$DEMO_RUN
-- --partitions 5` (and `--config cleanup.policy=compact` for customers and accounts), or with kafka-python's admin
-- client, as tests/e2e/test_seed_walkthroughs.py does before it plays this demo. (The book's rpk commands name the
-- split topics transactions.debit and transactions.credit; its topic list and its DDL say .debits and .credits.)
--
-- Tables are TEMPORARY so that your saved catalog stays as it was. What differs from the book's DDL, and why:
-- - no 'properties.group.id': a Spark job keeps its offsets in its checkpoint, not in a consumer group;
-- - the transactions table writes its key ('key.fields' = 'transactionId'), as the book's TransactionsProducer keys
--   each message by its transaction id, so INSERT ... VALUES spreads the rows over the 5 partitions as it does;
-- - the transactions table also reads each message's `partition` (a metadata column), to show the five partitions;
-- - the book's producers read its CSV files of a bank's data; here ten transactions of three accounts, their three
--   customers and accounts, of the same shape, are typed in, within five minutes so that minute windows fit (the
--   book's windows are a day long, or two hours).

-- @say The book's transactions: an append-only stream, its event time from the epoch millis in eventTime.
CREATE TEMPORARY TABLE transactions (
  transactionId      STRING,
  accountId          STRING,
  customerId         STRING,
  eventTime          BIGINT,
  eventTime_ltz AS TO_TIMESTAMP_LTZ(eventTime, 3),
  eventTimeFormatted STRING,
  type               STRING,
  operation          STRING,
  amount             DOUBLE,
  balance            DOUBLE,
  `partition`        INT METADATA VIRTUAL,
  WATERMARK FOR eventTime_ltz AS eventTime_ltz
) WITH (
  'connector' = 'kafka',
  'topic' = 'transactions-${env:DEMO_RUN}',
  'properties.bootstrap.servers' = '${env:KAFKA_BOOTSTRAP_SERVERS}',
  'key.format' = 'raw',
  'key.fields' = 'transactionId',
  'value.format' = 'json',
  'scan.startup.mode' = 'earliest-offset'
);
-- @expect output contains 'created'

-- @say Customers and accounts live on compacted topics: the latest message of a key is its row (upsert-kafka).
CREATE TEMPORARY TABLE customers (
  customerId STRING,
  sex STRING,
  social STRING,
  fullName STRING,
  phone STRING,
  email STRING,
  address1 STRING,
  address2 STRING,
  city STRING,
  state STRING,
  zipcode STRING,
  districtId STRING,
  birthDate STRING,
  updateTime BIGINT,
  eventTime_ltz AS TO_TIMESTAMP_LTZ(updateTime, 3),
  WATERMARK FOR eventTime_ltz AS eventTime_ltz,
  PRIMARY KEY (customerId) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'customers-${env:DEMO_RUN}',
  'properties.bootstrap.servers' = '${env:KAFKA_BOOTSTRAP_SERVERS}',
  'key.format' = 'raw',
  'value.format' = 'json'
);
-- @expect output contains 'created'

CREATE TEMPORARY TABLE accounts (
  accountId STRING,
  districtId INT,
  frequency STRING,
  creationDate STRING,
  updateTime BIGINT,
  eventTime_ltz AS TO_TIMESTAMP_LTZ(updateTime, 3),
  WATERMARK FOR eventTime_ltz AS eventTime_ltz,
  PRIMARY KEY (accountId) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'accounts-${env:DEMO_RUN}',
  'properties.bootstrap.servers' = '${env:KAFKA_BOOTSTRAP_SERVERS}',
  'key.format' = 'raw',
  'value.format' = 'json'
);
-- @expect output contains 'created'

-- @say The book's StateProducer, from the shell: three customers and their three accounts ...
INSERT INTO customers (customerId, sex, social, fullName, phone, email, city, state, districtId, birthDate, updateTime)
VALUES
  ('C00002873', 'Female', '926-93-2157', 'Emma Smith', '367-171-6840', 'emma.smith@gmail.com', 'Albuquerque', 'NM', '18', '1990-12-13', 1356998400000),
  ('C00000692', 'Male', '806-94-5725', 'Noah Thompson', '212-423-7734', 'noah.thompson@gmail.com', 'New York City', 'NY', '1', '1965-02-04', 1356998400000),
  ('C00000844', 'Female', '614-70-9100', 'Olivia Johnson', '212-425-6932', 'olivia.johnson@outlook.com', 'New York City', 'NY', '1', '1960-10-09', 1356998400000);
-- @expect ok

INSERT INTO accounts (accountId, districtId, frequency, creationDate, updateTime) VALUES
  ('A00002378', 16, 'Monthly Issuance', '2013-01-01', 1356998400000),
  ('A00000576', 55, 'Monthly Issuance', '2013-01-01', 1356998400000),
  ('A00000704', 55, 'Monthly Issuance', '2013-01-01', 1356998400000);
-- @expect ok

-- @say ... then a second message for a key already there: Noah's new email, and account A00000704 now weekly.
INSERT INTO customers (customerId, sex, social, fullName, phone, email, city, state, districtId, birthDate, updateTime)
VALUES ('C00000692', 'Male', '806-94-5725', 'Noah Thompson', '212-423-7734', 'noah.thompson@outlook.com', 'New York City', 'NY', '1', '1965-02-04', 1357030800000);
-- @expect ok

INSERT INTO accounts (accountId, districtId, frequency, creationDate, updateTime) VALUES
  ('A00000704', 55, 'Weekly Issuance', '2013-01-01', 1357030800000);
-- @expect ok

-- @say A compacted topic keeps the latest value of each key, and the upsert table reads it so: three customers.
SELECT customerId, fullName, email, CONCAT(customerId, ' ', email) AS latest FROM customers;
-- @wait row contains 'C00000692 noah.thompson@outlook.com' timeout 90 s
-- @expect rows=3
-- @expect no row contains 'noah.thompson@gmail.com'

-- @pause
-- @say The book's TransactionsProducer, from the shell: ten transactions of the three accounts, 11:00 to 11:04.
INSERT INTO transactions
  (transactionId, accountId, customerId, eventTime, eventTimeFormatted, type, operation, amount, balance)
VALUES
  ('T00695247', 'A00002378', 'C00002873', 1357038005000, '2013-01-01T11:00:05', 'Credit', 'Credit in Cash', 700, 700),
  ('T00171812', 'A00000576', 'C00000692', 1357038020000, '2013-01-01T11:00:20', 'Credit', 'Credit in Cash', 900, 900),
  ('T00695301', 'A00002378', 'C00002873', 1357038040000, '2013-01-01T11:00:40', 'Debit', 'Withdrawal in Cash', 200, 500),
  ('T00207264', 'A00000704', 'C00000844', 1357038055000, '2013-01-01T11:00:55', 'Credit', 'Credit in Cash', 1000, 1000),
  ('T00695388', 'A00002378', 'C00002873', 1357038070000, '2013-01-01T11:01:10', 'Credit', 'Collection from Another Bank', 300, 800),
  ('T00171899', 'A00000576', 'C00000692', 1357038110000, '2013-01-01T11:01:50', 'Debit', 'Credit Card Withdrawal', 150, 750),
  ('T00207310', 'A00000704', 'C00000844', 1357038130000, '2013-01-01T11:02:10', 'Debit', 'Remittance to Another Bank', 400, 600),
  ('T00171934', 'A00000576', 'C00000692', 1357038150000, '2013-01-01T11:02:30', 'Debit', 'Withdrawal in Cash', 250, 500),
  ('T00207355', 'A00000704', 'C00000844', 1357038165000, '2013-01-01T11:02:45', 'Credit', 'Credit in Cash', 50, 650),
  ('T00695412', 'A00002378', 'C00002873', 1357038240000, '2013-01-01T11:04:00', 'Debit', 'Remittance to Another Bank', 100, 700);
-- @expect ok

-- @say Keyed by transaction id (the producer hashes the key), the ten messages are spread over all five partitions.
SELECT `partition`, COUNT(*) AS messages FROM transactions GROUP BY `partition`;
-- @wait rows>=5 timeout 60 s
-- @expect rows=5

-- @pause
-- @say The book's debits and credits topics, each with the transactions' columns (LIKE copies the definition).
CREATE TEMPORARY TABLE debits WITH ('topic' = 'transactions.debits-${env:DEMO_RUN}') LIKE transactions;
-- @expect output contains 'created'

CREATE TEMPORARY TABLE credits WITH ('topic' = 'transactions.credits-${env:DEMO_RUN}') LIKE transactions;
-- @expect output contains 'created'

-- @say One job, two INSERTs: every transaction goes to the debits or the credits topic, by its type.
EXECUTE STATEMENT SET BEGIN
  INSERT INTO debits
    SELECT transactionId, accountId, customerId, eventTime, eventTimeFormatted, type, operation, amount, balance
    FROM transactions WHERE type = 'Debit';
  INSERT INTO credits
    SELECT transactionId, accountId, customerId, eventTime, eventTimeFormatted, type, operation, amount, balance
    FROM transactions WHERE type = 'Credit';
END;
-- @expect output contains 'started'

-- @say The debits topic, read as a table: the five debits, no credit (a credit card withdrawal is a debit).
-- @say (`debit` is there for the checks.)
SELECT transactionId, accountId, operation, amount, CONCAT(transactionId, ' ', type, ' ', CAST(amount AS STRING)) AS debit
FROM debits;
-- @wait rows>=5 timeout 90 s
-- @expect rows=5
-- @expect row contains 'T00695301 Debit 200.0'
-- @expect row contains 'T00695412 Debit 100.0'
-- @expect no row contains ' Credit '

-- @say The credits topic: the other five.
SELECT transactionId, accountId, operation, amount, CONCAT(transactionId, ' ', type, ' ', CAST(amount AS STRING)) AS credit
FROM credits;
-- @wait rows>=5 timeout 60 s
-- @expect rows=5
-- @expect row contains 'T00207264 Credit 1000.0'
-- @expect row contains 'T00207355 Credit 50.0'
-- @expect no row contains ' Debit '

-- @pause
-- @say Windows need their input to end, or later rows to move the watermark past them. A table that reads the topic
-- @say up to where it is now ('scan.bounded.mode') ends, and then its last windows fire too.
CREATE TEMPORARY TABLE transactions_so_far WITH ('scan.bounded.mode' = 'latest-offset') LIKE transactions;
-- @expect output contains 'created'

-- @say Per-minute totals (TUMBLE): how many transactions, how much credited and debited in each minute.
SELECT window_start, window_end, COUNT(transactionId) AS txnCount,
  SUM(CASE WHEN type = 'Credit' THEN amount ELSE 0 END) AS credited,
  SUM(CASE WHEN type = 'Debit' THEN amount ELSE 0 END) AS debited,
  CONCAT(DATE_FORMAT(window_start, 'HH:mm'), ' n=', CAST(COUNT(transactionId) AS STRING),
    ' +', CAST(SUM(CASE WHEN type = 'Credit' THEN amount ELSE 0 END) AS STRING),
    ' -', CAST(SUM(CASE WHEN type = 'Debit' THEN amount ELSE 0 END) AS STRING)) AS minute
FROM TABLE(TUMBLE(TABLE transactions_so_far, DESCRIPTOR(eventTime_ltz), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;
-- @wait rows>=4 timeout 60 s
-- @expect rows=4
-- @expect row contains '11:00 n=4 +2600.0 -200.0'
-- @expect row contains '11:01 n=2 +300.0 -150.0'
-- @expect row contains '11:02 n=3 +50.0 -650.0'
-- @expect row contains '11:04 n=1 +0.0 -100.0'

-- @say A sliding window (HOP): two minutes long, every minute; each transaction counts in two windows.
SELECT window_start, window_end, COUNT(transactionId) AS txnCount,
  CONCAT(DATE_FORMAT(window_start, 'HH:mm'), '-', DATE_FORMAT(window_end, 'HH:mm'), ' n=',
    CAST(COUNT(transactionId) AS STRING)) AS hop
FROM TABLE(HOP(TABLE transactions_so_far, DESCRIPTOR(eventTime_ltz), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE))
GROUP BY window_start, window_end;
-- @wait rows>=6 timeout 60 s
-- @expect rows=6
-- @expect row contains '10:59-11:01 n=4'
-- @expect row contains '11:00-11:02 n=6'
-- @expect row contains '11:01-11:03 n=5'
-- @expect row contains '11:04-11:06 n=1'

-- @say Session windows per account: a session closes after a minute without a transaction of that account.
SELECT accountId, window_start, window_end, COUNT(transactionId) AS txnCount,
  CONCAT(accountId, ' ', DATE_FORMAT(window_start, 'HH:mm:ss'), '-', DATE_FORMAT(window_end, 'HH:mm:ss'), ' n=',
    CAST(COUNT(transactionId) AS STRING)) AS session
FROM TABLE(SESSION(TABLE transactions_so_far PARTITION BY accountId, DESCRIPTOR(eventTime_ltz), INTERVAL '1' MINUTE))
GROUP BY accountId, window_start, window_end;
-- @wait rows>=6 timeout 60 s
-- @expect rows=6
-- @expect row contains 'A00002378 11:00:05-11:02:10 n=3'
-- @expect row contains 'A00002378 11:04:00-11:05:00 n=1'
-- @expect row contains 'A00000576 11:01:50-11:03:30 n=2'

-- @pause
-- @say Each transaction with its account: a join of the stream with the compacted accounts table, whose rows are
-- @say the latest versions (A00000704 is weekly now). (`account` is there for the checks.)
SELECT t.transactionId, t.accountId, a.districtId, a.frequency, t.type, t.amount,
  CONCAT(t.accountId, ' d', CAST(a.districtId AS STRING), ' ', a.frequency) AS account
FROM transactions t
JOIN accounts a ON t.accountId = a.accountId;
-- @wait rows>=10 timeout 90 s
-- @expect rows=10
-- @expect row contains 'A00002378 d16 Monthly Issuance'
-- @expect row contains 'A00000576 d55 Monthly Issuance'
-- @expect row contains 'A00000704 d55 Weekly Issuance'
-- @expect no row contains 'A00000704 d55 Monthly'
-- @expect row contains 'T00207355'
-- The book (chapter 4) also joins each transaction with the version of its customer valid at its time
-- (`JOIN customers FOR SYSTEM_TIME AS OF t.eventTime_ltz`), and with its account by a lookup join on a Postgres
-- table (the 'jdbc' connector). The shell runs the first kind on upsert tables such as these; it has no 'jdbc'
-- connector yet, so the lookup join on Postgres is not part of this walkthrough.

-- @say Generated data of the book's shape: the book's producer script makes random transactions; the shell's
-- @say datagen connector does the same for 2,000 of them (random accounts, customers, types and amounts, times
-- @say counting up), written to a topic of their own by a job that ends when they are all written.
CREATE TEMPORARY TABLE generated_source (
  n           BIGINT,
  account     INT,
  customer    INT,
  credit      BOOLEAN,
  amount      INT
) WITH (
  'connector' = 'datagen',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '2000',
  'fields.account.min' = '1', 'fields.account.max' = '999',
  'fields.customer.min' = '1', 'fields.customer.max' = '999',
  'fields.amount.min' = '1', 'fields.amount.max' = '5000'
);
-- @expect output contains 'created'

CREATE TEMPORARY TABLE generated_transactions WITH (
  'topic' = 'transactions-generated-${env:DEMO_RUN}'
) LIKE transactions;
-- @expect output contains 'created'

INSERT INTO generated_transactions (transactionId, accountId, customerId, eventTime, eventTimeFormatted, type,
  operation, amount, balance)
SELECT CONCAT('G', LPAD(CAST(n AS STRING), 8, '0')), CONCAT('A', LPAD(CAST(account AS STRING), 8, '0')),
  CONCAT('C', LPAD(CAST(customer AS STRING), 8, '0')), 1700000000000 + n * 1000,
  DATE_FORMAT(TO_TIMESTAMP_LTZ(1700000000000 + n * 1000, 3), 'yyyy-MM-dd HH:mm:ss'),
  CASE WHEN credit THEN 'Credit' ELSE 'Debit' END, CASE WHEN credit THEN 'Credit in Cash' ELSE 'Withdrawal in Cash' END,
  CAST(amount AS DOUBLE), CAST(0 AS DOUBLE)
FROM generated_source;
-- @expect output contains 'started'

SELECT COUNT(*) AS transactions, COUNT(DISTINCT accountId) AS accounts,
  CONCAT('generated=', CAST(COUNT(*) AS STRING)) AS check_text
FROM generated_transactions;
-- @wait row contains 'generated=2000' timeout 120 s
-- @expect row contains 'generated=2000'

SHOW JOBS;
-- @expect row contains 'insert-into_debits_credits'

-- @say That's it. The debits-and-credits job stops when the shell exits.
