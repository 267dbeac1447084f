"""Pieces of SQL in and out of the tree: object names, data types and single expressions.

Why it exists: the catalog keeps names, types and expressions as text; DDL printing, SHOW
CREATE TABLE and the connectors need to turn that text back into tree nodes (and nodes into
normalized text) with our dialect, without going through whole statements.
"""

from __future__ import annotations

from sqlglot import exp

from shell.errors import SqlSyntaxError
from shell.sql.dialect import DIALECT
from shell.sql.grammar_errors import GrammarError, UnsupportedSyntax
from shell.sql.positions import forget_positions


def object_name(table: exp.Expr) -> str:
    """`cat.db.t` of an exp.Table (identifiers unquoted, spelling kept; a part holding a dot, as Postgres'
    `schema.table` in a JDBC catalog, is backquoted so the name splits back into the same parts)."""
    from shell.catalog.names import dotted

    if isinstance(table, exp.Table):
        return dotted([part.name for part in table.parts])
    return table.name


def table_node(name: str) -> exp.Table:
    """exp.Table for a dotted name; parts that need it are backquoted when printed."""
    from shell.catalog.names import name_parts

    parts = [identifier(p) for p in name_parts(name)]
    if len(parts) == 1:
        return exp.Table(this=parts[0])
    if len(parts) == 2:
        return exp.Table(this=parts[1], db=parts[0])
    return exp.Table(this=parts[-1], db=parts[-2], catalog=parts[-3])


def identifier(name: str) -> exp.Identifier:
    """Identifier for a catalog name, backquoted when it is a reserved word or not a plain name."""
    from shell.sql.printer import RESERVED_WORDS

    quoted = not exp.SAFE_IDENTIFIER_RE.match(name) or name.lower() in RESERVED_WORDS
    return exp.Identifier(this=name, quoted=quoted)


def to_sql(node: exp.Expr, pretty: bool = False) -> str:
    """Flink SQL text of a node (one line unless `pretty`).

    Our generator changes a tree only to lift nested WITH clauses to the top, so a tree without one is printed as
    it is, without the deep copy sqlglot makes by default (a tenth of the time of parsing a script)."""
    return DIALECT.generate(node, copy=node.find(exp.With) is not None, pretty=pretty)


def _parse_fragment(text: str, what: str, method: str) -> exp.Expr:
    tokens = DIALECT.tokenize(text)
    parser = DIALECT.parser()
    parser.reset()
    parser.sql = text
    parser._chunks = [tokens]
    parser._advance_chunk()
    try:
        node = getattr(parser, method)()
    except (GrammarError, UnsupportedSyntax) as error:
        raise SqlSyntaxError(f"invalid {what} '{text}': {error}") from None
    if node is None or parser._curr:
        raise SqlSyntaxError(f"invalid {what} '{text}'")
    # Positions in `text` (a catalog's expression or type) are no positions in the statement being run.
    return forget_positions(node)


def parse_type(text: str) -> exp.DataType:
    """Parse a Flink type ('TIMESTAMP(3)', 'ROW<a INT>', ...) into exp.DataType."""
    node = _parse_fragment(text, "data type", "_parse_flink_type")
    assert isinstance(node, exp.DataType)
    return node


def parse_expression(text: str) -> exp.Expr:
    """Parse one Flink SQL expression (no alias)."""
    return _parse_fragment(text, "expression", "_parse_disjunction")


def normalize_type(text: str) -> str:
    """Normalized Flink spelling of a type text ('timestamp(3)' -> 'TIMESTAMP(3)')."""
    return to_sql(parse_type(text))

