-- streamshell quickstart: a generated table, so no broker is needed.
--   streamshell -f examples/quickstart.sql
-- TEMPORARY keeps the table out of the saved catalog, so the script can run any number of times.

CREATE TEMPORARY TABLE orders (
  order_id    BIGINT,
  customer_id INT,
  amount      DECIMAL(10, 2),
  order_time  TIMESTAMP(3),
  customer AS CONCAT('customer-', CAST(customer_id AS STRING)),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '20',
  'fields.order_id.kind' = 'sequence',
  'fields.order_id.start' = '1',
  'fields.order_id.end' = '20',
  'fields.customer_id.min' = '1',
  'fields.customer_id.max' = '5',
  'fields.amount.min' = '1',
  'fields.amount.max' = '500',
  'fields.order_time.max-past' = '5 min'
);

SHOW TABLES;

DESCRIBE orders;

-- A continuous query. The table is bounded (20 rows), so the query ends when its input ends.
SELECT order_id, customer, amount FROM orders WHERE amount > 250;

-- Orders and revenue per minute: a tumbling window fires when the watermark passes its end; at the end of a
-- bounded input every window fires, as in Flink.
SELECT window_start, window_end, COUNT(*) AS orders, SUM(amount) AS revenue
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end;

-- The same filter as a detached job writing to the print sink.
CREATE TEMPORARY TABLE big_orders (
  order_id BIGINT,
  customer STRING,
  amount   DECIMAL(10, 2)
) WITH ('connector' = 'print', 'print-identifier' = 'big');

-- As in Flink's SQL client, a script's INSERT returns once its job runs; 'true' waits for the job to end, so the
-- printed rows show here.
SET 'table.dml-sync' = 'true';
INSERT INTO big_orders SELECT order_id, customer, amount FROM orders WHERE amount > 400;
