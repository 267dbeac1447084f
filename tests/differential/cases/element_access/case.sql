CREATE TABLE things (
  id INT,
  pos INT,
  tags ARRAY<STRING>,
  attrs MAP<STRING, INT>
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/things.json',
  'format' = 'json'
);

SELECT id, tags[1] AS first_tag, tags[2] AS second_tag, tags[pos] AS tag_at, tags[pos + 1] AS tag_after,
       MAP[0, 'zero', 1, 'one', 2, 'two'][1] AS code_one, attrs['x'] AS x, CASE WHEN pos BETWEEN 1 AND 3 THEN ARRAY[10, 20, 30][pos] END AS literal_at,
       CASE WHEN pos IS NOT NULL THEN MAP[1, 'one', 2, 'two', 3, 'three'][pos] END AS literal_map_at, CARDINALITY(tags) AS n
FROM things;
