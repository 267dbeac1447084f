"""Flink's UNNEST as Spark's generator functions, with Flink's meaning.

Why it exists: sqlglot's Spark generator writes `CROSS JOIN UNNEST(a) AS t (x)` as `LATERAL VIEW EXPLODE(a)`, which
differs from Flink in three ways, each silently: `WITH ORDINALITY` numbers the elements from 1 in Flink and from 0
in POSEXPLODE; `LEFT JOIN UNNEST(a) ... ON TRUE` keeps a row whose array is empty or NULL, padded with NULLs, which
a LATERAL VIEW drops; and an array of ROWs unnests to one column per field, which EXPLODE gives as one column. A
LATERAL VIEW also comes after every join of its FROM, so a join on an unnested column could not follow it. Spark
runs a generator as a lateral join in place (`, LATERAL explode(a) AS t (x)`); this module writes that:

    UNNEST(a) AS t (x)                       -> LATERAL explode(a) AS t (x)        (explode_outer for a LEFT JOIN)
    UNNEST(rows) AS t (p, q)                 -> LATERAL inline(rows) AS t (p, q)   (an ARRAY<ROW<..>>)
    UNNEST(m) AS t (k, v)                    -> LATERAL explode(m) AS t (k, v)     (a MAP)
    UNNEST(a) WITH ORDINALITY AS t (x, n)    -> LATERAL inline(transform(a, (e, i) -> struct(e, i + 1))) AS t (x, n)

An element's kind comes from the argument's declared type when it is a catalog table's column, else from the
expression (an ARRAY[...] or MAP[...] constructor) and the number of names given (one: a scalar; more: the fields of
a ROW). What cannot be known this way is refused with what to write instead.
"""

from __future__ import annotations

from sqlglot import exp

from shell.errors import UnsupportedFeatureError

SCALAR, ROW, MAP = "scalar", "row", "map"
ELEMENT, INDEX = "__element", "__index"  # the lambda's parameters (not a column of any table)


def element_kind(declared: exp.DataType | None, argument: exp.Expr, names: int) -> tuple[str, list[str]]:
    """(SCALAR | ROW | MAP, the ROW's field names if known) of what UNNEST(argument) gives one row per; `names`:
    how many column names the alias gives, not counting the ordinality."""
    if declared is not None:
        if declared.this == exp.DType.MAP:
            return MAP, []
        if declared.this == exp.DType.ARRAY and declared.expressions:
            element = declared.expressions[0]
            if isinstance(element, exp.DataType) and element.this == exp.DType.STRUCT:
                return ROW, [f.name for f in element.expressions]
            return SCALAR, []
        raise UnsupportedFeatureError(f"UNNEST of {argument.sql()}, which is not an ARRAY or a MAP",
                                      hint="UNNEST takes an ARRAY or a MAP column")
    if isinstance(argument, (exp.Map, exp.VarMap)):
        return MAP, []
    return (SCALAR, []) if names <= 1 else (ROW, [])


def generator(unnest: exp.Unnest, declared: exp.DataType | None, outer: bool) -> exp.Lateral:
    """The lateral generator call, with its alias, that gives the rows of `unnest` (outer: a row of NULLs for an
    empty or NULL argument, as LEFT JOIN UNNEST .. ON TRUE keeps its row)."""
    arguments = unnest.expressions
    if len(arguments) != 1:
        raise UnsupportedFeatureError(f"UNNEST of {len(arguments)} arguments",
                                      hint="UNNEST one ARRAY or MAP at a time: CROSS JOIN UNNEST(a) AS s (x) CROSS JOIN "
                                           "UNNEST(b) AS t (y)")
    argument = arguments[0]
    alias = unnest.args.get("alias")
    ordinality = unnest.args.get("offset")
    names = list(alias.columns) if alias is not None else []
    kind, fields = element_kind(declared, argument, len(names))
    suffix = "_outer" if outer else ""
    if not ordinality:
        call = exp.Anonymous(this=("inline" if kind == ROW else "explode") + suffix, expressions=[argument])
    else:
        call = exp.Anonymous(this="inline" + suffix, expressions=[_numbered(argument, kind, fields)])
        names.append(ordinality if isinstance(ordinality, exp.Identifier) else exp.to_identifier("ordinality"))
    table_alias = exp.TableAlias(this=alias.this.copy() if alias is not None and alias.this else
                                 exp.to_identifier("__unnest"), columns=[n.copy() for n in names])  # fmt: skip
    return exp.Lateral(this=call, alias=table_alias)


def _numbered(argument: exp.Expr, kind: str, fields: list[str]) -> exp.Expr:
    """transform(argument, (e, i) -> struct(<e's columns>, i + 1)): each element with its 1-based position."""
    element = exp.column(ELEMENT)
    if kind == MAP:
        argument = exp.Anonymous(this="map_entries", expressions=[argument])
        columns: list[exp.Expr] = [exp.Dot(this=element.copy(), expression=exp.to_identifier("key")),
                                   exp.Dot(this=element.copy(), expression=exp.to_identifier("value"))]
    elif kind == ROW:
        if not fields:
            raise UnsupportedFeatureError(
                f"UNNEST(..) WITH ORDINALITY of {argument.sql()}, an array of ROWs whose fields are not known here",
                hint="unnest a table's ARRAY<ROW<..>> column, or the array WITHOUT ORDINALITY")
        columns = [exp.Dot(this=element.copy(), expression=exp.to_identifier(f, quoted=True)) for f in fields]
    else:
        columns = [element]
    position = exp.Add(this=exp.column(INDEX), expression=exp.Literal.number(1))
    body = exp.Anonymous(this="struct", expressions=[*columns, position])
    numbered = exp.Lambda(this=body, expressions=[exp.to_identifier(ELEMENT), exp.to_identifier(INDEX)])
    return exp.Anonymous(this="transform", expressions=[argument, numbered])


def element_types(declared: exp.DataType, ordinality: bool) -> list[exp.DataType] | None:
    """The types of the columns UNNEST of a value of type `declared` gives (its ordinality INT last), or None."""
    if declared.this == exp.DType.MAP and len(declared.expressions) == 2:
        types = list(declared.expressions)
    elif declared.this == exp.DType.ARRAY and declared.expressions:
        element = declared.expressions[0]
        if element.this == exp.DType.STRUCT:
            types = [f.args.get("kind") for f in element.expressions]
        else:
            types = [element]
    else:
        return None
    return [*types, exp.DataType.build("INT")] if ordinality else types
