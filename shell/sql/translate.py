"""Queries of our dialect to Spark SQL text.

Why it exists: the engine runs Spark SQL. A query parsed by our dialect is copied, its Flink
windows rewritten (windows.py), Flink functions mapped (functions.py), CAST types mapped
(types.py), casts of text made to read the text by Flink's rules (text_casts.py), temporal-join clauses dropped (`FOR SYSTEM_TIME AS OF`: Spark joins a stream with
the table's current state, which is what a processing-time lookup join means; an event-time
temporal join never reaches Spark SQL, the changelog planner builds it in its keyed stage), JSON_VALUE and
FLOOR/CEIL(ts TO unit) rewritten, and the result printed by sqlglot's Spark generator with every
identifier backquoted. An element `a[i]` is read with Flink's rules (an ARRAY counted from 1, NULL past its
ends; a MAP by its key), which needs the operand's type: a MAP<INT, ..> column of a view or a subquery, whose type
is not known here, is read with try_element_at (by key, or from 1; index 0 fails there).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from shell.errors import UnsupportedFeatureError
from shell.sql import nodes
from shell.catalog.model import Watermark
from shell.sql.census import Census
from shell.sql.operand_types import (
    INTEGRAL, ColumnTypes, base_type, column_type, integral_type, is_boolean, unnest_argument_type,
)
from shell.sql.functions import FUNCTION_MAP, SAME_IN_SPARK, any_null, call, map_function
from shell.sql.types import flink_type_to_spark, spark_type_node
from shell.sql.text_casts import text_cast
from shell.sql.unnest import generator
from shell.sql.user_calls import lateral_join, table_call
from shell.sql.windows import WindowTvf, find_window_tvfs, rewrite_windows

__all__ = [
    "FUNCTION_NAMES",
    "WindowTvf",
    "expression_to_spark",
    "watermark_delay",
    "find_window_tvfs",
    "flink_type_to_spark",
    "rewrite_windows",
    "to_spark_expression",
    "to_spark_sql",
]

# Every Flink function the translator knows (SHOW FUNCTIONS lists these).
FUNCTION_NAMES = frozenset(
    {*SAME_IN_SPARK, *FUNCTION_MAP, "COUNT", "SUM", "MIN", "MAX", "AVG", "ROW_NUMBER", "RANK",
     "DENSE_RANK", "COALESCE", "CAST", "TRY_CAST", "EXTRACT", "SUBSTRING", "TRIM", "POSITION",
     "CEIL", "FLOOR", "IF", "JSON_VALUE", "TUMBLE", "HOP", "SESSION", "CUMULATE"}
)
# SQL regular expressions (SIMILAR TO) are Java's but for % and _, and . ^ $ \\ being plain characters.
SIMILAR_TO_REGEX = {"%": ".*", "_": ".", ".": "\\.", "^": "\\^", "$": "\\$", "\\": "\\\\"}
TIME_UNITS = {"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"}


def to_spark_sql(
    query: exp.Expr, types: ColumnTypes | None = None, *, consume: bool = False, census: Census | None = None
) -> str:
    """Spark SQL text of a query (SELECT/UNION/WITH/VALUES) of our dialect.

    `types` gives the declared column types of the catalog tables the query reads, by the name its FROM
    clauses use; with them `INT / INT` and `CAST(boolean AS STRING)` keep Flink's meaning (operand_types.py).
    The query is copied first, unless `consume`: a caller whose tree is a copy of its own, used for nothing
    after, saves the copy (a copy costs about as much as parsing the query). `census` (census.py), of the
    tree as it is now, skips the rewrites of kinds of node it does not hold: windows, and the nodes mapped.
    """
    tree = query if consume else query.copy()
    if census is None or census.has(*_WINDOW_KINDS):
        tree, census = rewrite_windows(tree, types or {}), None  # may add any kind of node
    unnests = census is None or census.has(exp.Unnest)
    if census is None or census.has(*_MAPPED_KINDS):
        tree, census = _map_nodes(tree, types or {}), None
    else:
        for table in census.tables:  # the one thing _map_node would do
            if table.args.get("version") is not None:
                table.set("version", None)
    if unnests:  # after the rest, which reads the types of an UNNEST's columns (operand_types.py)
        tree, census = _unnests_as_generators(tree, types or {}), None
    return _generate(tree, census)


def to_spark_expression(expression: exp.Expr) -> str:
    """Spark SQL text of one expression (computed columns, watermarks, filters)."""
    return _generate(_map_nodes(expression.copy(), {}))


def expression_to_spark(expression: str | exp.Expr) -> str:
    """Spark SQL of one Flink expression, given as text (e.g. a computed column) or as a tree."""
    if isinstance(expression, str):
        from shell.sql.fragments import parse_expression

        expression = parse_expression(expression)
    return to_spark_expression(expression)


def watermark_delay(watermark: Watermark) -> str | None:
    """Spark's withWatermark delay ('5 seconds') for `ts - INTERVAL 'n' UNIT` or `ts`; else None."""
    from shell.sql.fragments import parse_expression
    from shell.sql.windows import interval_to_duration

    tree = parse_expression(watermark.expression)
    column = watermark.column.lower()
    if isinstance(tree, exp.Column) and tree.name.lower() == column and not tree.table:
        return "0 seconds"
    if (
        isinstance(tree, exp.Sub)
        and isinstance(tree.this, exp.Column)
        and tree.this.name.lower() == column
        and isinstance(tree.expression, exp.Interval)
    ):
        try:
            return interval_to_duration(tree.expression)
        except UnsupportedFeatureError:
            return None
    return None


