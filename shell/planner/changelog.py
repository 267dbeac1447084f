"""The changelog path's plan: a query over rows that change, split into a keyed stage and a native rest.

Why it exists: Spark's streaming operators never take a row back, but a query over an upsert topic must (the
seed's user count would count an updated user twice). The changelog path turns every input into a *retract
stream*: rows with a weight, +1 for a row that arrives and -1 for a row that goes. Projections, filters and
linear aggregates (COUNT = SUM of weights, SUM = SUM of weight * value) are then plain Spark SQL over the
weighted rows. What needs the old version of a row is the *keyed stage* (engine/keyed_stage.py): it keeps each
input's current rows in Spark's state store, partitioned by a key, and emits the weighted difference of the
join of its inputs for every key a micro-batch touched. An upsert table needs it (the old row of a key is only
in state); so does a join of changelogs (left-join rows come with NULLs, then update as the right side arrives).

A query the path takes has this shape; anything else is named as unsupported, never run with wrong results:

    SELECT ... FROM t [[LEFT|RIGHT|FULL] JOIN t2 ON t.k = t2.k ...] [WHERE ...] [GROUP BY ...] [HAVING ...]

Every join equates the same key (a star on one key, as in the seed's three-way join), and an upsert table is
joined on (part of) its primary key, so that all versions of a row meet in one keyed partition. IN and EXISTS
subqueries arrive here as semi and anti joins on the same terms (planner/subqueries.py).
An event-time temporal join (`JOIN v FOR SYSTEM_TIME AS OF t.ts ON t.k = v.pk`) is the same stage waiting for
event time: each row of t meets the version of v valid at its time once the watermark has passed it (`Temporal`).

Output. Without GROUP BY the result is a retract stream (`__w`). With it, the result is an upsert stream keyed
by the GROUP BY columns: each touched group's new row, with `__count` (its number of input rows; 0 means the
group is gone) and `__having` (false means HAVING removes it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.changes import InputKind, ResultKind
from shell.errors import CatalogError, UnsupportedFeatureError
from shell.planner import stage_split
from shell.sql.hints import suggest
from shell.sql.operand_types import ColumnTypes, declared_types
from shell.sql.translate import to_spark_expression, to_spark_sql

RETRACT, UPSERT = ResultKind.RETRACT, ResultKind.UPSERTS  # what the plan's result rows are
APPEND, CHANGELOG, UPSERT_INPUT = InputKind.APPEND, InputKind.CHANGELOG, InputKind.UPSERT  # what an input's rows are
SEMI, ANTI = "semi", "anti"  # joins of an IN / EXISTS and a NOT EXISTS subquery (planner/subqueries.py)

WEIGHT, COUNT, HAVING, ROWNUM = "__w", "__count", "__having", "__rownum"
GROUP_KEY = "__group_key_"  # + n: a GROUP BY expression the result does not show, kept to tell its rows apart
SUBQUERY_JOIN, SUBQUERY_FILTER = "_subquery_join", "_subquery_filter"  # on the Join nodes planner/subqueries.py adds


@dataclass(frozen=True)
class Sources:
    """The tables a query reads, by lower-cased name: their definitions, kinds and temporary views."""

    tables: dict[str, TableDef]
    kinds: dict[str, str]  # APPEND, CHANGELOG or UPSERT_INPUT
    views: dict[str, str] = field(default_factory=dict)  # for FROM subqueries that Spark runs as written


@dataclass(frozen=True)
class StageInput:
    """One table of the query, as the keyed stage sees it."""

    table: TableDef
    alias: str
    kind: str  # APPEND, CHANGELOG (rows carry +I/-U/+U/-D) or UPSERT_INPUT (the latest row per primary key)
    columns: list[str]  # the table's columns the query reads, in table order
    key: list[str] = field(default_factory=list)  # the columns the stage partitions this input by
    join: str = ""  # "" for the first input; inner, left, right, full, or semi/anti (planner/subqueries.py)
    joins_with: int = 0  # the earlier input whose key this one's key is equated with
    # Spark SQL over the table's columns: only these rows enter the stage (an upsert table's new row that fails it
    # is a delete of its key: the key leaves the filtered table)
    filter: str | None = None
    derived: tuple[str, tuple[tuple[TableDef, str], ...]] | None = None  # a FROM subquery: (Spark SQL, its tables and views)
    # a FROM subquery over changelogs: its own plan (a keyed stage of its own), whose weighted rows are this input's
    plan: "ChangelogPlan | None" = None

    def stage_column(self, column: str) -> str:
        """The input column's name in the stage's output (and in the rest of the query)."""
        return f"{self.alias}__{column}"

    @property
    def shown(self) -> bool:
        """Whether the query sees this input's columns: not those of an IN or EXISTS subquery's table."""
        return self.join not in (SEMI, ANTI)


@dataclass(frozen=True)
class Rank:
    """Top-N / deduplication: ROW_NUMBER() OVER (PARTITION BY the input's key ORDER BY `order`) <= `limit`."""

    order: list[tuple[str, bool, bool]]  # (stage column, descending, nulls first)
    limit: int


@dataclass(frozen=True)
class Aggregation:
    """GROUP BY in the keyed stage (keyed by the group columns): each touched group's aggregates, before and after."""

    group: list[str]  # stage columns
    functions: list[tuple[str, str, str | None, bool]]  # (output column, count|sum|avg|min|max, argument, distinct)


@dataclass(frozen=True)
class Temporal:
    """An event-time temporal join: each row of input 0 meets the version of input 1 valid at its time."""

    left_time: str  # stage column: the time of the left row (FOR SYSTEM_TIME AS OF it)
    right_time: str  # stage column: the versioned table's event time (when a version starts)
    outer: bool  # LEFT JOIN: a left row without a version keeps NULLs


@dataclass(frozen=True)
class ChangelogPlan:
    inputs: list[StageInput]
    keyed: bool  # whether the keyed stage runs (an upsert input or a join), or weights come from the rows alone
    stage_view: str  # the view the rest of the query reads
    sql: str  # the rest of the query, Spark SQL over `stage_view`
    output: str  # RETRACT or UPSERT
    key: list[str] = field(default_factory=list)  # UPSERT: the output columns that identify a row
    rank: Rank | None = None
    aggregation: Aggregation | None = None
    temporal: Temporal | None = None
    # UPSERT whose GROUP BY is not all in the output: hidden columns (GROUP_KEY + n) that identify a row instead
    hidden_key: list[str] = field(default_factory=list)
    grows_only: bool = False  # RETRACT whose rows are never taken back (append-only inputs, inner and semi joins)
    union: bool = False  # UNION ALL: the inputs' weighted rows together, no keyed stage

    def describe(self) -> list[str]:
        lines = []
        for i, source in enumerate(self.inputs):
            how = {APPEND: "append-only", CHANGELOG: "changelog", UPSERT_INPUT: "upsert by primary key"}[source.kind]
            other = self.inputs[source.joins_with].alias
            join = {SEMI: f", the IN/EXISTS subquery of {other}: keeps the rows of {other} with a match",
                    ANTI: f", the NOT EXISTS subquery of {other}: keeps the rows of {other} without a match",
                    "": ""}.get(source.join, f", {source.join} join with {other}")
            key = f", keyed by {', '.join(source.key)}" if source.key else ""
            what = "the subquery below" if source.plan is not None else source.table.name
            lines.append(f"stage input {i}: {what} AS {source.alias} ({how}{key}{join}),"
                         f" reads {', '.join(source.columns) or 'no columns'}")
            if source.plan is not None:
                lines.extend(f"  | {line}" for line in source.plan.describe())
        if self.union:
            lines.append("union all: every input's weighted rows, no keyed stage")
        elif self.temporal is not None:
            lines.append(f"keyed stage: event-time temporal join; each row of {self.inputs[0].alias} waits until the"
                         f" watermark passes its time, then meets the version of {self.inputs[1].alias} valid then")
        elif self.keyed:
            lines.append("keyed stage: current rows of each input in Spark's state store, by key bucket;"
                         " emits the weighted change of the join per touched key")
        else:
            lines.append("no keyed stage: every input's rows carry their own weight")
        if self.aggregation is not None:
            calls = ", ".join(f"{f.upper()}({'DISTINCT ' if d else ''}{a or '*'})" for _, f, a, d in self.aggregation.functions)
            lines.append(f"grouped in the stage by {', '.join(self.aggregation.group) or 'nothing'}: {calls}")
        if self.rank is not None:
            order = ", ".join(f"{c}{' DESC' if d else ''}" for c, d, _ in self.rank.order)
            of = "each key" if self.inputs[0].key else "all rows (one key)"
            lines.append(f"top-n: the first {self.rank.limit} rows of {of} ordered by {order}, numbered")
        if self.output == UPSERT:
            key = ", ".join(self.key) if self.key else "the GROUP BY (not shown)" if self.hidden_key else \
                "the single result row"
            lines.append(f"rest: weighted aggregation in update mode; output upserts keyed by {key}")
        else:
            lines.append("rest: projection and filter of weighted rows; output retractions (+I/-D)")
        return lines

    def operator_tree(self) -> list[str]:
        """The plan as operators with their changelog modes (Flink's EXPLAIN CHANGELOG_MODE shape)."""
        from shell.planner.plan_tree import tree_lines

        return tree_lines(self)


def plan_changelog(select: exp.Expr, sources: Sources, stage_view: str, retract: bool = False) -> ChangelogPlan:
    """The changelog plan of `select` over `sources`; the rest of the query reads the stage as `stage_view`.
    With `retract` (a FROM subquery whose rows another stage reads), the result is always weighted rows: an
    aggregate is computed in a keyed stage, which gives each group's old row back when it changes."""
    if isinstance(select, exp.Union) and not isinstance(select, (exp.Intersect, exp.Except)):
        return _plan_union(select, sources, stage_view, retract)
    if not isinstance(select, exp.Select):
        raise _unsupported(f"{select.key.upper()} over changelog inputs")
    select = sorted_limit(select) or select
    _refuse_sorting(select)
    if select.args.get("with_") or select.find(exp.CTE):
        raise _unsupported("WITH over changelog inputs")
    nested = _aggregate_subquery(select)
    if select.args.get("joins") and top_n_subquery(select) is not None:
        raise _unsupported("a join (or IN/EXISTS) with the result of a Top-N subquery",
                           hint="INSERT that result into a table, and join the table")
    if top_n_subquery(select) is not None:
        return _plan_top_n(select, sources, stage_view)
    if retract and select.args.get("distinct") and not select.args.get("group") and not _aggregate_calls(select):
        select = _distinct_as_group_by(select)  # its old rows are needed: the stage's GROUP BY gives them
    split = _split(select, sources, stage_view, retract)
    if split is not None:
        return plan_changelog(split, sources, stage_view, retract)
    if nested is not None and not select.args.get("joins") and not nested.args.get("joins"):
        return _plan_stage_aggregate(nested, select, sources, stage_view)
    if _aggregates_in_stage(select, sources) or (retract and _aggregates(select)):
        return _plan_stage_aggregate(select, None, sources, stage_view)
    inputs = _inputs(select, sources, stage_view)
    query = select.copy()
    inputs = _resolve_columns(query, inputs)
    _set_keys(query, inputs)
    temporal = _temporal_join(select, inputs)
    if temporal is not None:
        inputs = _reading(inputs, {0: temporal[0], 1: temporal[1]})
    keyed = len(inputs) > 1 or inputs[0].kind == UPSERT_INPUT
    # rows are taken back when an input has them taken back, or a join pads with NULLs or keeps rows without a match
    retractions = any(i.kind != APPEND or i.join in ("left", "right", "full", ANTI) for i in inputs)
    query.set("from_", exp.From(this=exp.to_table(stage_view)))
    query.set("joins", None)
    if query.args.get("distinct") and not query.args.get("group"):
        query.set("group", exp.Group(expressions=[_unaliased(e).copy() for e in query.expressions]))
        query.set("distinct", None)
    if query.args.get("group") or any(e.find(exp.AggFunc) for e in query.expressions):
        key, hidden = _as_upserts(query, retractions)
        output = UPSERT
    else:
        if query.args.get("having"):
            raise _unsupported("HAVING without GROUP BY or aggregates")
        query.set("expressions", [*query.expressions, exp.column(WEIGHT)])
        output, key, hidden = RETRACT, [], []
    waits = None
    if temporal is not None:
        if output != RETRACT:
            raise _unsupported("GROUP BY over an event-time temporal join",
                               hint="INSERT the joined rows into a table, and aggregate that table")
        waits = Temporal(inputs[0].stage_column(temporal[0]), inputs[1].stage_column(temporal[1]),
                         inputs[1].join == "left")
    if retract and output != RETRACT:
        raise _unsupported("SELECT DISTINCT of expressions in a subquery over changelog inputs",
                           hint="select the expressions in a subquery first, then SELECT DISTINCT its columns")
    sql = to_spark_sql(query, _stage_types(inputs, stage_view))
    return ChangelogPlan(inputs, keyed, stage_view, sql, output, key, temporal=waits, hidden_key=hidden,
                         grows_only=output == RETRACT and not retractions)


def _distinct_as_group_by(select: exp.Select) -> exp.Select:
    """SELECT DISTINCT a, b .. as the GROUP BY a, b .. it is."""
    query = select.copy()
    query.set("distinct", None)
    query.set("group", exp.Group(expressions=[_unaliased(e).copy() for e in query.expressions]))
    return query


def _plan_union(union: exp.Union, sources: Sources, stage_view: str, retract: bool) -> ChangelogPlan:
    """UNION ALL: the weighted rows of every branch, each a subquery of its own (a stage, or Spark's as written
    when it filters append-only rows), under the first branch's column names. UNION (distinct) is SELECT DISTINCT
    over the UNION ALL."""
    branches = _union_branches(union, bool(union.args.get("distinct")))
    first = branches[0]
    if not isinstance(first, exp.Select) or "*" in first.named_selects:
        raise _unsupported("'*' in a UNION over changelog inputs", hint="name the columns of each branch")
    names = first.named_selects
    if union.args.get("distinct"):
        every = exp.union(*(b.copy() for b in branches), distinct=False)
        distinct = exp.select(*(exp.column(n, quoted=True) for n in names)).from_(every.subquery("__union"))
        distinct.set("distinct", exp.Distinct())
        return plan_changelog(distinct, sources, stage_view, retract)
    inputs = []
    for n, branch in enumerate(branches):
        if not isinstance(branch, exp.Select) or len(branch.expressions) != len(names):
            raise CatalogError(f"the branches of a UNION have different numbers of columns ({len(names)} and"
                               f" {len(branch.expressions)})", hint="give every branch the same columns")
        named = branch.copy()
        named.set("expressions", [exp.alias_(_unaliased(e).copy(), name, quoted=True)
                                  for e, name in zip(branch.expressions, names)])
        relation = named.subquery("__union")
        if _derivable(named, sources):
            source = _derived_input(relation, sources, None)
        else:
            source = _stage_input(relation, sources, None, f"{stage_view}_{n}")
        inputs.append(replace(source, columns=list(names)))
    items = [exp.alias_(exp.column(inputs[0].stage_column(n), quoted=True), n, quoted=True) for n in names]
    sql = to_spark_sql(exp.select(*items, exp.column(WEIGHT)).from_(stage_view))
    return ChangelogPlan(inputs, False, stage_view, sql, RETRACT, union=True,
                         grows_only=all(i.kind == APPEND for i in inputs))


def _union_branches(union: exp.Expr, flatten_distinct: bool = False) -> list[exp.Expr]:
    """The branches of a chain of UNION ALLs, in order; under a UNION (distinct), every UNION below it too."""
    if type(union) is exp.Union and (flatten_distinct or not union.args.get("distinct")):
        every = flatten_distinct or bool(union.args.get("distinct"))
        return [*_union_branches(union.this, every), *_union_branches(union.expression, every)]
    if isinstance(union, exp.Union):
        raise _unsupported(f"a {union.key.upper()} inside a UNION ALL over changelog inputs",
                           hint="write it as a subquery: SELECT .. FROM (..) AS t")
    return [union]


def _stage_types(inputs: list[StageInput], stage_view: str) -> ColumnTypes:
    """The declared types of the stage's output columns (a subquery's columns stay unknown)."""
    columns = {}
    for source in inputs:
        for name in [] if source.derived else source.columns:
            column = source.table.column(name)
            if column is not None and column.data_type:
                columns[source.stage_column(name).lower()] = column.data_type
    return {stage_view.lower(): columns}


# ---- GROUP BY in the stage ------------------------------------------------------------------------------------

LINEAR = (exp.Count, exp.Sum, exp.Avg)
STAGE_FUNCTIONS = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}


