"""IN and EXISTS subqueries in WHERE, turned into the semi and anti joins the changelog path runs.

Why it exists: Spark refuses a streaming subquery inside an expression, but `WHERE x IN (SELECT y FROM t)` is
everyday SQL and Flink runs it as a semi join: a row is in the result while its key has at least one match, and
leaves it when its last match goes. So, before the changelog planner sees the query, each such conjunct of the
WHERE becomes one more join of the query, a SEMI JOIN (IN, EXISTS) or an ANTI JOIN (NOT EXISTS), on the equalities
that tie the subquery to the outer row and the subquery's conditions on its own table (which filter that table's
rows as they enter the stage: stage_inputs.py). A user cannot write either kind (the grammar refuses them, as
Flink's does), so a join of that kind is always one of these. The keyed stage then keeps the subquery table's rows per key like any
other join input, but joins them without adding columns or multiplying rows (engine/keyed_stage.py).

    x IN (SELECT y FROM t WHERE c)                 ->  SEMI JOIN t AS __in1 ON x = __in1.y AND c(__in1)
    EXISTS (SELECT .. FROM t WHERE t.y = o.x AND c) ->  SEMI JOIN t AS __in1 ON o.x = __in1.y AND c(__in1)
    NOT EXISTS (..)                                 ->  ANTI JOIN, the same way
    x IN (SELECT y FROM t GROUP BY y HAVING h)      ->  SEMI JOIN (SELECT y AS __key0 FROM t GROUP BY y HAVING h)
                                                        AS __in1 ON x = __in1.__key0 (the aggregate: a stage)

`x NOT IN (SELECT ...)` is refused: one NULL anywhere in the subquery makes it false for every row, which is a
condition on the whole table, not on a key. NOT EXISTS says what is usually meant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.errors import CatalogError, UnsupportedFeatureError
from shell.planner.model import ANTI, SEMI
from shell.planner.sql_parts import conjuncts
from shell.sql.hints import suggest
from shell.sql.positions import at_first_name, at_name

if TYPE_CHECKING:
    from shell.planner.rules import Context

ALIAS = "__in"  # + n: the alias of the n-th subquery's table, which the outer query cannot name


def rule(query: exp.Expr, context: Context) -> exp.Expr | None:
    """The rule: a SELECT with IN or EXISTS subqueries, as semi and anti joins."""
    if not subquery_predicates(query):
        return None
    return as_joins(query, context.sources.tables)


def subquery_predicates(select: exp.Expr) -> list[exp.Expr]:
    """The IN-subquery and EXISTS expressions anywhere in a SELECT's own clauses (not in its FROM)."""
    if not isinstance(select, exp.Select):
        return []
    found = []
    for key in ("expressions", "where", "having", "group"):
        value = select.args.get(key)
        for part in value if isinstance(value, list) else [value] if value is not None else []:
            found += [n for n in part.find_all(exp.In, exp.Exists) if isinstance(n, exp.Exists) or n.args.get("query")]
    return found


def as_joins(select: exp.Select, tables: dict[str, TableDef]) -> exp.Select:
    """A copy of `select` whose WHERE conjuncts `[NOT] EXISTS (..)` and `.. IN (SELECT ..)` are semi or anti joins
    (tables: the query's tables by lower-cased name). Any other place of a subquery is refused."""
    where = select.args.get("where")
    parts = conjuncts(where.this) if where is not None else []
    kept, joins = [], []
    for part in parts:
        join = _as_join(part, tables, len(joins) + 1)
        if join is None:
            kept.append(part)
        else:
            joins.append(join)
    query = select.copy()
    if joins:
        query.set("joins", [*(query.args.get("joins") or []), *joins])
        query.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    left = subquery_predicates(query)
    if left:
        raise UnsupportedFeatureError(
            f"the subquery in '{_short(left[0])}' is not supported",
            hint="IN (SELECT ..) and [NOT] EXISTS (..) are supported as conditions of the WHERE joined by AND")
    return query


def _as_join(condition: exp.Expr, tables: dict[str, TableDef], n: int) -> exp.Join | None:
    negated = isinstance(condition, exp.Not)
    inner = condition.this if negated else condition
    if isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.In) and inner.args.get("query") is not None:
        if negated:
            raise at_first_name(UnsupportedFeatureError(
                f"'{_short(inner.this)} NOT IN (SELECT ..)' is not supported",
                hint="NOT IN is false for every row once the subquery holds a NULL; write NOT EXISTS "
                     "(SELECT 1 FROM t WHERE t.y = x)"), inner.this)
        return _join(inner.args["query"].this, _operands(inner.this), tables, n, SEMI)
    if isinstance(inner, exp.Exists):
        return _join(inner.this, [], tables, n, ANTI if negated else SEMI)
    return None


