CREATE TABLE orders (
  id INT,
  cust STRING,
  tags ARRAY<STRING>,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/orders.json',
  'format' = 'debezium-json'
);

CREATE TABLE labels (
  tag STRING,
  label STRING,
  PRIMARY KEY (tag) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/labels.json',
  'format' = 'debezium-json'
);

SELECT 'joined' AS kind, o.id, t.tag, l.label, CAST(NULL AS INT) AS pos
FROM orders AS o CROSS JOIN UNNEST(o.tags) AS t (tag) JOIN labels AS l ON l.tag = t.tag
UNION ALL
SELECT 'padded', id, tag, cust, pos
FROM orders LEFT JOIN UNNEST(tags) WITH ORDINALITY AS t (tag, pos) ON TRUE;
