CREATE TABLE scores (
  player STRING,
  team STRING,
  points INT,
  PRIMARY KEY (player) NOT ENFORCED
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/scores.json',
  'format' = 'debezium-json'
);

SELECT player, points
FROM scores
WHERE team <> 'bench'
ORDER BY points DESC, player
LIMIT 3;