def _operands(node: exp.Expr) -> list[exp.Expr]:
    return list(node.expressions) if isinstance(node, exp.Tuple) else [node]


def _join(query: exp.Expr, outer: list[exp.Expr], tables: dict[str, TableDef], n: int, kind: str) -> exp.Join:
    """The join that stands for `outer IN (query)` (or EXISTS (query) when `outer` is empty)."""
    form = "IN (SELECT ..)" if outer else "EXISTS (..)"
    grouped = isinstance(query, exp.Select) and bool(query.args.get("group") or query.args.get("having"))
    tie = correlation(query, tables, form, f"{ALIAS}{n}")
    equalities = []
    if outer:
        selected = [e.this if isinstance(e, exp.Alias) else e for e in query.expressions]
        if len(selected) != len(outer):
            raise UnsupportedFeatureError(f"IN with {len(outer)} value(s) and a subquery of {len(selected)} column(s)",
                                          hint="the subquery selects as many columns as IN compares")
        for value, column in zip(outer, selected):
            if not isinstance(value, exp.Column):
                raise UnsupportedFeatureError(f"'{_short(value)} IN (SELECT ..)' is not supported",
                                              hint="IN compares a column of the outer table, which becomes a join key")
            if not isinstance(column, exp.Column) or column.table and not tie.is_inner(column):
                raise UnsupportedFeatureError(f"IN (SELECT {column.sql()} ..) is not supported",
                                              hint=f"select a column of '{tie.table.name}'")
            equalities.append((value, column))  # inner_column() below says if the table has no such column
    equalities += tie.equalities
    if not equalities:
        raise UnsupportedFeatureError(f"{form} without a condition on the outer row is not supported",
                                      hint=f"tie the subquery to the outer row: WHERE {tie.table.name}.y = x")
    alias, local, inner_column = tie.alias, tie.local, tie.inner_column
    if grouped or tie.derived:  # the subquery's rows are a stage of their own
        return _grouped_join(query, outer, equalities, local, alias, kind, inner_column, grouped)
    keys = [exp.EQ(this=o.copy(), expression=inner_column(i)) for o, i in equalities]
    for column in (c for part in local for c in part.find_all(exp.Column)):
        inner_column(column)  # each names a column of the table
    filters = [p.copy().transform(lambda node: exp.column(node.name, table=alias, quoted=True)
                                  if isinstance(node, exp.Column) else node) for p in local]
    return exp.Join(this=exp.Table(this=exp.to_identifier(tie.table.name), alias=exp.TableAlias(
        this=exp.to_identifier(alias))), on=exp.and_(*keys, *filters), kind=kind.upper())


@dataclass
class Correlation:
    """How a subquery of one table, view or FROM subquery is tied to the outer row: its WHERE's equalities between
    an outer column and an inner one (outer, inner), and its conditions on its own rows (`local`)."""

    table: TableDef
    derived: bool  # it reads a view or a FROM subquery
    alias: str  # the name its rows get in the outer query
    equalities: list[tuple[exp.Expr, exp.Expr]]
    local: list[exp.Expr]
    names: set[str]  # what its columns may be qualified with

    def is_inner(self, column: exp.Column) -> bool:
        if column.table:
            return column.table.lower() in self.names
        return self.table.column(column.name) is not None

    def inner_column(self, column: exp.Column) -> exp.Column:
        """`column` of the subquery's table, named through the alias (CatalogError when it has no such column)."""
        if self.table.column(column.name) is None:
            raise at_name(CatalogError(f"table '{self.table.name}' has no column '{column.name}'",
                                       hint=suggest(column.name, self.table.column_names())), column)
        return exp.column(column.name, table=self.alias)


