CREATE TABLE names (
  id INT,
  name STRING
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/names.json',
  'format' = 'json'
);

SELECT id, INITCAP(name) AS title FROM names;
