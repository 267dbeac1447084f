"""The Flink-style grammar: a sqlglot Parser subclass for one statement at a time.

Why it exists: sqlglot's base parser knows SELECT/INSERT well but not Flink's DDL, window table
functions, ROW types or the shell's own commands. This class dispatches on the first word of a
statement, hands queries to sqlglot, and the classes it extends (grammar_shell.py, grammar_ddl.py,
grammar_base.py: one chain) parse the rest. Every fault is raised as a `GrammarError`/`UnsupportedSyntax`
carrying the offending token (see grammar_errors.py); `parse_tokens` is the only entry point.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp, parser
from sqlglot.tokens import Token, TokenType

from shell.sql import nodes
from shell.sql.grammar_base import QUERY_START, describe_token
from shell.sql.grammar_shell import ShellGrammar
from shell.sql.hints import keyword_hint, suggest

# Functions kept as sqlglot's typed nodes: aggregates and ranking functions that the planner
# recognises. Every other function stays exp.Anonymous with the user's spelling, and
# translate.py maps it to Spark through a table.
TYPED_FUNCTIONS = ("COUNT", "SUM", "MIN", "MAX", "AVG", "ROW_NUMBER", "RANK", "DENSE_RANK", "COALESCE")
# Functions with special argument syntax we keep from sqlglot (CAST(x AS t), TRIM(BOTH ...), ...).
SPECIAL_FUNCTION_PARSERS = (
    "CAST", "TRY_CAST", "EXTRACT", "SUBSTRING", "TRIM", "POSITION", "OVERLAY", "CEIL", "FLOOR",
)


def _unit_first(name: str) -> t.Callable[[list], exp.Expr]:
    """TIMESTAMPADD(unit, n, ts)/TIMESTAMPDIFF(unit, a, b): the unit is a keyword, not a column."""

    def build(args: list) -> exp.Expr:
        if args and isinstance(args[0], exp.Column) and not args[0].table:
            args = [exp.var(args[0].name.upper()), *args[1:]]
        return exp.Anonymous(this=name, expressions=args)

    return build


HEX_DIGITS = frozenset("0123456789abcdefABCDEF")

# Flink statements we recognise but do not run: first word(s) -> feature name.
UNSUPPORTED_STATEMENTS = {
    "LOAD": "LOAD MODULE", "UNLOAD": "UNLOAD MODULE", "ADD": "ADD JAR",
    "REMOVE": "REMOVE JAR", "ANALYZE": "ANALYZE TABLE", "TRUNCATE": "TRUNCATE TABLE",
    "UPDATE": "UPDATE", "CALL": "CALL (procedures)", "COMPILE": "COMPILE PLAN",
    "MERGE": "MERGE", "REPLACE": "REPLACE TABLE AS SELECT",
}


class StreamshellParser(ShellGrammar):
    """Parses one statement's tokens into a sqlglot tree (our nodes.py nodes for non-queries)."""

    SUPPORTS_TABLE_QUERY = False
    STRICT_CAST = True

    FUNCTIONS = {
        **{name: parser.Parser.FUNCTIONS[name] for name in TYPED_FUNCTIONS},
        "TABLE": lambda args: exp.TableFromRows(this=args[0] if args else None),
        "DESCRIPTOR": lambda args: nodes.Descriptor(expressions=args),
        "TIMESTAMPADD": _unit_first("TIMESTAMPADD"),
        "TIMESTAMPDIFF": _unit_first("TIMESTAMPDIFF"),
    }
    FUNC_TOKENS = {*parser.Parser.FUNC_TOKENS, TokenType.SESSION}
    FUNCTION_PARSERS = {
        **{name: parser.Parser.FUNCTION_PARSERS[name] for name in SPECIAL_FUNCTION_PARSERS},
        "JSON_VALUE": lambda self: self._parse_flink_json_value(),
    }
    NO_PAREN_FUNCTION_PARSERS = {
        "CASE": parser.Parser.NO_PAREN_FUNCTION_PARSERS["CASE"],
        "IF": parser.Parser.NO_PAREN_FUNCTION_PARSERS["IF"],
    }
    NO_PAREN_FUNCTIONS = {
        **parser.Parser.NO_PAREN_FUNCTIONS,
        TokenType.LOCALTIME: exp.Localtime,
        TokenType.LOCALTIMESTAMP: exp.Localtimestamp,
    }
    PRIMARY_PARSERS = {
        **parser.Parser.PRIMARY_PARSERS,
        TokenType.TABLE: lambda self, token: self._parse_table_arg(),
        TokenType.HEX_STRING: lambda self, token: self._parse_binary_literal(token),
    }
    QUERY_MODIFIER_PARSERS = {
        **parser.Parser.QUERY_MODIFIER_PARSERS,
        TokenType.MATCH_RECOGNIZE: lambda self: self._unsupported("MATCH_RECOGNIZE", self._match_recognize_token()),
    }

    # --- entry point and error reporting ------------------------------------------------------

    def parse_tokens(self, tokens: list[Token], sql: str) -> exp.Expr:
        """Parse exactly one statement from `tokens` (which may hold inner ';' of a BEGIN block)."""
        self.reset()
        self.sql = sql
        self._chunks = [tokens]
        self._advance_chunk()
        if not self._curr:
            self._fail("empty statement")
        statement = self._parse_statement()
        if self._curr:
            self._unexpected()
        return t.cast(exp.Expr, statement)

    def _parse_projections(self) -> tuple[list[exp.Expr], list[exp.Expr] | None]:
        """A SELECT's list, each comma followed by an item: sqlglot drops an empty item, so `SELECT id, FROM t`
        would be read as `SELECT id FROM t` (and `SELECT a,, b` as `SELECT a, b`), which Flink refuses."""
        items: list[exp.Expr] = []
        item = self._parse_expression()
        if item is not None:
            items.append(item)
        elif self._curr is not None and self._curr.token_type == TokenType.COMMA:
            self._fail("expected an expression before ','", self._curr)
        while self._match(TokenType.COMMA):
            comma = self._prev
            item = self._parse_expression()
            if item is None:
                if self._curr is None or self._curr.token_type != TokenType.COMMA:
                    self._fail("a select list cannot end with a comma", comma, hint="remove the comma, or add an item after it")
                self._fail("expected an expression after ','", self._curr)
            self._add_comments(items[-1])
            items.append(item)
        return items, None

    # --- statements ---------------------------------------------------------------------------

    def _parse_statement(self) -> exp.Expr | None:
        token = self._curr
        if not token:
            return None
        word = token.text.upper() if token.token_type not in self.TEXT_MATCH_EXCLUDED_TOKENS else ""
        handler = self.STATEMENT_HANDLERS.get(word)
        if handler is not None:
            self._advance()
            return handler(self)
        if word in UNSUPPORTED_STATEMENTS:
            self._unsupported(UNSUPPORTED_STATEMENTS[word], token)
        if token.token_type in QUERY_START:
            return self._parse_query_statement()
        hint = keyword_hint([word]) if word else None
        self._fail(f"unknown statement starting with {describe_token(token)}", token, hint)

    def _parse_query_statement(self) -> exp.Expr:
        start = self._curr
        query = super()._parse_statement()
        if not isinstance(query, (exp.Query, exp.Values)):
            self._fail("expected a query (SELECT, WITH, VALUES)", start)
        return query

    def _parse_insert_statement(self) -> exp.Insert:
        """`INSERT {INTO | OVERWRITE} [TABLE] name [(cols)] query|VALUES`."""
        overwrite = self._match(TokenType.OVERWRITE)
        if not overwrite:
            into = self._curr
            if not self._match(TokenType.INTO):
                hint = suggest(into.text, ("INTO", "OVERWRITE")) if into else None
                self._fail(f"expected INTO or OVERWRITE, found {describe_token(into or None)}", hint=hint)
        self._match(TokenType.TABLE)
        table: exp.Expr = self._parse_object_name()
        if self._match(TokenType.PARTITION, advance=False):
            self._unsupported("INSERT with a static PARTITION clause")
        if self._match(TokenType.L_PAREN):
            columns = self._parse_csv(self._parse_column_name)
            self._expect(TokenType.R_PAREN, "')' after the column list")
            table = exp.Schema(this=table, expressions=columns)
        query = self._parse_query("SELECT or VALUES")
        return self.expression(exp.Insert(this=table, expression=query, overwrite=overwrite or None))

    def _parse_delete_statement(self) -> exp.Delete:
        """`DELETE FROM t WHERE ...`; the session checks that the condition names keys of an upsert table."""
        delete = self._prev
        self._expect(TokenType.FROM, "FROM: DELETE FROM t WHERE key = ...")
        table = self._parse_object_name()
        if not self._match(TokenType.WHERE):
            if self._curr:
                self._unexpected("WHERE")
            self._unsupported("DELETE without WHERE (deleting every key)", delete,
                              hint="name the keys to delete: DELETE FROM t WHERE key = '...' (one tombstone per key)")
        condition = self._parse_disjunction()
        if condition is None:
            self._unexpected("a condition: WHERE key = '...'")
        return self.expression(exp.Delete(this=table, where=exp.Where(this=condition)))

    def _parse_execute(self) -> exp.Expr:
        """`EXECUTE STATEMENT SET BEGIN ... END` or `EXECUTE INSERT ...`."""
        if self._match(TokenType.INSERT):
            return self._parse_insert_statement()
        if self._match_text_seq("PLAN"):
            self._unsupported("EXECUTE PLAN", self._prev)
        self._expect_words("STATEMENT", "SET")
        self._expect(TokenType.BEGIN, "BEGIN")
        return self._parse_statement_set_body()

    def _parse_begin(self) -> exp.Expr:
        """The older SQL-client form `BEGIN STATEMENT SET; ...; END`."""
        self._expect_words("STATEMENT", "SET")
        return self._parse_statement_set_body()

    def _parse_statement_set_body(self) -> nodes.StatementSetBlock:
        inserts: list[exp.Expr] = []
        while True:
            while self._match(TokenType.SEMICOLON):
                pass
            if self._match(TokenType.END):
                break
            if not self._curr:
                self._fail("statement set is not closed: expected END")
            if not self._match(TokenType.INSERT):
                self._fail(
                    f"a statement set holds only INSERT statements, found {describe_token(self._curr)}"
                )
            inserts.append(self._parse_insert_statement())
            if not self._match(TokenType.SEMICOLON, advance=False) and not self._match(
                TokenType.END, advance=False
            ):
                self._unexpected("';' after the INSERT statement")
        if not inserts:
            self._fail("a statement set needs at least one INSERT statement", self._prev)
        return self.expression(nodes.StatementSetBlock(expressions=inserts))

    def _match_recognize_token(self) -> Token | None:
        for token in (self._prev, self._curr):
            if token and token.token_type == TokenType.MATCH_RECOGNIZE:
                return token
        return self._prev or None

    # --- query extensions ---------------------------------------------------------------------

    def _parse_table_arg(self) -> exp.Expr | None:
        """`TABLE name [PARTITION BY col | PARTITION BY (cols)]` as a table-function argument."""
        if self._curr.token_type == TokenType.L_PAREN:  # TABLE(...) is the table function itself
            self._retreat(self._index - 1)
            return None
        table = self._parse_object_name("a table name after TABLE")
        partition_by: list[exp.Expr | None] | None = None
        if self._match(TokenType.PARTITION_BY):
            if self._match(TokenType.L_PAREN):
                partition_by = self._parse_csv(self._parse_column)
                self._expect(TokenType.R_PAREN, "')'")
            else:
                partition_by = [self._parse_column()]
        return self.expression(nodes.TableArg(this=table, partition_by=partition_by))

    def _parse_binary_literal(self, token: Token) -> exp.HexString:
        """Flink's `X'00FF'` (BINARY/BYTES): an even number of hex digits, as Flink requires."""
        digits = token.text
        if any(char not in HEX_DIGITS for char in digits):
            self._fail("a binary literal X'..' holds only the hex digits 0-9 and A-F", token)
        if len(digits) % 2:
            self._fail(
                "a binary literal X'..' needs an even number of hex digits (two per byte)",
                token,
                hint=f"write X'0{digits}' for the same value",
            )
        return self.expression(exp.HexString(this=digits), token)

    def _parse_join(self, skip_join_token: bool = False, parse_bracket: bool = False,
                    alias_tokens: t.Collection[TokenType] | None = None) -> exp.Join | None:
        """Flink's joins: no SEMI or ANTI JOIN (the planner makes those of IN and EXISTS subqueries itself)."""
        start = self._index
        join = super()._parse_join(skip_join_token, parse_bracket, alias_tokens)
        if join is not None and (join.kind or "").upper() in ("SEMI", "ANTI"):
            self._retreat(start)
            self._advance()
            article = "an" if join.kind.upper() == "ANTI" else "a"
            self.raise_error(f"{article} {join.kind.upper()} JOIN is not Flink SQL: write WHERE x IN (SELECT y FROM t ..), "
                             f"or {'NOT ' if join.kind.upper() == 'ANTI' else ''}EXISTS (SELECT 1 FROM t WHERE ..)")
        return join

    def _parse_bracket(self, this: exp.Expr | None = None) -> exp.Expr | None:
        """Flink's `MAP[k1, v1, ...]` constructor as a map (it was a bracket on a column named MAP); an index
        is kept as written (Flink counts an ARRAY's elements from 1: the translator maps it, knowing the types)."""
        if isinstance(this, exp.Column) and not this.table and not this.this.quoted and this.name.upper() == "MAP" \
                and self._match(TokenType.L_BRACKET):
            items = self._parse_csv(self._parse_disjunction)
            if not self._match(TokenType.R_BRACKET):
                self.raise_error("Expected ]")
            if len(items) % 2:
                self.raise_error("the MAP[...] constructor takes keys and values in pairs: MAP['a', 1, 'b', 2]")
            this = self.expression(exp.VarMap(keys=exp.Array(expressions=items[0::2]),
                                              values=exp.Array(expressions=items[1::2])))
        return super()._parse_bracket(this)

    def _parse_types(
        self,
        check_func: bool = False,
        schema: bool = False,
        allow_identifiers: bool = True,
        with_collation: bool = False,
    ) -> exp.Expr | None:
        if self._curr.token_type == TokenType.ARRAY and self._next and self._next.token_type == TokenType.L_BRACKET:
            # `ARRAY[...]` is Flink's array constructor, never a type. sqlglot would first read the values as a
            # fixed-size array type, then go back and read them again as the constructor: twice per level, so
            # ARRAY[ARRAY[...]] nested 20 deep took minutes.
            return None
        if self._curr.token_type == TokenType.ROW and self._next.token_type in (
            TokenType.LT,
            TokenType.L_PAREN,
        ):
            row = self._try_parse(self._parse_row_type)
            if row is not None:
                return row
        return super()._parse_types(check_func, schema, allow_identifiers, with_collation)

    def _parse_row_type(self) -> exp.DataType:
        """Flink's `ROW<name type, ...>` or `ROW(name type, ...)` becomes a STRUCT type."""
        self._advance()
        close = TokenType.GT if self._match(TokenType.LT) else TokenType.R_PAREN
        if close == TokenType.R_PAREN:
            self._expect(TokenType.L_PAREN, "'('")
        fields = self._parse_csv(self._parse_row_field)
        self._expect(close, "'>'" if close == TokenType.GT else "')'")
        return exp.DataType(this=exp.DType.STRUCT, expressions=fields, nested=True)

    def _parse_row_field(self) -> exp.ColumnDef:
        name = self._parse_id_var(any_token=True)
        kind = self._parse_types(schema=True, allow_identifiers=False)
        if not isinstance(name, exp.Identifier) or not isinstance(kind, exp.DataType):
            self._unexpected("a field 'name type'")
        constraints: list[exp.Expr] = []
        if self._match_text_seq("NOT", "NULL"):
            constraints.append(exp.NotNullColumnConstraint())
        if self._match(TokenType.STRING, advance=False):
            constraints.append(exp.CommentColumnConstraint(this=self._parse_string()))
        return exp.ColumnDef(this=name, kind=kind, constraints=constraints or None)

    def _parse_flink_json_value(self) -> nodes.JsonValue:
        """`JSON_VALUE(json, path [RETURNING type] [{NULL|ERROR|DEFAULT e} ON {EMPTY|ERROR}]*)`."""
        this = self._parse_disjunction()
        self._expect(TokenType.COMMA, "',' and a JSON path")
        path = self._parse_disjunction()
        returning = None
        if self._match_text_seq("RETURNING"):
            returning = self._parse_types(allow_identifiers=False)
            if returning is None:
                self._unexpected("a data type after RETURNING")
        behaviours = []
        while self._curr and self._curr.token_type != TokenType.R_PAREN:
            if self._match(TokenType.NULL) or self._match_text_seq("ERROR"):
                kind, default = self._prev.text.upper(), None
            elif self._match(TokenType.DEFAULT):
                kind, default = "DEFAULT", self._parse_disjunction()
            else:
                self._unexpected("RETURNING, NULL, ERROR or DEFAULT")
            self._expect(TokenType.ON, "ON")
            if not self._match_texts(("EMPTY", "ERROR")):
                self._unexpected("EMPTY or ERROR")
            on = self._prev.text.upper()
            behaviours.append(nodes.JsonBehaviour(this=kind, expression=default, on=on))
        return self.expression(
            nodes.JsonValue(this=this, path=path, returning=returning, behaviours=behaviours or None)
        )

    STATEMENT_HANDLERS: t.ClassVar[dict[str, t.Callable[[StreamshellParser], exp.Expr]]] = {
        "CREATE": lambda self: self._parse_create_statement(),
        "DROP": lambda self: self._parse_drop_statement(),
        "ALTER": lambda self: self._parse_alter_statement(),
        "INSERT": lambda self: self._parse_insert_statement(),
        "DELETE": lambda self: self._parse_delete_statement(),
        "EXECUTE": lambda self: self._parse_execute(),
        "BEGIN": lambda self: self._parse_begin(),
        **ShellGrammar.SHELL_HANDLERS,
    }
