-- A corpus of Flink SQL statements, one form of each kind Flink's SQL reference describes, written for this test:
-- each is carried out (`expect: ok`) or refused with a named reason (`expect:` the start of the error).
-- tests/unit/test_flink_statement_corpus.py runs them in order, in one session, after its own CREATE TABLEs.

-- expect: ok
CREATE TABLE t1 (a INT, b STRING) WITH ('connector' = 'datagen');
-- expect: ok
CREATE TABLE IF NOT EXISTS t1 (a INT) WITH ('connector' = 'datagen');
-- expect: ok
CREATE TEMPORARY TABLE t2 (a INT, b AS a + 1, m TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL) WITH ('connector' = 'kafka', 'topic' = 'x', 'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'json');
-- expect: ok
CREATE TABLE t3 (a INT COMMENT 'the a', PRIMARY KEY (a) NOT ENFORCED) COMMENT 'tbl' WITH ('connector' = 'blackhole');
-- expect: ok
CREATE TABLE t4 (dt STRING, v INT) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = '/tmp/corpus/p', 'format' = 'json');
-- expect: ok
CREATE TABLE t5 WITH ('connector' = 'blackhole') LIKE t1;
-- expect: table 't6' has no 'connector' option
CREATE TABLE t6 WITH ('path' = '/tmp/corpus/q') LIKE orders (EXCLUDING OPTIONS);
-- expect: table 't7' has no 'connector' option
CREATE TABLE t7 AS SELECT a FROM t1;
-- expect: CREATE OR REPLACE TABLE ... AS SELECT is not supported
CREATE OR REPLACE TABLE t8 AS SELECT a FROM t1;
-- expect: REPLACE TABLE AS SELECT is not supported
REPLACE TABLE t8 AS SELECT a FROM t1;
-- expect: unexpected 'DISTRIBUTED'
CREATE TABLE t9 (a INT) DISTRIBUTED BY HASH(a) INTO 4 BUCKETS WITH ('connector' = 'blackhole');
-- expect: ok
CREATE VIEW v1 AS SELECT cust, amount FROM orders;
-- expect: ok
CREATE TEMPORARY VIEW IF NOT EXISTS v2 (c, amt) AS SELECT cust, amount FROM orders;
-- expect: ok
CREATE VIEW v3 COMMENT 'c' AS SELECT * FROM orders;
-- expect: ok
ALTER VIEW v1 RENAME TO v1b;
-- expect: ok
ALTER VIEW v1b AS SELECT cust FROM orders;
-- expect: ok
DROP VIEW IF EXISTS v1b;
-- expect: ok
DROP TEMPORARY VIEW v2;
-- expect: ok
ALTER TABLE t1 SET ('rows-per-second' = '5');
-- expect: ok
ALTER TABLE t1 RESET ('rows-per-second');
-- expect: ok
ALTER TABLE t1 RENAME TO t1r;
-- expect: ok
ALTER TABLE t1r ADD c DOUBLE;
-- expect: ok
ALTER TABLE t1r ADD (d INT COMMENT 'x' FIRST, e INT AFTER a);
-- expect: ok
ALTER TABLE t1r MODIFY c FLOAT;
-- expect: ok
ALTER TABLE t1r DROP c;
-- expect: ok
ALTER TABLE t1r RENAME b TO bb;
-- expect: ok
ALTER TABLE IF EXISTS nosuch SET ('x' = 'y');
-- expect: expected a data type, found 'BY'
ALTER TABLE t1r ADD DISTRIBUTION BY HASH(a) INTO 2 BUCKETS;
-- expect: table 't1r' has no watermark to drop
ALTER TABLE t1r DROP WATERMARK;
-- expect: ok
ALTER TABLE t1r ADD PRIMARY KEY (a) NOT ENFORCED;
-- expect: ok
ALTER TABLE t1r DROP PRIMARY KEY;
-- expect: ok
DROP TABLE IF EXISTS nosuch;
-- expect: ok
DROP TEMPORARY TABLE t2;
-- expect: ok
DROP TABLE t1r;
-- expect: ok
CREATE CATALOG c1 WITH ('type' = 'generic_in_memory');
-- expect: ok
CREATE CATALOG IF NOT EXISTS c1 WITH ('type' = 'generic_in_memory');
-- expect: ok
ALTER CATALOG c1 SET ('default-database' = 'd');
-- expect: ok
USE CATALOG c1;
-- expect: ok
CREATE DATABASE IF NOT EXISTS db1 COMMENT 'x';
-- expect: ok
USE db1;
-- expect: ok
USE CATALOG default_catalog;
-- expect: ok
USE default_database;
-- expect: ok
DROP DATABASE IF EXISTS c1.db1 CASCADE;
-- expect: ALTER DATABASE is not supported
ALTER DATABASE default_database SET ('k' = 'v');
-- expect: ok
DROP CATALOG IF EXISTS c1;
-- expect: ok
SHOW CATALOGS;
-- expect: ok
SHOW CURRENT CATALOG;
-- expect: ok
SHOW DATABASES;
-- expect: ok
SHOW CURRENT DATABASE;
-- expect: ok
SHOW TABLES;
-- expect: ok
SHOW TABLES FROM default_database LIKE 'o%';
-- expect: ok
SHOW VIEWS;
-- expect: ok
SHOW COLUMNS FROM orders;
-- expect: ok
SHOW COLUMNS FROM orders LIKE '%u%';
-- expect: ok
SHOW FUNCTIONS;
-- expect: SHOW USER is not supported
SHOW USER FUNCTIONS;
-- expect: SHOW MODULES is not supported
SHOW MODULES;
-- expect: SHOW FULL is not supported
SHOW FULL MODULES;
-- expect: SHOW JARS is not supported
SHOW JARS;
-- expect: SHOW PROCEDURES is not supported
SHOW PROCEDURES;
-- expect: SHOW PARTITIONS is not supported
SHOW PARTITIONS t4;
-- expect: ok
SHOW CREATE TABLE orders;
-- expect: ok
SHOW CREATE VIEW v3;
-- expect: SHOW CREATE CATALOG is not supported
SHOW CREATE CATALOG default_catalog;
-- expect: ok
SHOW JOBS;
-- expect: ok
SHOW JOBS LIKE 'insert%';
-- expect: ok
SHOW JOBS NOT LIKE 'x%';
-- expect: SHOW JOBS takes no FROM
SHOW JOBS FROM default_database;
-- expect: ok
DESCRIBE orders;
-- expect: ok
DESC orders;
-- expect: ok
DESCRIBE EXTENDED orders;
-- expect: ok
DESCRIBE CATALOG default_catalog;
-- expect: DESCRIBE DATABASE is not supported
DESCRIBE DATABASE default_database;
-- expect: ok
DESCRIBE FUNCTION UPPER;
-- expect: ok
DESCRIBE FUNCTION EXTENDED UPPER;
-- expect: LOAD MODULE is not supported
LOAD MODULE hive WITH ('hive-version' = '3.1.2');
-- expect: UNLOAD MODULE is not supported
UNLOAD MODULE hive;
-- expect: USE MODULES is not supported
USE MODULES core;
-- expect: ADD JAR is not supported
ADD JAR '/tmp/x.jar';
-- expect: REMOVE JAR is not supported
REMOVE JAR '/tmp/x.jar';
-- expect: CREATE FUNCTION ... LANGUAGE JAVA is not supported: functions run in S
CREATE FUNCTION f1 AS 'com.example.F';
-- expect: function 'f2': cannot import module 'mod' (No module named 'mod')
CREATE TEMPORARY FUNCTION f2 AS 'mod.fn' LANGUAGE PYTHON;
-- expect: CREATE FUNCTION ... LANGUAGE JAVA is not supported: functions run in S
CREATE TEMPORARY SYSTEM FUNCTION f3 AS 'com.example.F' LANGUAGE JAVA;
-- expect: CREATE FUNCTION ... USING JAR is not supported
CREATE FUNCTION f4 AS 'com.example.F' USING JAR '/tmp/x.jar';
-- expect: ALTER FUNCTION is not supported
ALTER FUNCTION f1 AS 'com.example.G';
-- expect: ok
DROP FUNCTION IF EXISTS f1;
-- expect: ok
DROP TEMPORARY SYSTEM FUNCTION IF EXISTS f3;
-- expect: ANALYZE TABLE is not supported
ANALYZE TABLE orders COMPUTE STATISTICS;
-- expect: TRUNCATE TABLE is not supported
TRUNCATE TABLE t3;
-- expect: CALL (procedures) is not supported
CALL sys.do_something(1);
-- expect: ok
SET 'table.local-time-zone' = 'Europe/Berlin';
-- expect: ok
SET;
-- expect: ok
RESET 'table.local-time-zone';
-- expect: ok
RESET;
-- expect: ok
SHOW JOBS;
-- expect: unknown job 'nosuch'
STOP JOB 'nosuch';
-- expect: STOP JOB ... WITH DRAIN is not supported yet
STOP JOB 'nosuch' WITH SAVEPOINT WITH DRAIN;
-- expect: unknown job 'nosuch'
DESCRIBE JOB 'nosuch';
-- expect: ok
SELECT 1;
-- expect: ok
SELECT * FROM orders;
-- expect: ok
SELECT cust, SUM(amount) FROM orders GROUP BY cust;
-- expect: ok
SELECT * FROM orders /*+ OPTIONS('path' = '/tmp/corpus/other-orders') */;
-- expect: in the OPTIONS hint after 'orders': unsupported option 'scan.mode'
SELECT * FROM orders /*+ OPTIONS('scan.mode' = 'latest-offset') */;
-- expect: an OPTIONS hint cannot change the connector of 'orders'
SELECT * FROM orders /*+ OPTIONS('connector' = 'datagen') */;
-- expect: the join hint BROADCAST is not carried out: Spark chooses how a stream
SELECT /*+ BROADCAST(custs) */ * FROM orders JOIN custs ON orders.cust = custs.cid;
-- expect: the STATE_TTL hint is not carried out: a TTL per table of the query is
SELECT /*+ STATE_TTL('orders' = '1d') */ cust, COUNT(*) FROM orders GROUP BY cust;
-- expect: MATCH_RECOGNIZE is not supported
SELECT * FROM orders MATCH_RECOGNIZE (PARTITION BY cust ORDER BY ts MEASURES A.id AS aid PATTERN (A B) DEFINE A AS A.amount > 1, B AS B.amount < 1);
-- expect: FOR SYSTEM_TIME AS OF CAST('2026-01-01 00:00:00' AS TIMESTAMP) (time t
SELECT * FROM orders FOR SYSTEM_TIME AS OF TIMESTAMP '2026-01-01 00:00:00';
-- expect: ok
SELECT * FROM orders TABLESAMPLE (10 PERCENT);
-- expect: ok
SELECT cust FROM orders GROUP BY cust HAVING COUNT(*) > 1 ORDER BY cust LIMIT 3;
-- expect: ORDER BY without LIMIT over a stream is not supported
SELECT id FROM orders ORDER BY ts;
-- expect: ok
SELECT id FROM orders LIMIT 5;
-- expect: OFFSET over a stream is not supported
SELECT id FROM orders OFFSET 3 ROWS FETCH NEXT 2 ROWS ONLY;
-- expect: table function split in Spark SQL
SELECT * FROM orders, LATERAL TABLE(split(cust)) AS t(w);
-- expect: ok
SELECT cust, w FROM orders CROSS JOIN UNNEST(ARRAY[1, 2]) AS t(w);
-- expect: ok
WITH x AS (SELECT cust FROM orders) SELECT * FROM x;
-- expect: ok
VALUES (1, 'a'), (2, 'b');
-- expect: ok
SELECT * FROM (VALUES (1), (2)) AS t(a);
-- expect: ok
INSERT INTO sink SELECT cust, SUM(amount) FROM orders GROUP BY cust;
-- expect: INSERT OVERWRITE is not supported: a streaming job appends to its targ
INSERT OVERWRITE sink SELECT cust, SUM(amount) FROM orders GROUP BY cust;
-- expect: ok
INSERT INTO sink (cust) SELECT cust FROM orders;
-- expect: INSERT with a static PARTITION clause is not supported
INSERT INTO sink PARTITION (cust = 'x') SELECT amount FROM orders;
-- expect: ok
INSERT INTO sink VALUES ('a', 1.0);
-- expect: ok
EXECUTE INSERT INTO sink VALUES ('a', 1.0);
-- expect: ok
EXECUTE STATEMENT SET BEGIN INSERT INTO sink VALUES ('a', 1.0); END;
-- expect: ok
BEGIN STATEMENT SET; INSERT INTO sink VALUES ('a', 1.0); INSERT INTO sink SELECT cust, amount FROM orders; END;
-- expect: statement set is not closed: expected END
BEGIN STATEMENT SET; INSERT INTO sink VALUES ('a', 1.0);
-- expect: ok
EXPLAIN SELECT * FROM orders;
-- expect: ok
EXPLAIN PLAN FOR SELECT * FROM orders;
-- expect: ok
EXPLAIN CHANGELOG_MODE SELECT cust, COUNT(*) FROM orders GROUP BY cust;
-- expect: EXPLAIN ESTIMATED_COST is not supported: Spark's streaming planner has
EXPLAIN ESTIMATED_COST, JSON_EXECUTION_PLAN SELECT * FROM orders;
-- expect: EXPLAIN PLAN_ADVICE is not supported: streamshell gives no plan advice
EXPLAIN PLAN_ADVICE SELECT * FROM orders;
-- expect: DELETE FROM writes a tombstone, which only an upsert table (upsert-kaf
DELETE FROM custs WHERE cid = 'x';
-- expect: UPDATE is not supported
UPDATE custs SET name = 'y' WHERE cid = 'x';
-- expect: CREATE MATERIALIZED is not supported
CREATE MATERIALIZED TABLE mt FRESHNESS = INTERVAL '1' MINUTE AS SELECT cust FROM orders;
-- expect: CREATE MODEL is not supported
CREATE MODEL m1 WITH ('provider' = 'openai');
-- expect: CREATE CONNECTION is not supported
CREATE CONNECTION cn WITH ('type' = 'x');
-- expect: SHOW MATERIALIZED is not supported
SHOW MATERIALIZED TABLES;
-- expect: DESCRIBE DATABASE is not supported
DESCRIBE DATABASE default_database;
-- expect: SHOW CREATE FUNCTION is not supported
SHOW CREATE FUNCTION f2;
