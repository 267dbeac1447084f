-- ROLLUP: one GROUP BY per set, the columns a set does not group by NULL
SELECT k, v, COUNT(*) AS n FROM o GROUP BY ROLLUP (k, v);
SELECT k AS "k", v AS "v", COUNT(*) AS "n" FROM o GROUP BY k, v UNION ALL SELECT k AS "k", NULL AS "v", COUNT(*) AS "n" FROM o GROUP BY k UNION ALL SELECT NULL AS "k", NULL AS "v", COUNT(*) AS "n" FROM o;

-- a plain GROUP BY
SELECT k, COUNT(*) FROM o GROUP BY k;