def _aggregate_subquery(select: exp.Select) -> exp.Select | None:
    """The inner query of `SELECT .. FROM (SELECT .. GROUP BY ..) ..`: an aggregate whose result is read again."""
    source = select.args.get("from_")
    inner = source.this.this if source is not None and isinstance(source.this, exp.Subquery) else None
    if isinstance(inner, exp.Select) and (inner.args.get("group") or any(e.find(exp.AggFunc) for e in inner.expressions)):
        return inner
    return None


def _aggregate_calls(select: exp.Select) -> list[exp.AggFunc]:
    return [a for e in [*select.expressions, *([select.args["having"]] if select.args.get("having") else [])]
            for a in e.find_all(exp.AggFunc)]


def _aggregates(select: exp.Select) -> bool:
    return bool(select.args.get("group") or _aggregate_calls(select))


def _retracts(select: exp.Select, sources: Sources) -> bool:
    """Whether the rows a SELECT reads can be taken back: a changelog input, a subquery over one, an outer join."""
    relations = [select.args["from_"].this] + [j.this for j in select.args.get("joins") or []]
    if any((j.side or "") for j in select.args.get("joins") or []):
        return True
    for relation in relations:
        if isinstance(relation, exp.Subquery):
            if not _derivable(relation.this, sources):
                return True
        elif not isinstance(relation, exp.Table) or sources.kinds.get(relation.name.lower(), APPEND) != APPEND:
            return True
    return False