def _generate(tree: exp.Expr, census: Census | None = None) -> str:
    # The tree is always this module's own copy: sqlglot need not copy it again before printing.
    if census is None or _SparkPrinter is None:
        return tree.sql(dialect="spark", identify=True, copy=False)
    printer = _SparkPrinter(dialect=_SPARK, identify=True)
    printer.census = census
    return printer.generate(tree, copy=False)


_SPARK = Dialect.get_or_raise("spark")


def _spark_printer() -> type | None:
    """sqlglot's Spark printer, told by a census (census.py) what the tree holds: it skips its preprocessing walks
    that could find nothing, for a nested WITH (moved to the top) and for `x = ANY(...)` (any_to_exists, a walk of
    each SELECT). None when sqlglot's printer cannot be subclassed here (a compiled sqlglot: then it prints as it
    is) or its SELECT handler is not the chain of steps it was (another sqlglot)."""
    from sqlglot import transforms

    base = _SPARK.generator_class
    full = base.TRANSFORMS.get(exp.Select)
    try:
        cells = dict(zip(full.__code__.co_freevars, (c.cell_contents for c in full.__closure__)))
    except (AttributeError, TypeError, ValueError):
        return None
    steps = cells.get("transforms")
    if not isinstance(steps, list) or cells.get("generator", 0) is not None or transforms.any_to_exists not in steps:
        return None
    without_any = transforms.preprocess([step for step in steps if step is not transforms.any_to_exists])

    def select_sql(self, expression: exp.Select) -> str:  # noqa: ANN001 - the printer
        return (full if self.census.has(exp.Any) else without_any)(self, expression)

    def move_ctes_to_top_level(self, expression: exp.Expr) -> exp.Expr:  # noqa: ANN001 - the printer
        return base._move_ctes_to_top_level(self, expression) if self.census.has(exp.With) else expression

    try:
        return type("SparkPrinter", (base,), {
            "census": None,
            "_move_ctes_to_top_level": move_ctes_to_top_level,
            "TRANSFORMS": {**base.TRANSFORMS, exp.Select: select_sql},
        })
    except TypeError:
        return None


_SparkPrinter = _spark_printer()


def _map_nodes(tree: exp.Expr, types: ColumnTypes) -> exp.Expr:
    """Map every node, children before parents, so a replacement sees mapped arguments."""
    nodes = list(tree.dfs())
    # the type each CAST was written with (its `to` is mapped to Spark's first, which drops TIMESTAMP's precision)
    written = {id(n): n.to.copy() for n in nodes if isinstance(n, exp.Cast) and isinstance(n.to, exp.DataType)}
    for node in reversed(nodes):
        mapped = text_cast(node, written[id(node)], types) if id(node) in written else None  # text_casts.py
        if mapped is None:
            mapped = _map_node(node, types)
        if mapped is not node:
            if node is tree:
                tree = mapped
            else:
                node.replace(mapped)
    return tree


