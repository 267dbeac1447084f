-- an aggregate over unnested rows: the relation and its UNNEST become a FROM subquery
SELECT tag, COUNT(*) AS n FROM a CROSS JOIN UNNEST(tags) AS u(tag) GROUP BY tag;
SELECT tag, COUNT(*) AS n FROM (SELECT "a"."id", "a"."tags", "u"."tag" FROM a CROSS JOIN UNNEST(tags) AS u(tag)) AS a GROUP BY tag;

-- project and filter only: left as it is
SELECT id, tag FROM a CROSS JOIN UNNEST(tags) AS u(tag) WHERE tag <> 'x';