def correlation(query: exp.Expr, tables: dict[str, TableDef], form: str, alias: str) -> Correlation:
    """How `query`, a subquery written in `form`, reads one table, view or FROM subquery and ties it to the outer
    row; refused with a hint when it reads anything else or ties it by other than equalities."""
    if not isinstance(query, exp.Select) or any(query.args.get(k) for k in ("joins", "limit", "order", "with_")):
        raise UnsupportedFeatureError(f"this subquery in {form} is not supported",
                                      hint="the subquery reads one table: SELECT y FROM t WHERE ...")
    relation = query.args["from_"].this
    derived = isinstance(relation, exp.Subquery) and isinstance(relation.this, (exp.Select, exp.SetOperation))
    if not derived and (not isinstance(relation, exp.Table) or relation.name.lower() not in tables):
        raise UnsupportedFeatureError(f"reading '{relation.sql()}' in {form} is not supported",
                                      hint="the subquery reads one table or view: SELECT y FROM t WHERE ...")
    table = _derived_table(relation, form) if derived else tables[relation.name.lower()]
    tie = Correlation(table, derived, alias, [], [], {relation.alias_or_name.lower()})  # aliased: by its alias alone
    where = query.args.get("where")
    for part in conjuncts(where.this) if where is not None else []:
        columns = list(part.find_all(exp.Column))
        if all(tie.is_inner(c) for c in columns):
            tie.local.append(part)
            continue
        sides = (part.this, part.expression) if isinstance(part, exp.EQ) else ()
        pair = [s for s in sides if isinstance(s, exp.Column)]
        if len(pair) == 2 and tie.is_inner(pair[0]) != tie.is_inner(pair[1]):
            inner_side, outer_side = (pair[0], pair[1]) if tie.is_inner(pair[0]) else (pair[1], pair[0])
            tie.equalities.append((outer_side, inner_side))
            continue
        raise UnsupportedFeatureError(
            f"the condition '{part.sql()}' between the subquery and the outer query is not supported",
            hint=f"tie the subquery to the outer row with equalities ({table.name}.y = x)")
    return tie


def _grouped_join(query: exp.Select, outer: list[exp.Expr], equalities: list[tuple[exp.Expr, exp.Expr]],
                  local: list[exp.Expr], alias: str, kind: str, inner_column, grouped: bool = True) -> exp.Join:  # noqa: ANN001
    """The join of a subquery that aggregates (`x IN (SELECT y FROM t GROUP BY y HAVING COUNT(*) > 1)`), or that
    reads a view or a FROM subquery: the semi or anti join of its rows, a subquery of its own (a stage), on the
    columns that tie it to the outer row. Those are what the IN selects, or inner columns of an EXISTS's
    equalities, which must be in the GROUP BY when it groups (an aggregate's row has no other column to compare)."""
    grouped_by = {g.name.lower() for g in (query.args["group"].expressions if query.args.get("group") else [])
                  if isinstance(g, exp.Column)}
    selected = [e.this if isinstance(e, exp.Alias) else e for e in query.expressions]
    columns, on = [], []
    for n, (outer_side, inner_side) in enumerate(equalities):
        if n < len(outer):  # IN: the n-th selected expression, as the subquery computes it
            value = selected[n]
        else:
            inner_column(inner_side)  # a column of the table
            if grouped and inner_side.name.lower() not in grouped_by:
                raise UnsupportedFeatureError(
                    f"the condition on '{inner_side.sql()}' in a subquery with GROUP BY is not supported",
                    hint=f"group the subquery by {inner_side.name} too, or tie it to the outer row through IN")
            value = exp.column(inner_side.name)
        name = f"__key{n}"
        columns.append(exp.alias_(value.copy(), name))
        on.append(exp.EQ(this=outer_side.copy(), expression=exp.column(name, table=alias)))
    rows = exp.select(*columns).from_(query.args["from_"].this.copy())  # its alias too: the clauses below name it
    if local:
        rows = rows.where(exp.and_(*(p.copy() for p in local)))
    for clause in ("group", "having"):
        if query.args.get(clause) is not None:
            rows.set(clause, query.args[clause].copy())
    return exp.Join(this=rows.subquery(alias), on=exp.and_(*on), kind=kind.upper())


def _derived_table(relation: exp.Subquery, form: str) -> TableDef:
    """The columns a view or FROM subquery of an IN / EXISTS subquery gives, as a table the rules can ask."""
    from shell.catalog.model import Column

    names = relation.this.named_selects
    if not relation.alias_or_name or not names or "*" in names or "" in names:
        raise UnsupportedFeatureError(f"reading '{_short(relation)}' in {form} is not supported",
                                      hint="name the subquery and each of its columns: (SELECT a AS x ..) AS s")
    return TableDef(name=relation.alias_or_name, columns=[Column(n, None) for n in names])


def _short(node: exp.Expr) -> str:
    text = node.sql()
    return text if len(text) <= 60 else text[:57] + "..."
