CREATE TABLE baskets (
  id INT,
  tags ARRAY<STRING>,
  items ARRAY<ROW<sku STRING, qty INT>>,
  attrs MAP<STRING, INT>
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/baskets.json',
  'format' = 'json'
);

SELECT 'cross' AS how, b.id, u.tag AS name, CAST(NULL AS INT) AS num FROM baskets AS b CROSS JOIN UNNEST(b.tags) AS u (tag)
UNION ALL
SELECT 'ordinal', id, tag, pos FROM baskets CROSS JOIN UNNEST(tags) WITH ORDINALITY AS u (tag, pos)
UNION ALL
SELECT 'left', id, tag, CAST(NULL AS INT) FROM baskets LEFT JOIN UNNEST(tags) AS u (tag) ON TRUE
UNION ALL
SELECT 'rows', id, sku, qty / 2 FROM baskets CROSS JOIN UNNEST(items) AS u (sku, qty)
UNION ALL
SELECT 'rows ordinal', id, sku, pos * 100 + qty FROM baskets CROSS JOIN UNNEST(items) WITH ORDINALITY AS u (sku, qty, pos)
UNION ALL
SELECT 'map', id, k, v FROM baskets CROSS JOIN UNNEST(attrs) AS u (k, v);