def _needs_stage_aggregate(select: exp.Select, sources: Sources) -> bool:
    """Whether the GROUP BY needs every row of a group: MIN or MAX over rows that can be taken back, or COUNT
    DISTINCT (which Spark's streaming aggregation lacks)."""
    calls = _aggregate_calls(select)
    distinct = any(isinstance(a.this, exp.Distinct) for a in calls)
    return bool(calls) and (distinct or (_retracts(select, sources) and any(not isinstance(a, LINEAR) for a in calls)))


def _aggregates_in_stage(select: exp.Select, sources: Sources) -> bool:
    """Whether the GROUP BY needs every row of a group and can have them: one relation, no joins (`_split` moves
    a join under such an aggregate into a subquery of its own first)."""
    return not select.args.get("joins") and _needs_stage_aggregate(select, sources)


def _split(select: exp.Select, sources: Sources, stage_view: str, retract: bool) -> exp.Select | None:
    """`select` rewritten so that each keyed stage it needs is a FROM subquery (planner/stage_split.py), or None
    when one stage runs it as it is: joins on another key than the joins before them, an upsert table joined or
    grouped in the stage outside its primary key, an aggregate over a join that needs every row of its groups
    (or that gives old rows back, `retract`: another stage reads it)."""
    known = stage_split.relations(select, sources.tables, SUBQUERY_JOIN)
    if not known:
        return None
    query = stage_split.qualified(select, known)
    placed = _placed_conditions(query, known)
    if placed is not None:
        return placed
    number = 1 + sum(r.alias.startswith(stage_split.STAGE_ALIAS) for r in known)
    keys: dict[int, list[str]] = {}
    by_alias = {r.alias.lower(): n for n, r in enumerate(known)}
    for n, join in enumerate(query.args.get("joins") or [], start=1):
        pairs = _join_pairs(join.args.get("on"), by_alias, n)
        if pairs is None:
            return None  # not equalities with one earlier relation: the planner names what it cannot run
        other, theirs, mine = pairs
        if other in keys and [c.lower() for c in keys[other]] != [c.lower() for c in theirs]:
            return stage_split.split_before(query, n, known, number)
        keys[other], keys[n] = theirs, mine
    if len(known) > 1 and (_needs_stage_aggregate(query, sources) or (retract and _aggregates(query))):
        return stage_split.split_before(query, len(known), known, number)
    if len(known) == 1 and _needs_stage_aggregate(query, sources) and query.args.get("group"):
        keys[0] = [c.name for c in query.args["group"].expressions if isinstance(c, exp.Column)]
        if len(keys[0]) != len(query.args["group"].expressions):
            return None
    elif len(known) == 1:
        return None
    for n, relation in enumerate(known):
        table, hidden = relation.table, n > 0 and query.args["joins"][n - 1].args.get(SUBQUERY_JOIN)
        if table is None or hidden or sources.kinds.get(table.name.lower()) != UPSERT_INPUT or n not in keys:
            continue
        if not {c.lower() for c in keys[n]} <= {c.lower() for c in table.primary_key}:
            return stage_split.alone(query, n, known)
    return None


