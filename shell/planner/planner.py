"""Planning a query: resolve its tables and views, decide the engine path and whether the input ends.

The native path runs a query as one Spark streaming query over Spark's own operators; it is right when every
input is append-only and the result never has to take a row back. Anything whose result changes (upsert and
changelog inputs, aggregation without a window, outer joins without time bounds) takes the changelog path
(planner/changelog.py). A query neither can run is refused with a message that names the reason, never run
with a wrong answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from sqlglot import exp

from shell.catalog.model import TableDef, ViewDef
from shell.catalog.store import Catalog
from shell.connectors.base import UPSERT
from shell.connectors.registry import connector_for
from shell.errors import CatalogError, UnsupportedFeatureError
from shell.formats.registry import format_options
from shell.planner import (
    changelog,
    first_rows,
    inline_views,
    known_columns,
    lookups,
    output_names,
    processing_time,
    query_hints,
    table_options,
    top_n,
    view_bodies,
)
from shell.planner.rules import in_exists, scalar_subqueries, sorted_limit, using_joins
from shell.planner.model import APPEND as APPEND_INPUT, CHANGELOG as CHANGELOG_INPUT, UPSERT_INPUT, Sources
from shell.planner.over_windows import over_calls
from shell.planner.relations import first_table, referenced_names, renamed, spark_name, written_name
from shell.planner.sql_parts import conjuncts, unaliased
from shell.planner.plan import APPEND_ONLY, CHANGELOG, NATIVE, UPDATING, Plan
from shell.sql.census import Census, copied
from shell.sql.known_calls import check_calls
from shell.sql.nodes import TableArg
from shell.sql.operand_types import declared_types
from shell.sql.positions import at_name
from shell.sql.split import gc_paused
from shell.sql.translate import find_window_tvfs, to_spark_sql
from shell.sql.windows import groups_by_window


def resolve(query: exp.Expr, catalog: Catalog, tag: str, census: Census | None = None):  # noqa: ANN201 - four things
    """The tables a query reads (through views too), its views as (view name, Spark SQL) in dependency order,
    the temporary view name of every relation, and each view as (name, parsed query). `census`: the query's."""
    tables: dict[str, TableDef] = {}
    view_defs: list[tuple[ViewDef, exp.Expr]] = []
    names: dict[str, str] = {}
    hints: dict[str, tuple[dict[str, str] | None, exp.Table]] = {}  # each relation's OPTIONS hint, where first read

    def hinted(node: exp.Expr, name: str) -> dict[str, str] | None:
        """The OPTIONS hint `node` reads `name` with: the same wherever the statement reads it (its views too)."""
        for table in node.find_all(exp.Table):
            if written_name(table).lower() != name.lower():
                continue
            options = table_options.written_options(table)
            first = hints.setdefault(name.lower(), (options, table))
            if first[0] != options:
                raise at_name(UnsupportedFeatureError(
                    f"'{name}' is read with two different OPTIONS hints (or with and without one) in one statement",
                    hint=f"read it with one set of options, or declare a second table: CREATE TEMPORARY TABLE "
                         f"{table.name}_2 WITH (...) LIKE {table.name}"), table)
        return hints.get(name.lower(), (None, None))[0]

    def visit(node: exp.Expr) -> None:
        for name in referenced_names(node, census if node is query else None):
            options = hinted(node, name)
            if name.lower() in names:
                continue
            obj = catalog.find(name)
            if isinstance(obj, ViewDef) and options is not None:
                raise at_name(UnsupportedFeatureError(
                    f"an OPTIONS hint applies to a table, and '{name}' is a view",
                    hint="write the hint after the table inside the view's query"), hints[name.lower()][1])
            if isinstance(obj, ViewDef):
                names[obj.name.lower()] = spark_name(obj.name, tag)
                view_query = view_bodies.view_query(catalog, name, obj)
                visit(view_query)
                view_defs.append((obj, view_query))
            else:
                try:
                    table = catalog.table(name)  # raises "unknown table" with a suggestion
                except CatalogError as error:  # pointed at the name where the query reads it
                    raise at_name(error, first_table(node, name)) from None
                if options is not None:
                    table = table_options.with_options(table, options, hints[name.lower()][1])
                names[table.name.lower()] = spark_name(table.name, tag)
                tables.setdefault(table.name.lower(), table)

    visit(query)
    types = declared_types((names[t.name.lower()], t) for t in tables.values())
    views = [(names[v.name.lower()], to_spark_sql(renamed(q, names), types, consume=True)) for v, q in view_defs]
    return list(tables.values()), views, names, [(v.name, q) for v, q in view_defs]


