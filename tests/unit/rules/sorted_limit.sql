-- ORDER BY .. LIMIT over a table: a Top-N of its rows
SELECT id, v FROM o WHERE v > 0 ORDER BY v DESC LIMIT 3;
SELECT id, v FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY v DESC) AS __rownum FROM o WHERE v > 0) AS o WHERE __rownum <= 3;

-- over an aggregate: the aggregate's rows ranked as a subquery
SELECT k, COUNT(*) AS n FROM o GROUP BY k ORDER BY n DESC LIMIT 2;
SELECT "k", "n" FROM (SELECT k AS "k", COUNT(*) AS n, ROW_NUMBER() OVER (ORDER BY n DESC) AS __rownum FROM o GROUP BY k) AS __sorted WHERE __rownum <= 2;

-- LIMIT without ORDER BY is not a Top-N
SELECT id FROM o LIMIT 3;