def _placed_conditions(query: exp.Select, known: list[stage_split.Relation]) -> exp.Select | None:
    """`query` (qualified) with its join conditions where a keyed stage can use them, or None if they are already:

    - `FROM a, b WHERE a.k = b.k AND c`: the WHERE's equalities between a relation and one before it become the ON
      of that comma (or CROSS) join: `FROM a JOIN b ON a.k = b.k WHERE c`;
    - `a JOIN b ON a.k = b.k AND c`: an inner join's other conditions move to the WHERE (the same rows);
    - `a LEFT JOIN b ON a.k = b.k AND c(b)`: conditions on the joined table alone filter that table first (a row of
      b failing them matches nothing, so a's row is padded with NULLs, as in Flink).
    Any other condition stays, and the planner names it."""
    by_alias = {r.alias.lower(): n for n, r in enumerate(known)}
    where = query.args.get("where")
    remaining = conjuncts(where.this) if where is not None else []
    query = query.copy()
    joins = query.args.get("joins") or []
    later: list[exp.Expr] = []  # inner join conditions moved to the WHERE
    filters: dict[int, list[exp.Expr]] = {}  # relation -> conditions on it alone (left joins)
    for n, join in enumerate(joins, start=1):
        if join.args.get(SUBQUERY_JOIN) or join.args.get("using"):
            continue
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        on = join.args.get("on")
        if on is None and not side and kind in ("", "CROSS", "INNER"):
            links = [c for c in remaining if _links(c, n, by_alias)]
            if links:
                remaining = [c for c in remaining if not any(c is link for link in links)]
                join.set("kind", None)
                join.set("on", exp.and_(*(c.copy() for c in links)))
            continue
        if on is None:
            continue
        parts = conjuncts(on)
        keys = [c for c in parts if _links(c, n, by_alias)]
        rest = [c for c in parts if not _links(c, n, by_alias)]
        if not keys or not rest:
            continue
        if not side:
            later += rest
        elif side == "LEFT" and all(_relations(c, by_alias) <= {n} for c in rest) and known[n].table is not None:
            filters[n] = rest
        else:
            continue
        join.set("on", exp.and_(*(c.copy() for c in keys)))
    if not later and not filters and (where is None or len(remaining) == len(conjuncts(where.this))):
        return None
    kept = [c.copy() for c in remaining] + [c.copy() for c in later]
    query.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    for n, conditions in filters.items():
        query = stage_split.alone(query, n, known, where=exp.and_(*conditions))
    return query


def _links(condition: exp.Expr, n: int, by_alias: dict[str, int]) -> bool:
    """Whether `condition` is `x = y` between a column of relation n and one of a relation before it."""
    if not isinstance(condition, exp.EQ) or not all(isinstance(s, exp.Column) for s in (condition.this, condition.expression)):
        return False
    sides = {by_alias.get(condition.this.table.lower()), by_alias.get(condition.expression.table.lower())}
    return n in sides and len(sides) == 2 and all(s is not None and s <= n for s in sides)


def _relations(condition: exp.Expr, by_alias: dict[str, int]) -> set:
    return {by_alias.get(c.table.lower()) for c in condition.find_all(exp.Column)}


def _join_pairs(condition: exp.Expr | None, by_alias: dict[str, int], n: int) -> tuple[int, list[str], list[str]] | None:
    """(the earlier relation, its columns, relation n's columns) that an ON clause equates, or None."""
    if condition is None:
        return None
    other, theirs, mine = None, [], []
    for conjunct in conjuncts(condition):
        if not isinstance(conjunct, exp.EQ):
            return None
        sides = [(by_alias.get(c.table.lower()), c.name) if isinstance(c, exp.Column) else (None, "")
                 for c in (conjunct.this, conjunct.expression)]
        if sides[1][0] == n:
            sides.reverse()
        (a, col_a), (b, col_b) = sides
        if a != n or b is None or b >= n or (other is not None and b != other):
            return None
        other = b
        mine.append(col_a)
        theirs.append(col_b)
    return (other, theirs, mine) if other is not None else None


def _plan_stage_aggregate(inner: exp.Select, outer: exp.Select | None, sources: Sources, stage_view: str) -> ChangelogPlan:
    inputs = _inputs(inner, sources, stage_view)
    if len(inputs) != 1:
        raise _unsupported("MIN, MAX, COUNT DISTINCT or a nested aggregate over a join")
    query = inner.copy()
    where = query.args.get("where")
    query.set("where", None)
    (source,) = _resolve_columns(query, inputs)
    groups = query.args["group"].expressions if query.args.get("group") else []
    if any(not isinstance(g, exp.Column) or g.args.get("_input") is None for g in groups):
        raise _unsupported("GROUP BY expressions in the stage", hint="group by columns of the table")
    key = [g.args["_column"] for g in groups]
    if source.kind == UPSERT_INPUT and not {k.lower() for k in key} <= {c.lower() for c in source.table.primary_key}:
        raise _unsupported(f"MIN, MAX, COUNT DISTINCT or a nested aggregate over upsert table '{source.table.name}'"
                           " grouped by columns outside its primary key",
                           hint="read the changes as debezium-json, or use COUNT/SUM/AVG")
    functions: list[tuple[str, str, str | None, bool]] = []

    def stage_call(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.AggFunc):
            return node
        kind = STAGE_FUNCTIONS.get(type(node))
        if kind is None:
            raise _unsupported(f"{node.sql_name().upper()} on the changelog path", hint="COUNT, SUM, AVG, MIN and MAX are")
        argument, distinct = node.this, isinstance(node.this, exp.Distinct)
        if distinct:
            argument = argument.expressions[0]
        if argument is None or isinstance(argument, (exp.Star, exp.Literal)) and kind == "count":
            column = None
        elif isinstance(argument, exp.Column) and argument.args.get("_input") is not None:
            column = argument.name
        else:
            raise _unsupported(f"'{node.sql()}' in the stage", hint="aggregate plain columns")
        name = f"__agg{len(functions)}"
        functions.append((name, kind, column, distinct))
        return exp.column(name, quoted=True)

    items = [e.transform(stage_call) for e in query.expressions]
    having = query.args.get("having")
    rest = exp.select(*items, exp.column(WEIGHT)).from_(stage_view)
    if having is not None:
        rest = rest.where(having.this.transform(stage_call))
    staged = replace(source, key=key,
                     filter=to_spark_expression(_unqualified(where.this)) if where is not None else None)
    aggregation = Aggregation([g.name for g in groups], functions)
    if outer is None:
        return ChangelogPlan([staged], True, stage_view, to_spark_sql(rest), RETRACT, [], aggregation=aggregation)
    query = outer.copy()
    alias = outer.args["from_"].this.alias_or_name
    query.set("from_", exp.From(this=rest.subquery(alias or None)))
    if query.args.get("group") or any(e.find(exp.AggFunc) for e in query.expressions):
        output_key, hidden = _as_upserts(query, True)
        return ChangelogPlan([staged], True, stage_view, to_spark_sql(query), UPSERT, output_key,
                             aggregation=aggregation, hidden_key=hidden)
    query.set("expressions", [*query.expressions, exp.column(WEIGHT)])
    return ChangelogPlan([staged], True, stage_view, to_spark_sql(query), RETRACT, [], aggregation=aggregation)


