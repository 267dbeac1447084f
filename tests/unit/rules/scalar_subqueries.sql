-- correlated: a LEFT JOIN of the aggregate grouped by the tying column
SELECT o.id, (SELECT SUM(x) FROM t WHERE t.k = o.k) AS s FROM o;
SELECT o.id, __sq1.__value AS s FROM o LEFT JOIN (SELECT k AS __key0, SUM(x) AS __value FROM t GROUP BY k) AS __sq1 ON o.k = __sq1.__key0;

-- COUNT of a key without rows is 0
SELECT o.id FROM o WHERE (SELECT COUNT(*) FROM t WHERE t.k = o.k AND c = 'a') > 1;
SELECT o.id FROM o LEFT JOIN (SELECT k AS __key0, COUNT(*) AS __value FROM t WHERE c = 'a' GROUP BY k) AS __sq1 ON o.k = __sq1.__key0 WHERE COALESCE(__sq1.__value, 0) > 1;

-- uncorrelated: joined on a constant key that the outer table is given
SELECT o.id, (SELECT MAX(x) FROM t) AS m FROM o;
SELECT o.id, __sq1.__value AS m FROM (SELECT "id", "k", "v", 1 AS __one FROM o) AS o LEFT JOIN (SELECT 1 AS __key0, MAX(x) AS __value FROM t) AS __sq1 ON o.__one = __sq1.__key0;

-- an IN subquery is not a scalar one
SELECT id FROM o WHERE k IN (SELECT k FROM t);