def input_kind(table: TableDef, connector) -> str:  # noqa: ANN001 - a Connector
    """How a table's rows change: append-only, a changelog format's +I/-U/+U/-D, or upserts by primary key."""
    if connector.changelog_mode == UPSERT:
        return UPSERT_INPUT
    value = format_options(table.options, "value") if connector.has_formats else None
    return CHANGELOG_INPUT if value is not None and value[0].produces_changelog else APPEND_INPUT


def refuse_time_travel(query: exp.Expr) -> None:
    """`FOR SYSTEM_TIME AS OF` anything but a time column of the joining row (a literal: time travel) reads a past
    version of a table that a stream does not keep; the translator drops the clause, so it is refused here rather
    than run as a read of the whole table."""
    for table in query.find_all(exp.Table):
        version = table.args.get("version")
        if version is None:
            continue
        if not isinstance(version.expression, exp.Column):
            raise at_name(UnsupportedFeatureError(
                f"FOR SYSTEM_TIME AS OF {version.expression.sql()} (time travel) is not supported",
                hint="a stream keeps no past versions of a table: read it as it is, or join it FOR SYSTEM_TIME AS OF "
                     "a time column of the other table (a temporal or lookup join)"), table)
        if not isinstance(table.parent, exp.Join):
            raise at_name(UnsupportedFeatureError(
                f"FOR SYSTEM_TIME AS OF on '{table.name}' outside a join is not supported",
                hint="FOR SYSTEM_TIME AS OF o.time belongs to the joined table of a temporal or lookup join"), table)


def refuse_offset(query: exp.Expr) -> None:
    """OFFSET over a stream: Spark refuses it ("Offset is not supported on streaming DataFrames"), Flink's streaming
    mode too; said in our words, with the way out."""
    if query.find(exp.Offset) is not None:
        raise UnsupportedFeatureError("OFFSET over a stream is not supported",
                                      hint="a stream has no end to count rows from: use LIMIT n alone, or "
                                           "ORDER BY .. LIMIT n for a Top-N")


def groups_by_renamed_window(select: exp.Select) -> bool:
    """The SELECT groups by a FROM subquery's window_start and window_end under other names (Nexmark q5's
    `window_start AS starttime`, then `GROUP BY starttime, endtime`): a window aggregation over a window's rows,
    whose rows are final when the window closes, as Flink keeps the window through the renaming."""
    group = select.args.get("group")
    if group is None:
        return False
    grouped = {e.name.lower() for e in group.expressions if isinstance(e, exp.Column)}
    relations = [select.args["from_"].this] if select.args.get("from_") else []
    relations += [j.this for j in select.args.get("joins") or []]
    for relation in relations:
        if not (isinstance(relation, exp.Subquery) and isinstance(relation.this, exp.Select)):
            continue
        named = {unaliased(e).name.lower(): e.alias_or_name.lower() for e in relation.this.expressions
                 if isinstance(unaliased(e), exp.Column)}  # fmt: skip
        if {"window_start", "window_end"} <= named.keys() and {named["window_start"], named["window_end"]} <= grouped:
            return True
    return False