def _unqualified(condition: exp.Expr) -> exp.Expr:
    """A WHERE over one table with its columns' table names dropped (it runs on the table's own rows)."""
    def strip(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.table:
            return exp.column(node.name, quoted=True)
        return node

    return condition.copy().transform(strip)


# ---- Top-N and deduplication -----------------------------------------------------------------------------------


def refuse_order_without_limit(select: exp.Select) -> None:
    """ORDER BY without LIMIT, on either path: a stream has no end to sort up to (Flink sorts only by time)."""
    if select.args.get("order") is not None and select.args.get("limit") is None:
        raise UnsupportedFeatureError("ORDER BY without LIMIT over a stream is not supported",
                                      hint="add LIMIT n: the first n rows in that order (a Top-N)")


def _refuse_sorting(select: exp.Select) -> None:
    """ORDER BY, LIMIT, OFFSET and QUALIFY that `sorted_limit` could not turn into a Top-N, named with a way out."""
    order, limit = select.args.get("order"), select.args.get("limit")
    if order is not None and limit is not None:
        raise _unsupported("ORDER BY .. LIMIT over a join, an aggregate or with OFFSET",
                           hint="ORDER BY .. LIMIT n ranks the rows of one table; INSERT the result into a table first")
    refuse_order_without_limit(select)
    if limit is not None:
        raise _unsupported("LIMIT without ORDER BY over changelog inputs",
                           hint="add ORDER BY: it says which rows are first")
    for arg in ("offset", "qualify"):
        if select.args.get(arg):
            raise _unsupported(f"{arg.upper()} over changelog inputs")


def sorted_limit(select: exp.Select) -> exp.Select | None:
    """`SELECT .. FROM t [WHERE ..] ORDER BY .. LIMIT n` as the Top-N it is (Flink runs it as one, over all rows):
    `SELECT .. FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY ..) AS __rownum FROM t [WHERE ..]) t WHERE __rownum <= n`,
    whose row number `*` does not show."""
    order, limit = select.args.get("order"), select.args.get("limit")
    relation = select.args["from_"].this if select.args.get("from_") else None
    if order is None or limit is None or select.args.get("offset") or relation is None:
        return None
    if select.args.get("distinct") or any(e.find(exp.Window) for e in select.expressions):
        return None
    count = limit.expression
    if not isinstance(count, exp.Literal) or count.is_string:
        raise _unsupported(f"LIMIT {count.sql()}", hint="LIMIT takes a number")
    number = exp.Window(this=exp.RowNumber(), order=order.copy())
    if any(select.args.get(k) for k in ("joins", "group", "having")) or not isinstance(relation, exp.Table) or \
            any(e.find(exp.AggFunc) for e in select.expressions):
        # the rows of a join or an aggregate, ranked as a subquery of their own (`_ranking_a_subquery`)
        items = [e.copy() if isinstance(e, exp.Alias) else exp.alias_(e.copy(), e.alias_or_name, quoted=True)
                 for e in select.expressions]
        inner = select.copy()
        inner.set("order", None)
        inner.set("limit", None)
        inner.set("expressions", [*items, exp.alias_(number, ROWNUM)])
        outer = exp.select(*(exp.column(i.alias, quoted=True) for i in items)).from_(inner.subquery("__sorted"))
        return outer.where(exp.LTE(this=exp.column(ROWNUM), expression=count.copy()))
    inner = exp.select(exp.Star(), exp.alias_(number, ROWNUM)).from_(relation.copy())
    if select.args.get("where"):
        inner.set("where", select.args["where"].copy())
    outer = exp.select(*(e.copy() for e in select.expressions)).from_(inner.subquery(relation.alias_or_name))
    return outer.where(exp.LTE(this=exp.column(ROWNUM), expression=count.copy()))


def top_n_subquery(select: exp.Select) -> tuple[exp.Select, exp.Window, str, int] | None:
    """`SELECT .. FROM (SELECT .., ROW_NUMBER() OVER (..) AS rn FROM t) WHERE rn <= N`: (inner, window, rn, N)."""
    source = select.args.get("from_")
    if source is None or not isinstance(source.this, exp.Subquery) or not isinstance(source.this.this, exp.Select):
        return None
    inner = source.this.this
    numbered = [e for e in inner.expressions if isinstance(e, exp.Alias) and isinstance(e.this, exp.Window)
                and isinstance(e.this.this, exp.RowNumber)]
    if len(numbered) != 1:
        return None
    name = numbered[0].alias
    where = select.args.get("where")
    condition = where.this if where is not None else None
    limits = {exp.LTE: 0, exp.LT: -1, exp.EQ: 0}
    if (type(condition) in limits and isinstance(condition.this, exp.Column) and condition.this.name.lower() == name.lower()
            and isinstance(condition.expression, exp.Literal) and not condition.expression.is_string):
        limit = int(condition.expression.this) + limits[type(condition)]
        if type(condition) is exp.EQ and limit != 1:
            return None
        return inner, numbered[0].this, name, limit
    raise _unsupported("ROW_NUMBER() without an outer WHERE rn <= N",
                       hint="Top-N is SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rn FROM t) WHERE rn <= N")


def _plan_top_n(select: exp.Select, sources: Sources, stage_view: str) -> ChangelogPlan:
    inner, window, number, limit = top_n_subquery(select)
    if any(inner.args.get(clause) for clause in ("joins", "group", "having")):
        inner, window = _ranking_a_subquery(inner, window, number)
    (source,) = _inputs(inner, sources, stage_view)
    table = source.table
    where = inner.args.get("where")
    if where is not None:  # filters the table's rows before they are ranked (on an upsert table: as deletes)
        for column in where.find_all(exp.Column):
            if table.column(column.name) is None:
                raise CatalogError(f"unknown column '{column.name}'", hint=suggest(column.name, table.column_names()))
        source = replace(source, filter=to_spark_expression(_unqualified(where.this)))

    def column_of(node: exp.Expr) -> str:
        column = table.column(node.name) if isinstance(node, exp.Column) else None
        if column is None:
            raise _unsupported(f"'{node.sql()}' in a Top-N window", hint="PARTITION BY and ORDER BY plain columns")
        return column.name

    names: dict[str, str] = {}  # the subquery's output names -> table columns ("" for the row number)
    for item in inner.expressions:
        if isinstance(item, exp.Star):
            names.update({c.name.lower(): c.name for c in table.columns})
        elif isinstance(item, exp.Alias) and item.this is window:
            names[number.lower()] = ""
        else:
            names[item.alias_or_name.lower()] = column_of(_unaliased(item))
    partition = [column_of(p) for p in window.args.get("partition_by") or []]
    order = [(column_of(o.this), bool(o.args.get("desc")), bool(o.args.get("nulls_first")))
             for o in (window.args.get("order").expressions if window.args.get("order") else [])]
    if source.kind == UPSERT_INPUT and not {c.lower() for c in partition} <= {c.lower() for c in table.primary_key}:
        raise _unsupported(f"Top-N over upsert table '{table.name}' partitioned by columns outside its primary key",
                           hint="partition by (part of) the primary key, or read the changes as debezium-json")
    used = {c for c, _, _ in order}

    def resolve(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return node
        if node.name.lower() not in names:
            raise CatalogError(f"unknown column '{node.name}'", hint=suggest(node.name, list(names)))
        real = names[node.name.lower()]
        used.add(real)
        return exp.column(source.stage_column(real) if real else ROWNUM, quoted=True)

    outer = select.copy()
    items = []
    for item in outer.expressions:
        if isinstance(item, exp.Star):  # the table's columns, and the row number unless it is sorted_limit's own
            items += [exp.alias_(exp.column(n), n, quoted=True) for n in names
                      if n != ROWNUM and not n.startswith("__rank_")]
        else:
            items.append(exp.alias_(item, item.name, quoted=True) if isinstance(item, exp.Column) else item)
    outer.set("expressions", [i.transform(resolve) for i in items] + [exp.column(WEIGHT)])
    outer.set("from_", exp.From(this=exp.to_table(stage_view)))
    outer.set("where", None)
    used.discard("")
    columns = [c.name for c in table.columns if c.name in used]
    staged = replace(source, columns=columns, key=partition)
    rank = Rank([(source.stage_column(c), d, n) for c, d, n in order], limit)
    return ChangelogPlan([staged], True, stage_view, to_spark_sql(outer), RETRACT, [], rank)


def _ranking_a_subquery(inner: exp.Select, window: exp.Window, number: str) -> tuple[exp.Select, exp.Window]:
    """A Top-N over a join or an aggregate: the rows it ranks become a FROM subquery of their own (a stage of their
    own), and the window ranks that subquery's columns.

        SELECT a.k, COUNT(*) AS n, ROW_NUMBER() OVER (PARTITION BY a.k ORDER BY COUNT(*) DESC) AS rn FROM a JOIN b ..
    ->  SELECT k, n, ROW_NUMBER() OVER (PARTITION BY k ORDER BY n DESC) AS rn
        FROM (SELECT a.k AS k, COUNT(*) AS n FROM a JOIN b ..) AS __ranked
    """
    items = [e for e in inner.expressions if not (isinstance(e, exp.Alias) and e.this is window)]
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)) for e in items):
        raise _unsupported("'*' in a Top-N over a join or an aggregate", hint="name the columns it ranks")
    named = [e if isinstance(e, exp.Alias) else exp.alias_(e, e.alias_or_name, quoted=True) for e in items]
    extra: list[exp.Alias] = []

    def output_of(node: exp.Expr) -> exp.Expr:
        text = node.sql()
        for item in [*named, *extra]:
            if item.this.sql() == text or (isinstance(node, exp.Column) and not node.table
                                           and item.alias.lower() == node.name.lower()):
                return exp.column(item.alias, quoted=True)
        extra.append(exp.alias_(node.copy(), f"__rank_{len(extra)}", quoted=True))
        return exp.column(extra[-1].alias, quoted=True)

    ranked = window.copy()
    ranked.set("partition_by", [output_of(p) for p in window.args.get("partition_by") or []])
    if window.args.get("order") is not None:
        order = window.args["order"].copy()
        for ordered in order.expressions:
            ordered.set("this", output_of(ordered.this))
        ranked.set("order", order)
    rows = inner.copy()
    rows.set("expressions", [e.copy() for e in [*named, *extra]])
    outer = exp.select(*(exp.column(e.alias, quoted=True) for e in named),
                       exp.alias_(ranked, number, quoted=True, copy=False))
    outer = outer.from_(rows.subquery("__ranked"))
    return outer, next(e.this for e in outer.expressions if isinstance(e, exp.Alias) and isinstance(e.this, exp.Window))