def _unnests_as_generators(tree: exp.Expr, types: ColumnTypes) -> exp.Expr:
    """Each UNNEST as the Spark generator with Flink's meaning (unnest.py): joined laterally where it is joined,
    a table-valued call where it is the FROM."""
    found = [(node, unnest_argument_type(node, types)) for node in tree.find_all(exp.Unnest)]  # before any is
    for node, declared in found:  # replaced: the type of a later one's argument is read through the FROM
        join = node.parent if isinstance(node.parent, exp.Join) else None
        outer = join is not None and (join.side or "").upper() == "LEFT"
        if join is not None:
            on = join.args.get("on")
            always = on is None or isinstance(on, exp.Boolean) and on.this is True
            side = (join.side or "").upper()
            if side in ("RIGHT", "FULL") or (outer and not always):
                raise UnsupportedFeatureError(f"{side} JOIN UNNEST(..){'' if always else ' on a condition'}",
                                              hint="use CROSS JOIN UNNEST(..), or LEFT JOIN UNNEST(..) .. ON TRUE "
                                                   "and filter the rows in WHERE")
        lateral = generator(node, declared, outer)
        if join is not None:
            if always:  # a comma join: the generator's outer form keeps a LEFT JOIN's rows
                for part in ("side", "kind", "on"):
                    join.set(part, None)
            node.replace(lateral)
        elif isinstance(node.parent, exp.From):
            node.replace(exp.Table(this=lateral.this, alias=lateral.args["alias"]))
        else:
            raise UnsupportedFeatureError(f"UNNEST outside FROM and JOIN: {node.sql()[:60]}",
                                          hint="write FROM t CROSS JOIN UNNEST(t.a) AS u (x)")
    return tree


def _outermost_type(node: exp.DataType) -> bool:
    """Whether a type is not part of another type (`ARRAY<...>`, or a field of `ROW<...>`): the outermost one
    is mapped as a whole, once (mapping each nested one too made ROW<a ROW<b ...>> quadratic)."""
    parent = node.parent
    while isinstance(parent, (exp.ColumnDef, exp.DataTypeParam)):
        parent = parent.parent
    return not isinstance(parent, exp.DataType)


# The kinds of node rewrite_windows starts from (a window table function, GROUP BY TUMBLE(...), window(...)), and
# those _map_node may change but tables: a tree without any is left as it is (but for its tables' versions).
_WINDOW_KINDS = (exp.TableFromRows, exp.Anonymous)
_MAPPED_KINDS = (
    exp.Div, exp.Avg, exp.Cast, exp.SimilarTo, exp.Count, exp.Anonymous, exp.DataType, exp.Bracket,
    exp.Localtimestamp, nodes.JsonValue, exp.Floor, exp.Ceil, exp.TableFromRows, nodes.TableArg, nodes.Descriptor,
)


def _map_node(node: exp.Expr, types: ColumnTypes) -> exp.Expr:
    if isinstance(node, exp.Div):
        return _division(node, types)
    if isinstance(node, exp.Avg) and not isinstance(node.this, exp.Distinct):
        return _average(node, types)
    if isinstance(node, (exp.Sum, exp.Avg)) and isinstance(node.this, exp.Distinct):
        return _distinct_sum_or_average(node, types)
    if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.TEXT_TYPES) and is_boolean(node.this, types):
        return call("upper", node.copy())  # Flink spells booleans TRUE/FALSE, Spark true/false
    if isinstance(node, exp.SimilarTo):
        return _similar_to(node)
    if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
        return _count_distinct(node.this)
    if isinstance(node, exp.Anonymous):
        return map_function(node.name, list(node.expressions)) or node
    if isinstance(node, exp.DataType) and _outermost_type(node):
        return spark_type_node(node)
    if isinstance(node, exp.Table) and node.args.get("version") is not None:
        node.set("version", None)
        return node
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1:
        return _element(node, types)
    if isinstance(node, exp.Localtimestamp):
        return call("localtimestamp")
    if isinstance(node, nodes.JsonValue):
        return _json_value(node)
    if isinstance(node, (exp.Floor, exp.Ceil)) and node.args.get("to") is not None:
        return _floor_ceil(node)
    if isinstance(node, exp.TableFromRows):
        user = table_call(node)  # LATERAL TABLE(f(...)) of a user table function
        if user is not None:
            return user
        name = node.this.name if node.this is not None else "?"
        raise UnsupportedFeatureError(f"table function {name} in Spark SQL")
    if isinstance(node, exp.Join) and isinstance(node.this, exp.Lateral):
        return lateral_join(node)
    if isinstance(node, (nodes.TableArg, nodes.Descriptor)):
        raise UnsupportedFeatureError("TABLE/DESCRIPTOR arguments outside a window table function")
    return node