def updating_reason(query: exp.Expr, kinds: dict[str, str], census: Census | None = None,
                    table_of: Callable[[str], TableDef | None] | None = None) -> str | None:
    """Why the query's result changes rather than grows (it needs the changelog path), or None. `census`: of a tree
    that holds `query` (census.py); it skips the walks that could find nothing. `table_of` gives an append-only
    table with a watermark by name: a keep-first deduplication on its time only grows (planner/first_rows.py)."""
    changing = [name for name, kind in kinds.items() if kind != APPEND_INPUT]
    if changing:
        return f"reads changelog input ({', '.join(changing)})"
    if (census is None or census.has(exp.Intersect, exp.Except)) and query.find(exp.Intersect, exp.Except):
        kind = query.find(exp.Intersect, exp.Except).key.upper()  # here or in a subquery: Spark runs neither
        return f"{kind}: a row is in the result while the rows of both sides say so"
    if isinstance(query, exp.Union):
        return next((r for r in (updating_reason(query.this, kinds, census, table_of),
                                 updating_reason(query.expression, kinds, census, table_of)) if r),
                    "UNION (distinct): a row is shown once however many branches have it" if query.args.get("distinct")
                    else None)
    if not isinstance(query, exp.Select):
        return None
    if (census is None or census.has_subquery_predicate()) and in_exists.subquery_predicates(query):
        return "IN or EXISTS with a subquery: a row is in the result while it has a match (a semi or anti join)"
    if (census is None or census.has(exp.Subquery)) and any(
            found.this.find(exp.Table) for found in scalar_subqueries.scalar_subqueries(query)):
        return "a scalar subquery: a row's value changes as the subquery's rows do (a LEFT JOIN of its aggregate)"
    if top_n.top_n_subquery(query) is not None and (
            table_of is None or first_rows.keep_first_by_time(query, table_of) is None):
        return "Top-N or deduplication with ROW_NUMBER: a key's rows are replaced as better ones arrive"
    if (census is None or census.has(exp.Window)) and over_calls(query):
        return "OVER aggregation: each row waits in keyed state for the watermark, then meets the rows before it"
    if sorted_limit.sorted_limit(query) is not None:
        return "ORDER BY with LIMIT: a Top-N, whose first rows are replaced as better ones arrive"
    legacy_window = any(
        isinstance(f, exp.Anonymous) and f.name.upper() in ("TUMBLE", "HOP", "SESSION")
        for g in (query.args.get("group").expressions if query.args.get("group") else [])
        for f in g.find_all(exp.Func)
    )
    aggregating = bool(query.args.get("group")) or ((census is None or census.has(exp.AggFunc))
                                                    and any(e.find(exp.AggFunc) for e in query.expressions))
    if aggregating and not legacy_window and not groups_by_window(query) and not groups_by_renamed_window(query):
        # its own GROUP BY has no window, even over a window's rows (the busiest window per user): it updates
        return "aggregates without a window: every group's result is updated as rows arrive"
    if legacy_window or ((census is None or census.has(exp.TableFromRows)) and bool(find_window_tvfs(query))):
        return None  # window aggregations, window joins and window Top-Ns: each window's rows once, when it closes
    for join in query.args.get("joins") or []:
        if (join.side or "").upper() in ("LEFT", "RIGHT", "FULL") and _on_keys(join.args.get("on")):
            return f"{join.side.upper()} JOIN without time bounds: rows padded with NULLs are updated when a match arrives"
    return None


def nested_updating_reason(query: exp.Expr, kinds: dict[str, str],
                           table_of: Callable[[str], TableDef | None] | None = None) -> str | None:
    """Why a FROM subquery of the query (a view or CTE written in) has a result that changes, or None."""
    for subquery in query.find_all(exp.Subquery):
        if isinstance(subquery.this, exp.Select) and subquery.find_ancestor(TableArg) is None:
            reason = updating_reason(subquery.this, kinds, table_of=table_of)
            if reason is not None:
                return reason
    return None


def _expiring_join(query: exp.Expr) -> str | None:
    """Why a query with a state TTL takes the changelog path: a regular join anywhere in it (on keys, by ON or USING;
    not a window, interval, temporal or lookup join) whose rows the TTL expires, which only the keyed stage does
    (Spark's stream-stream join keeps them); None for a query without one."""
    for select in query.find_all(exp.Select):
        if find_window_tvfs(select) or _time_bounded(select):
            continue
        for join in select.args.get("joins") or []:
            lookup = isinstance(join.this, exp.Table) and join.this.args.get("version") is not None
            keyed = join.args.get("using") or _on_keys(join.args.get("on"))
            if keyed and not lookup and not isinstance(join.this, exp.Unnest):
                return "a regular join with a state TTL (table.exec.state.ttl): its rows expire in the keyed stage"
    return None