# ---- inputs and joins ------------------------------------------------------------------------------------------


def _inputs(select: exp.Select, sources: Sources, stage_view: str) -> list[StageInput]:
    tables, kinds = sources.tables, sources.kinds
    relations = [(select.args["from_"].this, None)] + [(j.this, j) for j in select.args.get("joins") or []]
    inputs: list[StageInput] = []
    for n, (relation, join) in enumerate(relations):
        if isinstance(relation, exp.Subquery) and _derivable(relation.this, sources):
            inputs.append(_derived_input(relation, sources, join))
            continue
        if isinstance(relation, exp.Subquery) and isinstance(relation.this, (exp.Select, exp.Union)):
            inputs.append(_stage_input(relation, sources, join, f"{stage_view}_{n}"))
            continue
        if not isinstance(relation, exp.Table) or relation.name.lower() not in tables:
            raise _unsupported(f"reading '{relation.sql()}' in a query over changelog inputs",
                               hint="read tables, or subqueries that filter, project or UNION ALL append-only tables")
        table = tables[relation.name.lower()]
        alias = relation.alias_or_name
        if any(i.alias.lower() == alias.lower() for i in inputs):
            raise CatalogError(f"the name '{alias}' is used twice in FROM", hint="give each table its own alias")
        condition = join.args.get(SUBQUERY_FILTER) if join is not None else None
        inputs.append(StageInput(table, alias, kinds[table.name.lower()], [], join=_join_kind(join), filter=condition))
    return inputs


def _temporal_join(select: exp.Select, inputs: list[StageInput]) -> tuple[str, str] | None:
    """(left time column, right time column) of `t JOIN v FOR SYSTEM_TIME AS OF t.time ON t.k = v.pk`, or None.

    Checks what Flink requires of an event-time temporal join: the versioned table has a primary key, a watermark
    and is joined on its whole key; the left side is append-only and the time is its watermarked column."""
    joins = select.args.get("joins") or []
    versioned = [j for j in joins if isinstance(j.this, exp.Table) and j.this.args.get("version") is not None]
    if not versioned:
        return None
    if len(joins) != 1 or len(inputs) != 2:
        raise _unsupported("an event-time temporal join with other joins", hint="join one table FOR SYSTEM_TIME AS OF")
    left, right = inputs
    time = versioned[0].this.args["version"].expression
    if isinstance(time, exp.Column) and _is_processing_time(left.table, time.name):
        return None  # a processing-time join: with the table's current rows, a regular join over its changelog
    if right.join not in ("inner", "left"):
        raise _unsupported(f"a {right.join.upper()} temporal join", hint="use JOIN or LEFT JOIN")
    if left.kind != APPEND or left.table.watermark is None:
        raise _unsupported(f"a temporal join of '{left.table.name}', which is not append-only with a watermark",
                           hint="the left side of FOR SYSTEM_TIME AS OF must be an append-only table with a WATERMARK")
    if not right.table.primary_key or right.table.watermark is None or right.kind == APPEND:
        raise _unsupported(
            f"FOR SYSTEM_TIME AS OF over '{right.table.name}', which is not a versioned table",
            hint="a versioned table is an upsert or changelog table with a PRIMARY KEY and a WATERMARK")
    if not isinstance(time, exp.Column) or time.name.lower() != left.table.watermark.column.lower():
        raise _unsupported(f"FOR SYSTEM_TIME AS OF {time.sql()}",
                           hint=f"use the left table's event time: {left.alias}.{left.table.watermark.column}")
    if sorted(c.lower() for c in right.key) != sorted(c.lower() for c in right.table.primary_key):
        raise _unsupported(f"a temporal join on {', '.join(right.key)}",
                           hint=f"join '{right.table.name}' on its primary key ({', '.join(right.table.primary_key)})")
    return left.table.watermark.column, right.table.watermark.column


def _is_processing_time(table: TableDef, name: str) -> bool:
    column = table.column(name)
    return column is not None and (column.expression or "").replace(" ", "").upper() == "PROCTIME()"


