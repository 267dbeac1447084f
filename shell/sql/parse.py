"""Text to Statement objects: split, parse each statement, convert trees to dataclasses.

Why it exists: it is the front end's one door. `parse_script` and `parse_statement` raise only
StreamshellError subclasses (never sqlglot's or Python's own errors), positioned in the whole
source text, with a caret-ready source line and a hint where one helps.

Positions inside trees: the offsets of the tokens a statement is parsed from are relative to its
text and their line/column are the whole source's, so a node's `meta["start"]`/`meta["end"]` are
offsets into `statement.source.text` (`position_of` turns one into a whole-source line and column)
and `meta["line"]`/`meta["col"]` are already whole-source (sqlglot puts them on identifiers and
literals; positions.py reads a name's position from them, so the planner can point at a name).
Trees parsed from other texts (a view's stored query, `parse_query`) carry no positions.

Limits (limits.py): a statement longer than MAX_STATEMENT_CHARS, nested deeper than MAX_NESTING
(counted on its tokens, before sqlglot recurses), of more than MAX_STATEMENT_TOKENS tokens or whose
tree is deeper than MAX_TREE_DEPTH is refused with an InputLimitError positioned where the limit is
crossed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token

from shell.errors import InputLimitError, SqlSyntaxError, StreamshellError, UnsupportedFeatureError
from shell.sql import limits, nodes
from shell.sql import statements as st
from shell.sql.ddl import schema_change, table_def_from_create
from shell.sql.dialect import DIALECT
from shell.sql.fragments import object_name, to_sql
from shell.sql.grammar import StreamshellParser
from shell.sql.grammar_errors import GrammarError, UnsupportedSyntax
from shell.sql.positions import LineIndex, Position, forget_positions
from shell.sql.split import Chunk, SourceStatement, Unterminated, gc_paused, split_chunks, tokenize

# Anything within the limits must parse, plan and print without meeting Python's recursion limit.
limits.ensure_recursion_limit()

# A script longer than this is parsed as a burst whose trees go straight to the collector's oldest generation
# (split.gc_paused(keep=True)): a REPL line is not, so its trees, once run, are freed by the young collections.
KEPT_SCRIPT_CHARS = 100_000


def parse_script(source: str) -> list[st.Statement]:
    """Every statement of `source`, parsed; the first faulty one raises (whole-source position)."""
    statements = []
    # Trees are many small objects (see split.py); those of a large script are kept while it runs.
    with gc_paused(keep=len(source) > KEPT_SCRIPT_CHARS):
        for chunk in split_chunks(source):
            try:
                statements.append(_parse_chunk(chunk))
            except StreamshellError as error:
                raise error.with_source(source) from None
    return statements


def parse_statement(stmt: SourceStatement) -> st.Statement:
    """Parse one statement (its text is tokenized again)."""
    return _parse_chunk(Chunk(stmt, None))


def parse_query(text: str) -> exp.Expr:
    """The query tree of a query text (a stored view's query_sql, for instance)."""
    statements = parse_script(text)
    if len(statements) != 1 or not isinstance(statements[0], st.Select):
        raise SqlSyntaxError(f"expected one query, got: {text[:60]}")
    # Its positions are in `text`, not in the statement being run: an error must not point there.
    return forget_positions(statements[0].query)


def position_of(stmt: SourceStatement, offset: int) -> Position:
    """Whole-source position of an offset into `stmt.text` (the first line's text is padded)."""
    pos = LineIndex(stmt.text).locate(offset)
    if pos.line == 1:
        return Position(stmt.line, pos.col + stmt.col - 1, " " * (stmt.col - 1) + pos.line_text)
    return Position(stmt.line + pos.line - 1, pos.col, pos.line_text)


def error_at(
    stmt: SourceStatement,
    offset: int,
    message: str,
    *,
    cls: type[StreamshellError] = SqlSyntaxError,
    length: int = 1,
    hint: str | None = None,
) -> StreamshellError:
    """An error of class `cls` pointing at `offset` in `stmt.text`."""
    pos = position_of(stmt, offset)
    return cls(message, pos.line, pos.col, hint=hint, source_line=pos.line_text, length=length)


def _parse_chunk(chunk: Chunk) -> st.Statement:
    stmt = chunk.statement
    tokens = chunk.tokens
    problem = chunk.problem
    if tokens is None:
        tokenized = tokenize(stmt.text)
        if tokenized.problem is not None:
            raise _unterminated(stmt, tokenized.problem, tokenized.problem.offset)
        tokens = tokenized.tokens
        _make_lines_absolute(tokens, stmt)
    else:
        _make_relative(tokens, stmt)
    if problem is not None:
        raise _unterminated(stmt, problem, problem.offset - stmt.start)
    _check_limits(stmt, tokens)
    parser = _parser()
    try:
        tree = parser.parse_tokens(tokens, stmt.text)
        if len(tokens) * 4 > limits.MAX_TREE_DEPTH:  # a tree is at most about 4 levels per token deep
            _check_tree_depth(stmt, tree)
        return _to_statement(tree, stmt)
    # Each clause names its exception apart: compiled (mypyc), one name is one variable of one type.
    except GrammarError as fault:
        raise _positioned(stmt, fault.token, fault.message, SqlSyntaxError, fault.hint) from None
    except UnsupportedSyntax as unsupported:
        message = f"{unsupported.feature} is not supported"
        raise _positioned(stmt, unsupported.token, message, UnsupportedFeatureError, unsupported.hint) from None
    except StreamshellError:
        raise
    except RecursionError:
        # The limits are meant to keep this from happening; if a shape slips through, say where the parser was.
        where = parser._curr or parser._prev
        raise _positioned(stmt, where, "statement nested too deeply to parse", InputLimitError,
                          limits.NESTING_HINT) from None
    except (SqlglotError, ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        # A sqlglot corner we did not anticipate: still a positioned, one-line error.
        raise error_at(stmt, 0, f"could not parse this statement ({type(error).__name__}: {error})") from None


def _check_limits(stmt: SourceStatement, tokens: list[Token]) -> None:
    """The statement's size, nesting and number of tokens (limits.py), before sqlglot reads it."""
    if len(stmt.text) > limits.MAX_STATEMENT_CHARS:
        raise error_at(stmt, limits.MAX_STATEMENT_CHARS, limits.size_message(len(stmt.text)),
                       cls=InputLimitError, hint=limits.SIZE_HINT)
    deepest = limits.nesting_fault(tokens)
    if deepest is not None:
        raise _positioned(stmt, deepest, limits.nesting_message(), InputLimitError, limits.NESTING_HINT)
    if len(tokens) > limits.MAX_STATEMENT_TOKENS:
        raise _positioned(stmt, tokens[limits.MAX_STATEMENT_TOKENS], limits.tokens_message(len(tokens)),
                          InputLimitError, limits.TOKENS_HINT)


def _check_tree_depth(stmt: SourceStatement, tree: exp.Expr) -> None:
    node = limits.tree_depth_fault(tree)
    if node is None:
        return
    # Point at the operand after the operator that crossed the limit (nodes of operators have no position).
    start = limits.first_position(node.expression if isinstance(node, exp.Binary) else node)
    if start is None:
        start = limits.first_position(node)
    raise error_at(stmt, start or 0, limits.tree_message(), cls=InputLimitError, hint=limits.TREE_HINT)


_PER_THREAD = threading.local()


def _parser() -> StreamshellParser:
    """This thread's parser: one per thread, reused (parse_tokens resets it), not one per statement."""
    parser = getattr(_PER_THREAD, "parser", None)
    if parser is None:
        parser = _PER_THREAD.parser = cast(StreamshellParser, DIALECT.parser())
    return parser


def _make_relative(tokens: list[Token], stmt: SourceStatement) -> None:
    """Shift whole-source token offsets so they are relative to the statement text (once); their line and
    column stay the whole source's (see the module docstring)."""
    if not tokens or tokens[0].start != stmt.start:
        return
    base = stmt.start
    if not base:
        return
    for token in tokens:
        token.start -= base
        token.end -= base


def _make_lines_absolute(tokens: list[Token], stmt: SourceStatement) -> None:
    """Tokens of the statement's text alone: make their line and column the whole source's."""
    line_shift, col_shift = stmt.line - 1, stmt.col - 1
    if not line_shift and not col_shift:
        return
    for token in tokens:
        if token.line == 1:
            token.col += col_shift
        token.line += line_shift


def _unterminated(stmt: SourceStatement, problem: Unterminated, offset: int) -> StreamshellError:
    closing = {"string literal": "'", "quoted identifier": "`", "comment": "*/"}.get(problem.what)
    hint = f"close it with {closing}" if closing else None
    return error_at(stmt, offset, f"unterminated {problem.what}", hint=hint)


def _positioned(
    stmt: SourceStatement,
    token: Token | None,
    message: str,
    cls: type[StreamshellError],
    hint: str | None,
) -> StreamshellError:
    if token is None:
        return error_at(stmt, len(stmt.text), message, cls=cls, hint=hint)
    length = max(1, min(token.end, len(stmt.text) - 1) - token.start + 1)
    return error_at(stmt, token.start, message, cls=cls, length=length, hint=hint)


# --- trees to statements -------------------------------------------------------------------------


def _to_statement(tree: exp.Expr, stmt: SourceStatement) -> st.Statement:
    convert = _CONVERTERS.get(type(tree))
    if convert is None:
        if isinstance(tree, (exp.Query, exp.Values)):
            return st.Select(tree, source=stmt, node=tree)
        raise error_at(stmt, 0, "unsupported statement")
    return convert(tree, stmt)


def _flag(tree: exp.Expr, arg: str) -> bool:
    return bool(tree.args.get(arg))


def _text(node: exp.Expr | None) -> str | None:
    return node.name if node is not None else None


def _int(node: exp.Expr | None) -> int | None:
    return int(node.name) if node is not None else None


def _options(tree: exp.Expr) -> dict[str, str]:
    return {o.this.name: o.expression.name for o in tree.args.get("options") or []}


def _insert(tree: exp.Insert, stmt: SourceStatement) -> st.Insert:
    target = tree.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    body = tree.expression
    values = None
    query: exp.Expr | None = body
    if isinstance(body, exp.Values):
        values = [list(row.expressions) for row in body.expressions]
        query = None
    return st.Insert(
        object_name(target), columns, query, values, overwrite=_flag(tree, "overwrite"),
        source=stmt, node=tree,
    )


def _create_view(tree: nodes.CreateViewDdl, stmt: SourceStatement) -> st.CreateView:
    columns = [c.name for c in tree.args["columns"]] if tree.args.get("columns") else None
    return st.CreateView(
        object_name(tree.this), to_sql(tree.expression, pretty=True), tree.expression,
        if_not_exists=_flag(tree, "exists"), temporary=_flag(tree, "temporary"),
        columns=columns, comment=_text(tree.args.get("comment")), source=stmt, node=tree,
    )


def _drop(tree: nodes.DropDdl, stmt: SourceStatement) -> st.Statement:
    if tree.args["kind"] == "FUNCTION":
        return st.DropFunction(
            object_name(tree.this), if_exists=_flag(tree, "exists"),
            temporary=_flag(tree, "temporary"), source=stmt, node=tree,
        )
    return st.DropTable(
        object_name(tree.this), if_exists=_flag(tree, "exists"), is_view=tree.args["kind"] == "VIEW",
        temporary=_flag(tree, "temporary"), source=stmt, node=tree,
    )


def _explain(tree: nodes.ExplainCommand, stmt: SourceStatement) -> st.Explain:
    inner = _to_statement(tree.this, stmt)
    details = [d.name for d in tree.args.get("details") or []]
    return st.Explain(inner, details, source=stmt, node=tree)


_CONVERTERS: dict[type, Callable[[Any, SourceStatement], st.Statement]] = {
    nodes.CreateTableDdl: lambda t, s: st.CreateTable(
        table_def_from_create(t), if_not_exists=_flag(t, "exists"),
        temporary=_flag(t, "temporary"), query=t.args.get("expression"), source=s, node=t,
    ),
    nodes.CreateViewDdl: _create_view,
    nodes.CreateFunctionDdl: lambda t, s: st.CreateFunction(
        object_name(t.this), t.expression.name, _text(t.args.get("language")),
        if_not_exists=_flag(t, "exists"), temporary=_flag(t, "temporary"), source=s, node=t,
    ),
    nodes.DropDdl: _drop,
    nodes.AlterTableSetDdl: lambda t, s: st.AlterTableSet(
        object_name(t.this), _options(t), if_exists=_flag(t, "exists"), source=s, node=t
    ),
    nodes.AlterTableDdl: lambda t, s: st.AlterTable(
        object_name(t.this), change=None if t.args["action"].name == "RENAME TO" else schema_change(t),
        new_name=object_name(t.args["to"]) if t.args.get("to") is not None else None,
        if_exists=_flag(t, "exists"), source=s, node=t,
    ),
    nodes.AlterViewDdl: lambda t, s: st.AlterView(
        object_name(t.this), new_name=object_name(t.args["to"]) if t.args.get("to") is not None else None,
        query_sql=to_sql(t.expression, pretty=True) if t.args.get("expression") is not None else None,
        query=t.args.get("expression"), source=s, node=t,
    ),
    exp.Insert: _insert,
    exp.Delete: lambda t, s: st.Delete(object_name(t.this), t.args["where"].this, source=s, node=t),
    nodes.StatementSetBlock: lambda t, s: st.StatementSet(
        [_insert(i, s) for i in t.expressions], source=s, node=t
    ),
    nodes.HelpCommand: lambda t, s: st.Help(_text(t.this), source=s, node=t),
    nodes.QuitCommand: lambda t, s: st.Quit(source=s, node=t),
    nodes.ClearCommand: lambda t, s: st.Clear(source=s, node=t),
    nodes.SetCommand: lambda t, s: st.Set(
        _text(t.this), _text(t.args.get("expression")), source=s, node=t
    ),
    nodes.ResetCommand: lambda t, s: st.Reset(_text(t.this), source=s, node=t),
    nodes.ShowCommand: lambda t, s: st.Show(
        t.this, scope=object_name(t.args["scope"]) if t.args.get("scope") is not None else None,
        like=_text(t.args.get("like")), not_like=_flag(t, "negated"), source=s, node=t,
    ),
    nodes.CreateCatalogDdl: lambda t, s: st.CreateCatalog(
        t.this.name, _options(t), comment=_text(t.args.get("comment")), if_not_exists=_flag(t, "exists"),
        source=s, node=t,
    ),
    nodes.DropCatalogDdl: lambda t, s: st.DropCatalog(t.this.name, if_exists=_flag(t, "exists"), source=s, node=t),
    nodes.AlterCatalogDdl: lambda t, s: st.AlterCatalog(
        t.this.name, _options(t), comment=_text(t.args.get("comment")), source=s, node=t
    ),
    nodes.UseCatalogCommand: lambda t, s: st.UseCatalog(t.this.name, source=s, node=t),
    nodes.CreateDatabaseDdl: lambda t, s: st.CreateDatabase(
        object_name(t.this), comment=_text(t.args.get("comment")), if_not_exists=_flag(t, "exists"),
        source=s, node=t,
    ),
    nodes.DropDatabaseDdl: lambda t, s: st.DropDatabase(
        object_name(t.this), if_exists=_flag(t, "exists"), cascade=_flag(t, "cascade"), source=s, node=t
    ),
    nodes.UseCommand: lambda t, s: st.Use(object_name(t.this), source=s, node=t),
    nodes.DescribeCatalogCommand: lambda t, s: st.DescribeCatalog(
        t.this.name, extended=_flag(t, "extended"), source=s, node=t
    ),
    nodes.ShowCreateCommand: lambda t, s: st.ShowCreate(
        object_name(t.this), is_view=_flag(t, "view"), source=s, node=t
    ),
    nodes.DescribeCommand: lambda t, s: st.Describe(object_name(t.this), source=s, node=t),
    nodes.ExplainCommand: _explain,
    nodes.StopJobCommand: lambda t, s: st.StopJob(
        t.this.name, with_savepoint=_flag(t, "savepoint"), with_drain=_flag(t, "drain"),
        source=s, node=t,
    ),
    nodes.ResumeJobCommand: lambda t, s: st.ResumeJob(t.this.name, source=s, node=t),
    nodes.DescribeJobCommand: lambda t, s: st.DescribeJob(t.this.name, source=s, node=t),
    nodes.DescribeFunctionCommand: lambda t, s: st.DescribeFunction(
        object_name(t.this), extended=bool(t.args.get("extended")), source=s, node=t),
    nodes.ShowErrorsCommand: lambda t, s: st.ShowErrors(
        object_name(t.this), _int(t.args.get("limit")), source=s, node=t
    ),
    nodes.PrintTopicCommand: lambda t, s: st.PrintTopic(
        t.this.name, from_beginning=_flag(t, "from_beginning"), limit=_int(t.args.get("limit")),
        options=_options(t), source=s, node=t,
    ),
    nodes.DescribeTopicCommand: lambda t, s: st.DescribeTopic(
        t.this.name, sample=_int(t.args.get("sample")), options=_options(t), source=s, node=t
    ),
}


def generate(tree: exp.Expr, pretty: bool = False) -> str:
    """Print a tree of our dialect back as Flink SQL."""
    return to_sql(tree, pretty=pretty)