def _time_bounded(select: exp.Select) -> bool:
    """Whether a SELECT's ON or WHERE compares columns of two relations by order (an interval join's time bounds:
    Spark's join drops its rows by the watermark, and Flink gives an interval join no TTL)."""
    conditions = [j.args.get("on") for j in select.args.get("joins") or []] + [select.args.get("where")]
    return any(_orders_sides(c) for c in conditions if c is not None)


def _on_keys(condition: exp.Expr | None) -> bool:
    """Whether a join's ON equates a column of each side and bounds no side by another's order (an interval join's
    time bounds, which Spark's join keeps its rows by): a regular join, whatever its other conditions."""
    if condition is None:
        return False
    parts = conjuncts(condition)
    keyed = any(isinstance(c, exp.EQ) and all(isinstance(s, exp.Column) for s in (c.this, c.expression))
                and not (c.this.table and c.this.table.lower() == c.expression.table.lower()) for c in parts)
    return keyed and not _orders_sides(condition)


def _orders_sides(condition: exp.Expr) -> bool:
    """Whether `condition` compares columns of two relations by order (<, <=, >, >=, BETWEEN)."""
    return any(_sides(c) > 1 for c in condition.find_all(exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between))


def _sides(node: exp.Expr) -> int:
    """How many relations the qualified columns of `node` name."""
    return len({c.table.lower() for c in node.find_all(exp.Column) if c.table})


def is_stateless(query: exp.Expr, census: Census | None = None) -> bool:
    """A single SELECT that only filters and projects rows: no aggregate, join, window, sort, limit or subquery.
    `census`: the query's own (census.py), which answers without walking."""
    if not isinstance(query, exp.Select):
        return False
    if (census is None or census.has(exp.TableFromRows)) and find_window_tvfs(query):
        return False
    if any(query.args.get(k) for k in ("group", "having", "joins", "distinct", "order", "limit", "with_")):
        return False
    if census is not None:
        return not census.has(exp.AggFunc, exp.Window, exp.Subquery, exp.Union)
    return not any(query.find(node) for node in (exp.AggFunc, exp.Window, exp.Subquery, exp.Union))


def plan_query(query: exp.Expr, catalog: Catalog, state_ttl: bool = False) -> Plan:
    """How `query` runs. `state_ttl`: its session sets `table.exec.state.ttl`, which only the keyed stage carries
    out, so a regular join takes the changelog path (Spark's stream-stream join would keep its rows for ever)."""
    # Planning copies and rewrites the query's tree a few times: for a large query, millions of small objects,
    # over which Python's cyclic collector ran again and again (a third of the time); see shell/sql/split.py.
    with gc_paused():
        return _plan_query(query, catalog, state_ttl)