def _reading(inputs: list[StageInput], extra: dict[int, str]) -> list[StageInput]:
    """The inputs, each also reading its column in `extra` (in table order)."""
    out = []
    for n, source in enumerate(inputs):
        wanted = {c.lower() for c in source.columns} | ({extra[n].lower()} if n in extra else set())
        out.append(replace(source, columns=[c.name for c in source.table.columns if c.name.lower() in wanted]))
    return out


def _join_kind(join: exp.Join | None) -> str:
    if join is None:
        return ""
    if join.args.get(SUBQUERY_JOIN):
        return join.args[SUBQUERY_JOIN]
    if join.args.get("using") or join.args.get("on") is None:
        raise _unsupported("a join without ON t1.k = t2.k over changelog inputs")
    if (join.kind or "").upper() in ("CROSS", "SEMI", "ANTI"):
        raise _unsupported(f"{join.kind.upper()} JOIN over changelog inputs")
    return (join.side or "inner").lower()


def _derivable(query: exp.Expr, sources: Sources) -> bool:
    """A FROM subquery Spark can run as it is: it filters, projects or UNION ALLs append-only tables."""
    from shell.planner.planner import referenced_names

    if not isinstance(query, (exp.Select, exp.Union)) or query.find(exp.AggFunc) or query.find(exp.Window):
        return False
    if any(s.args.get("group") or s.args.get("joins") for s in query.find_all(exp.Select)):
        return False
    if isinstance(query, exp.Union) and query.args.get("distinct"):
        return False
    names = [n.lower() for n in referenced_names(query)]
    return bool(names) and all(n in sources.tables and sources.kinds.get(n) == APPEND for n in names)


def _derived_input(relation: exp.Subquery, sources: Sources, join: exp.Join | None) -> StageInput:
    from shell.catalog.model import Column
    from shell.planner.planner import referenced_names, renamed

    query = relation.this
    columns = query.named_selects
    if not columns or "*" in columns:
        raise _unsupported(f"'*' in the subquery '{relation.alias_or_name}'", hint="name the subquery's columns")
    alias = relation.alias_or_name or "subquery"
    used = [sources.tables[n.lower()] for n in referenced_names(query)]
    views = {t.name.lower(): sources.views[t.name.lower()] for t in used}
    sql = to_spark_sql(renamed(query, views), declared_types((views[t.name.lower()], t) for t in used))
    table = TableDef(name=alias, columns=[Column(name=c, data_type="STRING") for c in columns])
    derived = (sql, tuple((t, views[t.name.lower()]) for t in used))
    return StageInput(table, alias, APPEND, [], join=_join_kind(join), derived=derived)


def _stage_input(relation: exp.Subquery, sources: Sources, join: exp.Join | None, stage_view: str) -> StageInput:
    """A FROM subquery over changelogs: planned as a stage of its own, whose weighted rows this input reads (a
    changelog, or append-only rows when that plan never takes a row back)."""
    from shell.catalog.model import Column

    columns = relation.this.named_selects
    if not columns or "*" in columns:
        raise _unsupported(f"'*' in the subquery '{relation.alias_or_name}'", hint="name the subquery's columns")
    plan = plan_changelog(relation.this, sources, stage_view, retract=True)
    alias = relation.alias_or_name or "subquery"
    table = TableDef(name=alias, columns=[Column(name=c, data_type=None) for c in columns])
    kind = APPEND if plan.grows_only else CHANGELOG
    return StageInput(table, alias, kind, [], join=_join_kind(join), plan=plan)


def _set_keys(select: exp.Select, inputs: list[StageInput]) -> None:
    """Each input's key from the ON clauses (or an upsert input's primary key); check they form one key."""
    by_alias = {i.alias.lower(): n for n, i in enumerate(inputs)}
    keys: dict[int, list[str]] = {}
    partner: dict[int, int] = {}
    for n, join in enumerate(select.args.get("joins") or [], start=1):
        mine, theirs, other = [], [], None
        for conjunct in conjuncts(join.args["on"]):
            sides = _equated_columns(conjunct, by_alias)
            if sides is None:
                raise _unsupported(f"the join condition '{_as_written(conjunct, inputs)}' of a {inputs[n].join.upper()}"
                                   " JOIN over changelog inputs",
                                   hint="an outer join's ON takes equalities between two tables (t1.k = t2.k) and"
                                        " conditions on the joined table alone; move the rest to WHERE")
            (a, col_a), (b, col_b) = sides
            if b == n:
                (a, col_a), (b, col_b) = (b, col_b), (a, col_a)
            if a != n or b >= n or (other is not None and b != other):
                raise _unsupported(f"the join condition '{_as_written(conjunct, inputs)}'",
                                   hint="each ON must equate the joined table's key with one earlier table's key")
            other = b
            mine.append(col_a)
            theirs.append(col_b)
        if other in keys and [c.lower() for c in keys[other]] != [c.lower() for c in theirs]:
            raise _unsupported(
                f"joining on {', '.join(theirs)} of '{inputs[other].alias}', which is already joined on "
                f"{', '.join(keys[other])}", hint="every join of a changelog query must use the same key")
        keys[other], keys[n], partner[n] = theirs, mine, other
    if len(inputs) == 1 and inputs[0].kind == UPSERT_INPUT:
        keys[0] = list(inputs[0].table.primary_key)
    for n, source in enumerate(inputs):
        key = keys.get(n, [])
        if source.kind == UPSERT_INPUT and len(inputs) > 1:
            primary = {c.lower() for c in source.table.primary_key}
            if not {c.lower() for c in key} <= primary:
                raise _unsupported(
                    f"joining upsert table '{source.table.name}' on {', '.join(key)}, which is not part of its"
                    f" primary key ({', '.join(source.table.primary_key)})",
                    hint="join upsert tables on their primary key, or read the changes as debezium-json")
        inputs[n] = replace(source, key=key, joins_with=partner.get(n, 0))


