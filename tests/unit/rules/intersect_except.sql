-- INTERSECT: the rows both sides have, as a GROUP BY over a UNION ALL that marks each row's side
SELECT k FROM o INTERSECT SELECT k FROM t;
SELECT "k" FROM (SELECT "__set_l"."k" AS "k", 1 AS __in_left, 0 AS __in_right FROM (SELECT k FROM o) AS __set_l UNION ALL SELECT "__set_r"."k" AS "k", 0 AS __in_left, 1 AS __in_right FROM (SELECT k FROM t) AS __set_r) AS __set GROUP BY "k" HAVING SUM(__in_left) > 0 AND SUM(__in_right) > 0;

-- a UNION is planned as it is
SELECT k FROM o UNION SELECT k FROM t;
