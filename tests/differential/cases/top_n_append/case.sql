CREATE TABLE scores (
  game STRING,
  player STRING,
  score INT,
  ts TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/scores.json',
  'format' = 'json'
);

SELECT game AS game, player AS player, score AS score, rn AS rank_in_game
FROM (
  SELECT game, player, score,
         ROW_NUMBER() OVER (PARTITION BY game ORDER BY score DESC) AS rn
  FROM scores
)
WHERE rn <= 3;
