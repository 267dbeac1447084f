-- streamshell walkthrough: a tour of the shell on generated data (no broker needed).
--
--   streamshell --demo examples/walkthrough.sql                present it: Enter runs each statement, q quits
--   streamshell --demo examples/walkthrough.sql < /dev/null    check it (CI): no pauses, exit 1 on a failure
--
-- It is meant for --demo: its SELECTs read a generator that never ends (@wait says when to stop them), and one
-- statement fails on purpose (@expect error), so `streamshell -f` would stop there.
--
-- Annotations (comment lines between statements):
--   -- @say text                      narration
--   -- @pause                         wait for Enter (only on a terminal)
--   -- @wait rows>=N [timeout N s]    keep the SELECT above running until it shows N rows
--   -- @expect rows>=N | row contains 'x' | no row contains 'x' | error 'x' | ok | output contains 'x'
-- TEMPORARY tables keep the saved catalog clean, so the walkthrough can be played any number of times.

-- @say Orders, generated: five a second, forever. The watermark says events arrive at most 1 s late.
CREATE TEMPORARY TABLE orders (
  order_id    BIGINT,
  customer_id INT,
  amount      DECIMAL(10, 2),
  order_time  TIMESTAMP(3),
  customer AS CONCAT('customer-', CAST(customer_id AS STRING)),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '5',
  'fields.customer_id.min' = '1',
  'fields.customer_id.max' = '3',
  'fields.amount.min' = '1',
  'fields.amount.max' = '500'
);
-- @expect output contains 'created'

SHOW TABLES;
-- @expect row contains 'orders'

-- @say DESCRIBE shows columns, computed columns and the watermark.
DESCRIBE orders;
-- @expect rows=5
-- @expect row contains 'order_time - INTERVAL'

-- @say A typo is answered with the line, a caret and a suggestion.
SELECT * FROM order;
-- @expect error 'unknown table'

-- @pause
-- @say A continuous query: the table fills as orders arrive. We stop it at 10 rows.
SELECT order_id, customer, amount FROM orders WHERE amount > 100;
-- @wait rows>=10 timeout 90 s
-- @expect rows>=10
-- @expect row contains 'customer-'

-- @say Orders per customer in 2-second tumbling windows: a window is shown once the watermark closes it.
SELECT window_start, window_end, customer, COUNT(*) AS orders, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '2' SECOND))
GROUP BY window_start, window_end, customer;
-- @wait rows>=3 timeout 90 s
-- @expect rows>=3

-- @pause
-- @say An INSERT is a detached job: the prompt comes back at once, and SHOW JOBS follows it.
CREATE TEMPORARY TABLE big_orders (order_id BIGINT, customer STRING, amount DECIMAL(10, 2))
WITH ('connector' = 'blackhole');

INSERT INTO big_orders SELECT order_id, customer, amount FROM orders WHERE amount > 400;
-- @expect output contains 'started'

SHOW JOBS;
-- @expect row contains 'insert-into_big_orders'

-- @say That's it. Jobs still running stop when the shell exits.