def _element(node: exp.Bracket, types: ColumnTypes) -> exp.Expr:
    """`a[i]` with Flink's meaning: a MAP's value at key i as it is; an ARRAY's i-th element counted from 1, NULL
    past either end (Spark's a[i] counts from 0 and fails past the end). An operand of unknown type (a column of a
    view or a subquery, a function's result) is read with try_element_at, which reads either by those rules but
    fails at index 0 (Flink: NULL)."""
    subject, index = node.this, node.expressions[0]
    if isinstance(subject, (exp.VarMap, exp.Map)) or (isinstance(index, exp.Literal) and index.is_string):
        return node
    if isinstance(subject, (exp.Cast, exp.TryCast)):
        kind = subject.to.this
    elif isinstance(subject, exp.Array):
        kind = exp.DType.ARRAY
    elif isinstance(subject, exp.Column):
        kind = {"MAP": exp.DType.MAP, "ARRAY": exp.DType.ARRAY}.get(base_type(column_type(subject, types)) or "")
    else:
        kind = None
    if kind == exp.DType.MAP:
        return node
    if kind != exp.DType.ARRAY:
        return call("try_element_at", subject, index)
    if isinstance(index, exp.Literal) and index.is_int:
        position: exp.Expr = exp.Literal.number(int(index.name) - 1)
    else:
        position = exp.Sub(this=exp.Paren(this=index), expression=exp.Literal.number(1))
    return call("get", subject, position)


def _json_value(node: nodes.JsonValue) -> exp.Expr:
    value: exp.Expr = call("get_json_object", node.this, node.args["path"])
    for behaviour in node.args.get("behaviours") or []:
        if behaviour.this == "DEFAULT" and behaviour.args["on"] == "EMPTY":
            value = exp.Coalesce(this=value, expressions=[behaviour.expression])
    returning = node.args.get("returning")
    if returning is not None:
        value = exp.Cast(this=value, to=returning)
    return value


def _floor_ceil(node: exp.Floor | exp.Ceil) -> exp.Expr:
    unit = node.args["to"].name.upper()
    if unit not in TIME_UNITS:
        raise UnsupportedFeatureError(f"{node.key.upper()}(... TO {unit})")
    truncated = call("date_trunc", exp.Literal.string(unit), node.this)
    if isinstance(node, exp.Floor):
        return truncated
    bumped = exp.Add(
        this=truncated.copy(),
        expression=exp.Interval(this=exp.Literal.string("1"), unit=exp.var(unit)),
    )
    return exp.If(this=exp.EQ(this=truncated, expression=node.this.copy()), true=node.this.copy(), false=bumped)


def _division(node: exp.Div, types: ColumnTypes) -> exp.Expr:
    """Flink divides integers as integers (truncating, typed as the wider operand); Spark always gives DOUBLE."""
    left, right = integral_type(node.this, types), integral_type(node.expression, types)
    if left is None or right is None:
        return node
    wider = max(left, right, key=INTEGRAL.index)
    return exp.Cast(this=exp.IntDiv(this=node.this, expression=node.expression), to=exp.DataType.build(wider))


def _average(node: exp.Avg, types: ColumnTypes) -> exp.Expr:
    """Flink's AVG of integers is an integer of the argument's type (the sum divided as integers); Spark's a DOUBLE."""
    integral = integral_type(node.this, types)
    if integral is None:
        return node
    return exp.Cast(this=node.copy(), to=exp.DataType.build(integral))


def _similar_to(node: exp.SimilarTo) -> exp.Expr:
    """`s SIMILAR TO 'pattern'`: the SQL regular expression, anchored, as a Java one for Spark's RLIKE."""
    pattern = node.expression
    if not (isinstance(pattern, exp.Literal) and pattern.is_string) or node.args.get("escape") is not None:
        raise UnsupportedFeatureError("SIMILAR TO with a pattern that is not a string literal or with ESCAPE")
    return exp.RegexpLike(this=node.this, expression=exp.Literal.string(f"(?s)^(?:{similar_to_regex(pattern.name)})$"))