def _as_written(condition: exp.Expr, inputs: list[StageInput]) -> str:
    """A resolved condition as the user wrote it: `alias.column` rather than the stage's column names."""
    def written(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.args.get("_input") is not None:
            return exp.column(node.args["_column"], table=inputs[node.args["_input"]].alias)
        return node

    return condition.copy().transform(written).sql()


def conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The parts of a condition joined by AND (parentheses dropped)."""
    if isinstance(condition, exp.Paren):
        return conjuncts(condition.this)
    if isinstance(condition, exp.And):
        return conjuncts(condition.this) + conjuncts(condition.expression)
    return [condition]


def _equated_columns(condition: exp.Expr, by_alias: dict[str, int]) -> tuple | None:
    """((input, column), (input, column)) for `a.x = b.y` between two different inputs; else None."""
    if not isinstance(condition, exp.EQ):
        return None
    sides = []
    for side in (condition.this, condition.expression):
        if not isinstance(side, exp.Column) or side.args.get("_input") is None:
            return None
        sides.append((side.args["_input"], side.args["_column"]))
    return tuple(sides) if sides[0][0] != sides[1][0] else None


# ---- columns ---------------------------------------------------------------------------------------------------


def _resolve_columns(select: exp.Select, inputs: list[StageInput]) -> list[StageInput]:
    """Point every column of the query at its input's stage column; expand `*`; note what each input reads."""
    by_alias = {i.alias.lower(): n for n, i in enumerate(inputs)}
    used: list[set[str]] = [set() for _ in inputs]
    output_names = {e.alias.lower() for e in select.expressions  # a column named as itself names no other column
                    if isinstance(e, exp.Alias) and not (isinstance(e.this, exp.Column) and e.this.name.lower() == e.alias.lower())}

    reading = [True]  # ON clauses are the stage's key, not columns it has to carry

    def column_of(n: int, name: str) -> str:
        column = inputs[n].table.column(name)
        if column is None:
            names = inputs[n].table.column_names()
            raise CatalogError(f"table '{inputs[n].alias}' has no column '{name}'", hint=suggest(name, names))
        if reading[0]:
            used[n].add(column.name)
        return column.name

    def resolve(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star) or node.args.get("_input") is not None:
            return node  # not a column, or one resolved already (an expanded `*`)
        name, qualifier = node.name, node.table
        if qualifier:
            if qualifier.lower() not in by_alias:
                raise CatalogError(f"unknown table or alias '{qualifier}'", hint=suggest(qualifier, [i.alias for i in inputs]))
            n = by_alias[qualifier.lower()]
        else:
            owners = [n for n, i in enumerate(inputs) if i.shown and i.table.column(name) is not None]
            if not owners:
                if name.lower() in output_names:
                    return node  # a SELECT alias, e.g. in GROUP BY or HAVING
                every = [c for i in inputs for c in i.table.column_names()]
                raise CatalogError(f"unknown column '{name}'", hint=suggest(name, every))
            if len(owners) > 1:
                raise CatalogError(f"column '{name}' is ambiguous", hint=f"write {inputs[owners[0]].alias}.{name}")
            n = owners[0]
        real = column_of(n, name)
        resolved = exp.column(inputs[n].stage_column(real), quoted=True)
        resolved.set("_input", n)
        resolved.set("_column", real)
        return resolved

    expressions = []
    for item in select.expressions:
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
            qualifier = item.table if isinstance(item, exp.Column) else ""
            chosen = [by_alias[qualifier.lower()]] if qualifier else [n for n, i in enumerate(inputs) if i.shown]
            for n in chosen:
                for column in inputs[n].table.columns:
                    column_of(n, column.name)
                    resolved = exp.column(inputs[n].stage_column(column.name), quoted=True)
                    resolved.set("_input", n)
                    resolved.set("_column", column.name)
                    expressions.append(exp.alias_(resolved, column.name, quoted=True))
            continue
        if isinstance(item, exp.Column):  # keeps its own name in the output
            item = exp.alias_(item.copy(), item.name, quoted=True)
        expressions.append(item)
    select.set("expressions", expressions)
    for key in ("expressions", "where", "group", "having", "joins"):
        reading[0] = key != "joins"
        value = select.args.get(key)
        if key == "joins":  # their ON clauses: a joined subquery's own columns are its own
            for join in value or []:
                if join.args.get("on") is not None:
                    join.set("on", join.args["on"].transform(resolve))
        elif isinstance(value, list):
            select.set(key, [v.transform(resolve) for v in value])
        elif value is not None:
            select.set(key, value.transform(resolve))
    return [
        replace(i, columns=[c.name for c in i.table.columns if c.name in used[n]])
        for n, i in enumerate(inputs)
    ]


# ---- aggregates ------------------------------------------------------------------------------------------------


def _output_key(select: exp.Select) -> list[str]:
    """The output columns that are the GROUP BY expressions; [] when one of them is not in the output."""
    group = select.args.get("group")
    if group is None:
        return []
    names = []
    for expression in group.expressions:
        text = expression.sql()
        match = next((e for e in select.expressions if _unaliased(e).sql() == text
                      or (isinstance(expression, exp.Column) and e.alias_or_name.lower() == expression.name.lower()
                          and not expression.table)), None)
        if match is None:
            return []
        names.append(match.alias_or_name)
    return names


def _as_upserts(query: exp.Select, retractions: bool) -> tuple[list[str], list[str]]:
    """Rewrite an aggregating query over weighted rows into one that gives each group's row with `__count` (0:
    the group is gone) and `__having` (false: HAVING removes it); return its key and hidden key columns."""
    key = _output_key(query)
    hidden = _hidden_key(query, key)
    _weigh_aggregates(query, retractions)
    having = query.args.get("having")
    query.set("having", None)
    query.set("expressions", [*query.expressions, *hidden, exp.alias_(exp.Sum(this=exp.column(WEIGHT)), COUNT),
                              exp.alias_(having.this if having else exp.true(), HAVING)])
    return key, [h.alias for h in hidden]


def _hidden_key(select: exp.Select, key: list[str]) -> list[exp.Alias]:
    """The GROUP BY expressions as hidden output columns, when the output does not show them all (`key` is
    empty): without them, two groups with equal aggregates could not be told apart in the result's changes."""
    group = select.args.get("group")
    if key or group is None:
        return []
    return [exp.alias_(e.copy(), f"{GROUP_KEY}{n}") for n, e in enumerate(group.expressions)]


def _unaliased(node: exp.Expr) -> exp.Expr:
    return node.this if isinstance(node, exp.Alias) else node


def _weigh_aggregates(select: exp.Select, retractions: bool) -> None:
    """Aggregates over weighted rows: COUNT and SUM become sums of weights; the rest need retraction-free input."""
    weight = exp.column(WEIGHT)

    def weighted(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.AggFunc):
            return node
        if isinstance(node, exp.Count):
            argument = node.this
            if isinstance(argument, exp.Distinct):
                if retractions:
                    raise _unsupported("COUNT(DISTINCT ...) over rows that can be updated or deleted")
                return node
            if argument is None or isinstance(argument, (exp.Star, exp.Literal)):
                return exp.Sum(this=weight.copy())
            return exp.Sum(this=_weight_if_not_null(argument))
        if not retractions:
            return node
        if isinstance(node, exp.Sum):
            value = exp.Sum(this=exp.Mul(this=exp.Paren(this=node.this.copy()), expression=weight.copy()))
            present = exp.Sum(this=_weight_if_not_null(node.this))
            return exp.If(this=exp.EQ(this=present, expression=exp.Literal.number(0)), true=exp.Null(), false=value)
        if isinstance(node, exp.Avg):
            total = exp.Sum(this=exp.Mul(this=exp.Paren(this=node.this.copy()), expression=weight.copy()))
            present = exp.Sum(this=_weight_if_not_null(node.this))
            return exp.Div(this=total, expression=exp.Nullif(this=present, expression=exp.Literal.number(0)))
        name = node.sql_name() if hasattr(node, "sql_name") else type(node).__name__
        raise _unsupported(f"{name.upper()} over rows that can be updated or deleted",
                           hint="COUNT, SUM and AVG are supported on the changelog path")

    for key in ("expressions", "having"):
        value = select.args.get(key)
        if isinstance(value, list):
            select.set(key, [v.transform(weighted) for v in value])
        elif value is not None:
            select.set(key, value.transform(weighted))


def _weight_if_not_null(argument: exp.Expr) -> exp.Expr:
    return exp.If(
        this=exp.Is(this=exp.Paren(this=argument.copy()), expression=exp.Null()),
        true=exp.Literal.number(0),
        false=exp.column(WEIGHT),
    )


def _unsupported(what: str, hint: str | None = None) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(f"{what} is not supported on the changelog path", hint=hint)
