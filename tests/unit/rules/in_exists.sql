-- IN: a semi join on the compared column, the subquery's own condition in its ON
SELECT id FROM o WHERE k IN (SELECT k FROM t WHERE c = 'a');
SELECT id FROM o SEMI JOIN t AS __in1 ON k = __in1.k AND "__in1"."c" = 'a';

-- NOT EXISTS tied by an equality: an anti join on it
SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.k = o.k) AND v > 1;
SELECT id FROM o ANTI JOIN t AS __in1 ON o.k = __in1.k WHERE v > 1;

-- an aggregating subquery: its groups are a subquery of their own
SELECT id FROM o WHERE k IN (SELECT k FROM t GROUP BY k HAVING COUNT(*) > 1);
SELECT id FROM o SEMI JOIN (SELECT k AS __key0 FROM t GROUP BY k HAVING COUNT(*) > 1) AS __in1 ON k = __in1.__key0;

-- no subquery: the rule does not apply
SELECT id FROM o WHERE k IN (1, 2);