def similar_to_regex(pattern: str) -> str:
    """Java regex of a SIMILAR TO pattern: % and _ are wildcards outside [...], . ^ $ \\ plain characters."""
    out, in_class = [], False
    for ch in pattern:
        if in_class:
            out.append("\\\\" if ch == "\\" else ch)
            in_class = ch != "]"
        else:
            out.append(SIMILAR_TO_REGEX.get(ch, ch))
            in_class = ch == "["
    return "".join(out)


def _count_distinct(distinct: exp.Distinct) -> exp.Expr:
    """COUNT(DISTINCT a[, b]) as size(collect_set(...)): Spark's streaming aggregation refuses distinct aggregates,
    and a set of the values (NULLs left out, as COUNT does) is what Flink keeps for them too."""
    values = [e.copy() for e in distinct.expressions]
    if len(values) == 1:
        value = values[0]
    else:
        value = exp.If(this=any_null(values), true=exp.null(), false=call("struct", *values))
    return call("size", call("collect_set", value))


def _distinct_sum_or_average(node: exp.Sum | exp.Avg, types: ColumnTypes) -> exp.Expr:
    """SUM(DISTINCT x) and AVG(DISTINCT x) over the set of x's values (collect_set, NULLs left out), as
    `_count_distinct` does for COUNT: Spark's streaming aggregation refuses distinct aggregates. The set is summed
    in the type Spark's SUM gives (BIGINT for integers, DOUBLE, DECIMAL(p + 10, s)); an integer AVG is truncated
    to the argument's type, as Flink's. The argument's type must be known (a column of a catalog table, or a CAST)."""
    values = node.this.expressions
    name = "SUM" if isinstance(node, exp.Sum) else "AVG"
    if len(values) != 1:
        raise UnsupportedFeatureError(f"{name}(DISTINCT ...) of more than one value")
    value = values[0]
    integral = integral_type(value, types)
    declared = value.to.sql().upper() if isinstance(value, (exp.Cast, exp.TryCast)) else \
        column_type(value, types) if isinstance(value, exp.Column) else None
    base = integral or base_type(declared)
    if base in INTEGRAL:
        total_type = "BIGINT"
    elif base in ("FLOAT", "REAL", "DOUBLE"):
        total_type = "DOUBLE"
    elif base in ("DECIMAL", "DEC", "NUMERIC"):
        precision, scale = _decimal_digits(declared)
        total_type = f"DECIMAL({min(38, precision + 10)}, {scale})"
    else:
        raise UnsupportedFeatureError(
            f"{name}(DISTINCT ...) of a value whose type is not known here",
            hint=f"cast it to the type to add in: {name}(DISTINCT CAST(x AS BIGINT)) or DECIMAL(p, s)",
        )
    distinct = call("collect_set", value.copy())
    acc, item = exp.to_identifier("__acc"), exp.to_identifier("__v")
    step = exp.Add(this=exp.Coalesce(this=exp.column(acc), expressions=[exp.Literal.number(0)]), expression=exp.column(item))
    merge = exp.Lambda(this=exp.Cast(this=step, to=exp.DataType.build(total_type)), expressions=[acc, item])
    total = call("aggregate", distinct, exp.Cast(this=exp.null(), to=exp.DataType.build(total_type)), merge)
    if isinstance(node, exp.Sum):
        return total
    count = call("size", distinct.copy())
    if base in INTEGRAL:  # Flink: the sum divided as integers, in the argument's type
        return exp.Cast(this=exp.IntDiv(this=total, expression=exp.Nullif(this=count, expression=exp.Literal.number(0))),
                        to=exp.DataType.build(integral or base))
    mean = exp.Div(this=total, expression=exp.Nullif(this=count, expression=exp.Literal.number(0)))
    if base in ("FLOAT", "REAL", "DOUBLE"):
        return mean
    precision, scale = _decimal_digits(declared)  # Spark's AVG of a DECIMAL(p, s): DECIMAL(p + 4, s + 4)
    return exp.Cast(this=mean, to=exp.DataType.build(f"DECIMAL({min(38, precision + 4)}, {min(38, scale + 4)})"))


def _decimal_digits(declared: str | None) -> tuple[int, int]:
    """(precision, scale) of a DECIMAL type's text; Flink's DECIMAL alone is DECIMAL(10, 0)."""
    inside = (declared or "").partition("(")[2].partition(")")[0]
    parts = [p.strip() for p in inside.split(",") if p.strip()]
    return (int(parts[0]) if parts else 10), (int(parts[1]) if len(parts) > 1 else 0)