def _plan_query(query: exp.Expr, catalog: Catalog, state_ttl: bool = False) -> Plan:
    # One census of the query's tree (sql/census.py) answers the rules' questions about kinds of node it does not
    # hold without a walk each; the native path changes the planner's own copy of the tree in place, the one copy
    # it makes (taken with its census in one walk: to name the result's columns, or else before renaming).
    tag = uuid.uuid4().hex[:8]
    query_hints.refuse_hints(query)  # a hint would change what the query does; OPTIONS: in resolve
    check_calls(query)  # a function nobody has: refused here, under its name, not by Spark at run time
    known_columns.check_columns(query, catalog)  # before Spark, with the caret under the name
    given = query
    census: Census | None
    item_names = output_names.item_names(query)  # as output_names.flink_names, on the planner's own copy
    if item_names is not None:
        query, census = copied(query)
        query = output_names.named(query, item_names)
        census.note(exp.Alias, exp.Identifier)
    else:
        census = Census(query)
    if census.has(exp.Version):
        refuse_time_travel(query)
    if census.has(exp.Offset) and census.tables:  # VALUES alone is no stream: Spark skips the rows
        refuse_offset(query)
    tables, views, names, bodies = resolve(query, catalog, tag, census)
    connectors = {t.name: connector_for(t) for t in tables}
    kinds = {t.name: input_kind(t, connectors[t.name]) for t in tables}
    bounded = all(connectors[t.name].is_bounded(t) for t in tables)
    source_views = {t.name.lower(): names[t.name.lower()] for t in tables}
    table_of = _append_tables_with_watermarks(tables, kinds)
    reason = updating_reason(query, kinds, census, table_of)
    reads_views = inline_views.reads_views(query, catalog, census)
    if reason is None and state_ttl and not reads_views:
        reason = _expiring_join(query)
    if reads_views:
        expanded = inline_views.inlined(query, catalog)
        reason = updating_reason(expanded, kinds, table_of=table_of) or nested_updating_reason(expanded, kinds, table_of)
        if reason is None and state_ttl:
            reason = _expiring_join(expanded)
        if reason is not None:  # the changelog path plans views and CTEs as parts of the query
            query, census = expanded, None
            tables, views, names, bodies = resolve(query, catalog, tag)
            source_views = {t.name.lower(): names[t.name.lower()] for t in tables}
    if reason is not None and tables:  # without a table (only VALUES) the query is static: Spark gives its result
        processing_time.refuse_processing_time_windows(query, tables, bodies, reason, census)
        if views:
            raise UnsupportedFeatureError(
                f"a query that {reason.split(':')[0]} cannot read views through TABLE(...) yet",
                hint="write the view's query into this one",
            )
        sources = Sources(
            {t.name.lower(): t for t in tables}, {t.name.lower(): kinds[t.name] for t in tables}, names
        )
        query = using_joins.as_on(query, sources.tables)  # the stages take a join's keys from ON
        plan = changelog.plan_changelog(query, sources, stage_view=f"__{tag}_stage")
        return Plan(
            sources=tables, spark_sql=plan.sql, path=CHANGELOG, reason=reason, bounded=bounded,
            # a temporal join's rows are final once emitted; so are those of inner and semi joins of append-only rows
            output=APPEND_ONLY if plan.stage.waits_for_event_time or plan.grows_only else UPDATING,
            source_views=source_views, changelog=plan,
        )
    if isinstance(query, exp.Select):
        top_n.refuse_order_without_limit(query)
    windows = processing_time.processing_time_windows(query, tables, bodies, census)
    looked_up = lookups.lookup_tables(query, tables, bodies)
    stateless = len(tables) == 1 and not views and is_stateless(query, census)
    if query is given:  # no item needed a name: the tree is still the caller's, and the rest changes it
        query, census = copied(query)
    types = declared_types((names[t.name.lower()], t) for t in tables)
    query, first = _first_rows(query, table_of, names, types, tag, 0)
    if first:
        census = None  # the tree changed
    for name, body in bodies:  # a view whose body deduplicates keeps its first rows as the query does
        lifted_body, found = _first_rows(body.copy(), table_of, names, types, tag, len(first))
        if found:
            first += found
            views = [(v, to_spark_sql(renamed(lifted_body, names), types) if v == names[name.lower()] else sql)
                     for v, sql in views]
    spark_query = renamed(query, names, census)  # in place: the planner's own copy
    inputs = processing_time.read_processing_time(spark_query, {w.time_col.lower() for w in windows}, census)
    by_view = {names[t.name.lower()]: t for t in tables}
    by_view |= {i.view: by_view[i.relation] for i in inputs if i.relation in by_view}
    return Plan(
        sources=tables,
        spark_sql=to_spark_sql(spark_query, declared_types(by_view.items()), consume=True, census=census),
        stateless=stateless,
        path=NATIVE,
        reason="every input is append-only",
        bounded=bounded,
        output=APPEND_ONLY,
        views=views,
        source_views=source_views,
        processing_time=tuple(inputs),
        lookups=looked_up,
        first_rows=tuple(first),
    )


def _append_tables_with_watermarks(tables: list[TableDef], kinds: dict[str, str]) -> Callable[[str], TableDef | None]:
    by_name = {t.name.lower(): t for t in tables if kinds[t.name] == APPEND_INPUT and t.watermark is not None}
    return lambda name: by_name.get(name.lower())


def _first_rows(query: exp.Expr, table_of: Callable[[str], TableDef | None], names: dict[str, str],
                types: dict, tag: str, first: int) -> tuple[exp.Expr, list[first_rows.FirstRows]]:
    """`query` with its keep-first deduplications on time reading views of their first rows (first_rows.py)."""
    return first_rows.lifted(query, table_of, lambda n: f"__{tag}_first{n}",
                             lambda rows: to_spark_sql(renamed(rows, names), types), first)


__all__ = ["plan_query", "resolve", "referenced_names", "renamed", "CHANGELOG"]
