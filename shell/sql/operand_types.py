"""Just enough typing to translate the Flink operators whose meaning depends on their operands' types.

Why it exists: Spark and Flink agree on most expressions whatever the types, but not on two common ones:
`INT / INT` is an integer division in Flink and a DOUBLE in Spark, and `CAST(boolean AS STRING)` is
'TRUE'/'FALSE' in Flink and 'true'/'false' in Spark. The translator has no type checker, so this module
answers the one question it needs ("is this operand surely integral / surely boolean?") from literals,
operators and the declared types of catalog table columns. It only says yes when it is sure: a column of a
view, a CTE or a subquery is unknown, and the translation then keeps Spark's own meaning.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from shell.catalog.model import TableDef

# Width order of Flink's exact integer types; the wider operand decides the result type.
INTEGRAL = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_TYPE_NAMES = {exp.DataType.Type.TINYINT: "TINYINT", exp.DataType.Type.SMALLINT: "SMALLINT",
               exp.DataType.Type.INT: "INT", exp.DataType.Type.BIGINT: "BIGINT"}
_INTEGRAL_FUNCTIONS = {"ABS", "MOD", "SIGN"}  # integral arguments give an integral result

# relation (the name a FROM clause reads, lower case) -> column (lower case) -> declared Flink type
ColumnTypes = dict[str, dict[str, str]]


def declared_types(relations: Iterable[tuple[str, TableDef]]) -> ColumnTypes:
    """The declared column types of catalog tables, by the name a query's FROM reads each one as."""
    return {
        name.lower(): {c.name.lower(): c.data_type for c in table.columns if c.data_type}
        for name, table in relations
    }


def base_type(declared: str | None) -> str | None:
    """'INT NOT NULL' -> 'INT', 'DECIMAL(10, 2)' -> 'DECIMAL', 'MAP<INT, STRING>' -> 'MAP', None -> None."""
    if not declared:
        return None
    word = declared.strip().split("(")[0].split("<")[0].split()[0].upper()
    return "INT" if word == "INTEGER" else word


def integral_type(node: exp.Expr, types: ColumnTypes) -> str | None:
    """The Flink integer type of an expression when it is surely one (TINYINT..BIGINT), else None."""
    if isinstance(node, exp.Paren):
        return integral_type(node.this, types)
    if isinstance(node, exp.Literal) and not node.is_string:
        text = node.name
        if not text.isdigit() or int(text) > 2**63 - 1:
            return None  # a decimal or an exact number too large for BIGINT (Flink makes it a DECIMAL)
        return "INT" if int(text) <= 2**31 - 1 else "BIGINT"
    if isinstance(node, exp.Neg):
        return integral_type(node.this, types)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.IntDiv)):
        return _wider(integral_type(node.this, types), integral_type(node.expression, types))
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _TYPE_NAMES.get(node.to.this)
    if isinstance(node, exp.Count):
        return "BIGINT"
    if isinstance(node, (exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Nullif)):  # Flink keeps an integer argument's type
        return integral_type(node.this, types)
    if isinstance(node, exp.If):
        return _wider(integral_type(node.args["true"], types), integral_type(node.args.get("false"), types))
    if isinstance(node, exp.Anonymous) and node.name.upper() in _INTEGRAL_FUNCTIONS:
        widths = [integral_type(a, types) for a in node.expressions]
        return _wider(*widths) if widths else None
    if isinstance(node, exp.Abs):
        return integral_type(node.this, types)
    if isinstance(node, exp.Column):
        declared = base_type(column_type(node, types))
        return declared if declared in INTEGRAL else None
    return None


def is_boolean(node: exp.Expr, types: ColumnTypes) -> bool:
    """True when an expression is surely a BOOLEAN (a comparison, a connective, a boolean literal or column)."""
    if isinstance(node, exp.Paren):
        return is_boolean(node.this, types)
    if isinstance(node, (exp.Predicate, exp.Connector, exp.Not, exp.Boolean)):
        return True
    if isinstance(node, exp.Column):
        return base_type(column_type(node, types)) == "BOOLEAN"
    return False


def column_type(column: exp.Column, types: ColumnTypes) -> str | None:
    """The declared type of a column when the SELECT it belongs to reads it from a known catalog table."""
    select = column.find_ancestor(exp.Select)
    if select is None:
        return None
    relations = _relations(select, types)
    if relations is None:
        return None
    name = column.name.lower()
    qualifier = column.table.lower()
    if qualifier:
        columns = relations.get(qualifier)
        return columns.get(name) if columns is not None else None
    found = [columns[name] for columns in relations.values() if name in columns]
    return found[0] if len(found) == 1 else None


def _relations(select: exp.Select, types: ColumnTypes) -> dict[str, dict[str, str]] | None:
    """alias -> columns of every relation the SELECT reads, or None when one of them is not a known table."""
    sources = []
    if select.args.get("from_") is not None:
        sources.append(select.args["from_"].this)
    sources.extend(join.this for join in select.args.get("joins") or [])
    if not sources:
        return None
    relations: dict[str, dict[str, str]] = {}
    for source in sources:
        if isinstance(source, exp.Unnest):
            unnested = _unnest_columns(source, relations)
            if unnested is None:
                return None
            relations[source.alias.lower()] = unnested
            continue
        if not isinstance(source, exp.Table):
            return None
        columns = types.get(source.name.lower())
        if columns is None:
            return None
        relations[source.alias_or_name.lower()] = columns
    return relations


def unnest_argument_type(unnest: exp.Unnest, types: ColumnTypes) -> exp.DataType | None:
    """The declared type of UNNEST's one argument when it is a column of a known catalog table, else None."""
    arguments = unnest.expressions
    select = unnest.find_ancestor(exp.Select)
    if len(arguments) != 1 or not isinstance(arguments[0], exp.Column) or select is None:
        return None
    declared = column_type(arguments[0], types)
    if not declared:
        return None
    from shell.sql.fragments import parse_type

    return parse_type(declared)


def _unnest_columns(unnest: exp.Unnest, earlier: dict[str, dict[str, str]]) -> dict[str, str] | None:
    """The columns of an UNNEST's alias with their types where its argument, a column of a relation before it, has a
    declared type (an unknown type is ''); None when its columns have no names."""
    alias = unnest.args.get("alias")
    names = [c.name.lower() for c in alias.columns] if alias is not None else []
    ordinality = unnest.args.get("offset")
    if isinstance(ordinality, exp.Identifier):
        names.append(ordinality.name.lower())
    if not names:
        return None
    found: list[str] = []
    arguments = unnest.expressions
    if len(arguments) == 1 and isinstance(arguments[0], exp.Column):
        column = arguments[0]
        name, qualifier = column.name.lower(), column.table.lower()
        found = [cols[name] for alias_, cols in earlier.items() if name in cols and (not qualifier or alias_ == qualifier)]
    types: list[str] = [""] * len(names)
    if len(found) == 1 and found[0]:
        from shell.sql.fragments import parse_type
        from shell.sql.unnest import element_types

        element = element_types(parse_type(found[0]), bool(ordinality))
        if element is not None and len(element) == len(names):
            types = [t.sql() if t is not None else "" for t in element]
    return dict(zip(names, types))


def _wider(*widths: str | None) -> str | None:
    if not widths or any(w is None for w in widths):
        return None
    return max(widths, key=INTEGRAL.index)

