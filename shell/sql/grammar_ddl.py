"""Flink DDL grammar: CREATE TABLE/VIEW/FUNCTION, DROP, ALTER TABLE ... SET.

Why it exists: Flink's CREATE TABLE (computed and metadata columns, WATERMARK FOR, PRIMARY KEY
NOT ENFORCED, WITH options, LIKE) has no sqlglot equivalent, and DDL is never transpiled, so a
small exact grammar that yields nodes.py nodes is clearer than bending sqlglot's CREATE parser.
A link of the grammar's class chain (grammar_base.py); it uses the helpers there.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.tokens import TokenType

from shell.sql import nodes
from shell.sql.grammar_catalog import CatalogGrammar
from shell.sql.hints import FOLLOW_KEYWORDS, suggest


# Type names Flink documents, for "did you mean" on a misspelt type.
FLINK_TYPE_NAMES = (
    "CHAR", "VARCHAR", "STRING", "BOOLEAN", "BINARY", "VARBINARY", "BYTES", "DECIMAL", "DEC",
    "NUMERIC", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DATE",
    "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "ARRAY", "MAP", "ROW",
)
UNSUPPORTED_TYPES = {"MULTISET": "the MULTISET type", "RAW": "the RAW type", "INTERVAL": "INTERVAL column types"}
UNSUPPORTED_CREATABLES = ("MODEL", "MATERIALIZED", "INDEX", "CONNECTION")
LIKE_OPTIONS = {
    "INCLUDING": ("ALL", "CONSTRAINTS", "PARTITIONS", "GENERATED", "OPTIONS", "WATERMARKS", "METADATA"),
    "EXCLUDING": ("ALL", "CONSTRAINTS", "PARTITIONS", "GENERATED", "OPTIONS", "WATERMARKS", "METADATA"),
    "OVERWRITING": ("GENERATED", "OPTIONS", "WATERMARKS", "METADATA"),
}


class DdlGrammar(CatalogGrammar):
    """CREATE/DROP/ALTER statements (after their first keyword has been consumed)."""

    def _parse_create_statement(self) -> exp.Expr:
        if self._match(TokenType.OR):
            self._expect(TokenType.REPLACE, "REPLACE")
            self._unsupported("CREATE OR REPLACE TABLE ... AS SELECT", self._prev)
        if self._match_text_seq("CATALOG"):
            return self._parse_create_catalog()
        if self._match_texts(("DATABASE", "SCHEMA")):
            return self._parse_create_database()
        temporary = self._match(TokenType.TEMPORARY) or None
        system = bool(temporary and self._match_text_seq("SYSTEM")) or None
        if self._match(TokenType.TABLE):
            return self._parse_create_table(temporary)
        if self._match(TokenType.VIEW):
            return self._parse_create_view(temporary)
        if self._match(TokenType.FUNCTION):
            return self._parse_create_function(temporary, system)
        return self._bad_object_kind("CREATE")

    def _bad_object_kind(self, verb: str) -> t.NoReturn:
        token = self._curr
        word = token.text.upper() if token else ""
        if word in UNSUPPORTED_CREATABLES:
            self._unsupported(f"{verb} {word}", token)
        hint = suggest(word, FOLLOW_KEYWORDS[verb]) if word else None
        self._unexpected_with_hint("TABLE, VIEW, FUNCTION, CATALOG or DATABASE", hint)

    def _parse_if_not_exists(self) -> bool | None:
        return self._match_text_seq("IF", "NOT", "EXISTS") or None

    def _parse_if_exists(self) -> bool | None:
        return self._match_text_seq("IF", "EXISTS") or None

    # --- CREATE TABLE -------------------------------------------------------------------------

    def _parse_create_table(self, temporary: bool | None) -> nodes.CreateTableDdl:
        exists = self._parse_if_not_exists()
        name = self._parse_object_name()
        columns: list[exp.Expr] = []
        watermark = primary_key = None
        if self._match(TokenType.L_PAREN):
            while True:
                element = self._parse_table_element()
                if isinstance(element, exp.WatermarkColumnConstraint):
                    if watermark is not None:
                        self._fail("a table can have only one WATERMARK", self._prev)
                    watermark = element
                elif isinstance(element, exp.PrimaryKey):
                    if primary_key is not None:
                        self._fail("a table can have only one PRIMARY KEY", self._prev)
                    primary_key = element
                else:
                    columns.append(element)
                if not self._match(TokenType.COMMA):
                    break
            self._expect(TokenType.R_PAREN, "',' or ')' in the column list")
        comment = self._parse_string_literal("a comment string") if self._match(TokenType.COMMENT) else None
        partitioned_by = None
        if self._match(TokenType.PARTITION_BY):
            self._expect(TokenType.L_PAREN, "'(' after PARTITIONED BY")
            partitioned_by = self._parse_csv(self._parse_column_name)
            self._expect(TokenType.R_PAREN, "')'")
        options = self._parse_options() if self._match(TokenType.WITH) else None
        like = self._parse_like_clause() if self._match(TokenType.LIKE) else None
        query = None
        if self._match(TokenType.ALIAS):
            if like is not None:
                self._fail("CREATE TABLE takes LIKE or AS a query, not both", self._prev)
            if columns:
                self._fail("CREATE TABLE ... AS takes its columns from the query; only a PRIMARY KEY and a "
                           "WATERMARK may be declared", self._prev)  # fmt: skip
            query = self._parse_query("the query whose result fills the table")
        return self.expression(
            nodes.CreateTableDdl(
                this=name,
                columns=columns or None,
                watermark=watermark,
                primary_key=primary_key,
                comment=comment,
                partitioned_by=partitioned_by,
                options=options,
                like=like,
                temporary=temporary,
                exists=exists,
                expression=query,
            )
        )

    def _parse_table_element(self) -> exp.Expr:
        if self._match_text_seq("WATERMARK", "FOR"):
            column = self._parse_column_name()
            self._expect(TokenType.ALIAS, "AS and the watermark expression")
            return exp.WatermarkColumnConstraint(this=column, expression=self._parse_required_expression())
        if self._match(TokenType.CONSTRAINT):
            self._parse_column_name()
            if not self._match(TokenType.PRIMARY_KEY, advance=False):
                self._unexpected("PRIMARY KEY after CONSTRAINT name")
        if self._match(TokenType.PRIMARY_KEY):
            self._expect(TokenType.L_PAREN, "'(' and the key columns")
            keys = self._parse_csv(self._parse_column_name)
            self._expect(TokenType.R_PAREN, "')' after the key columns")
            self._parse_not_enforced()
            return exp.PrimaryKey(expressions=keys)
        for word in ("UNIQUE", "FOREIGN KEY", "CHECK"):
            if self._match_text_seq(*word.split()):
                self._unsupported(
                    f"a {word} constraint", self._prev, hint="only PRIMARY KEY (...) NOT ENFORCED is supported"
                )
        return self._parse_column_definition()

    def _parse_not_enforced(self) -> None:
        if not self._match_text_seq("NOT", "ENFORCED"):
            self._fail(
                "PRIMARY KEY must be declared NOT ENFORCED",
                hint="Flink does not check key constraints: write PRIMARY KEY (...) NOT ENFORCED",
            )

    def _parse_required_expression(self) -> exp.Expr:
        expression = self._parse_disjunction()
        if expression is None:
            self._unexpected("an expression")
        return expression

    def _parse_column_definition(self) -> exp.ColumnDef:
        if not self._curr or self._curr.token_type not in self.NAME_TOKENS:
            self._unexpected("a column name, WATERMARK FOR or PRIMARY KEY")
        name = self._parse_column_name()
        constraints: list[exp.Expr] = []
        kind = None
        if self._match(TokenType.ALIAS):
            constraints.append(exp.ComputedColumnConstraint(this=self._parse_required_expression()))
        else:
            kind = self._parse_flink_type()
        while True:
            if self._match_text_seq("NOT", "NULL"):
                constraints.append(exp.NotNullColumnConstraint())
            elif self._match(TokenType.NULL):
                continue
            elif self._match_text_seq("METADATA"):
                key = self._parse_string_literal("the metadata key") if self._match(TokenType.FROM) else None
                virtual = self._match_text_seq("VIRTUAL") or None
                constraints.append(nodes.MetadataColumnConstraint(this=key, virtual=virtual))
            elif self._match(TokenType.CONSTRAINT) or self._match(TokenType.PRIMARY_KEY, advance=False):
                if self._prev.token_type == TokenType.CONSTRAINT:
                    self._parse_column_name()
                self._expect(TokenType.PRIMARY_KEY, "PRIMARY KEY")
                self._parse_not_enforced()
                constraints.append(exp.PrimaryKeyColumnConstraint())
            elif self._match(TokenType.COMMENT):
                constraints.append(exp.CommentColumnConstraint(this=self._parse_string_literal("a comment string")))
            else:
                break
        if kind is None and any(not isinstance(c, (exp.ComputedColumnConstraint, exp.CommentColumnConstraint)) for c in constraints):
            self._fail("a computed column takes no type or constraints", self._prev)
        return self.expression(exp.ColumnDef(this=name, kind=kind, constraints=constraints or None))

    def _parse_flink_type(self) -> exp.DataType:
        token = self._curr
        word = token.text.upper() if token else ""
        if word in UNSUPPORTED_TYPES and token.token_type != TokenType.IDENTIFIER:
            self._unsupported(UNSUPPORTED_TYPES[word], token)
        data_type = self._parse_types(schema=True, allow_identifiers=False)
        if not isinstance(data_type, exp.DataType):
            hint = suggest(word, FLINK_TYPE_NAMES) if word else None
            self._unexpected_with_hint("a data type", hint)
        return data_type

    def _parse_options(self) -> list[nodes.TableOption]:
        """`( 'key' = 'value' [, ...] )` after WITH or SET."""
        self._expect(TokenType.L_PAREN, "'(' and the options")
        options = []
        if not self._match(TokenType.R_PAREN, advance=False):
            options = self._parse_csv(self._parse_option)
        self._expect(TokenType.R_PAREN, "',' or ')' after the option")
        return options

    def _parse_option(self) -> nodes.TableOption:
        hint = "options are written 'key' = 'value', both quoted with single quotes"
        if not self._match(TokenType.STRING):
            self._unexpected_with_hint("a quoted option key", hint)
        key = self.expression(exp.Literal.string(self._prev.text), self._prev)
        self._expect(TokenType.EQ, "'=' after the option key")
        if not self._match(TokenType.STRING):
            self._unexpected_with_hint("a quoted option value", hint)
        value = self.expression(exp.Literal.string(self._prev.text), self._prev)
        return nodes.TableOption(this=key, expression=value)

    def _parse_like_clause(self) -> nodes.LikeClause:
        source = self._parse_object_name("the source table of LIKE")
        options = None
        if self._match(TokenType.L_PAREN):
            # Flink separates LIKE options with blanks (`EXCLUDING ALL INCLUDING OPTIONS`); commas are accepted.
            options = [self._parse_like_option()]
            while not self._match(TokenType.R_PAREN):
                self._match(TokenType.COMMA)
                if self._curr is None:
                    self._expect(TokenType.R_PAREN, "')' after the LIKE options")
                options.append(self._parse_like_option())
        return nodes.LikeClause(this=source, expressions=options)

    def _parse_like_option(self) -> exp.Var:
        if not self._match_texts(tuple(LIKE_OPTIONS)):
            self._unexpected("INCLUDING, EXCLUDING or OVERWRITING")
        strategy = self._prev.text.upper()
        if not self._match_texts(LIKE_OPTIONS[strategy]):
            self._unexpected(" or ".join(LIKE_OPTIONS[strategy]))
        return exp.var(f"{strategy} {self._prev.text.upper()}")

    # --- CREATE VIEW / FUNCTION ---------------------------------------------------------------

    def _parse_create_view(self, temporary: bool | None) -> nodes.CreateViewDdl:
        exists = self._parse_if_not_exists()
        name = self._parse_object_name("a view name")
        columns = None
        if self._match(TokenType.L_PAREN):
            columns = self._parse_csv(self._parse_column_name)
            self._expect(TokenType.R_PAREN, "')' after the view columns")
        comment = self._parse_string_literal("a comment string") if self._match(TokenType.COMMENT) else None
        self._expect(TokenType.ALIAS, "AS and the view's query")
        query = self._parse_query()
        return self.expression(
            nodes.CreateViewDdl(
                this=name, columns=columns, expression=query, comment=comment,
                temporary=temporary, exists=exists,
            )
        )

    def _parse_create_function(self, temporary: bool | None, system: bool | None) -> nodes.CreateFunctionDdl:
        exists = self._parse_if_not_exists()
        name = self._parse_object_name("a function name")
        self._expect(TokenType.ALIAS, "AS and the function's 'module.name'")
        target = self._parse_string_literal("the function's 'module.name' as a string")
        language = None
        if self._match_text_seq("LANGUAGE"):
            if not self._match_texts(("PYTHON", "JAVA", "SCALA")):
                self._unexpected("PYTHON, JAVA or SCALA")
            language = exp.var(self._prev.text.upper())
        if self._match_text_seq("USING"):
            self._unsupported("CREATE FUNCTION ... USING JAR", self._prev)
        return self.expression(
            nodes.CreateFunctionDdl(
                this=name, expression=target, language=language,
                temporary=temporary, system=system, exists=exists,
            )
        )

    # --- DROP / ALTER -------------------------------------------------------------------------

    def _parse_drop_statement(self) -> exp.Expr:
        if self._match_texts(("CATALOG", "DATABASE", "SCHEMA")):
            return self._parse_drop_catalog_or_database("CATALOG" if self._prev.text.upper() == "CATALOG" else "DATABASE")
        temporary = self._match(TokenType.TEMPORARY) or None
        if temporary:
            self._match_text_seq("SYSTEM")
        if not self._match_set((TokenType.TABLE, TokenType.VIEW, TokenType.FUNCTION)):
            self._bad_object_kind("DROP")
        kind = self._prev.text.upper()
        exists = self._parse_if_exists()
        name = self._parse_object_name(f"a {kind.lower()} name")
        return self.expression(nodes.DropDdl(this=name, kind=kind, exists=exists, temporary=temporary))

    def _parse_alter_statement(self) -> exp.Expr:
        if self._match_text_seq("CATALOG"):
            return self._parse_alter_catalog()
        if self._match(TokenType.VIEW):
            return self._parse_alter_view()
        if not self._match(TokenType.TABLE):
            word = self._curr.text.upper() if self._curr else ""
            if word in ("FUNCTION", "DATABASE", "MODEL"):
                self._unsupported(f"ALTER {word}", self._curr)
            self._unexpected_with_hint("TABLE, VIEW or CATALOG", suggest(word, ("TABLE", "VIEW", "CATALOG")) if word else None)
        exists = self._parse_if_exists()
        name = self._parse_object_name()
        if self._match(TokenType.SET):
            return self.expression(nodes.AlterTableSetDdl(this=name, options=self._parse_options(), exists=exists))
        action, elements, to = self._parse_alter_table_action()
        return self.expression(nodes.AlterTableDdl(this=name, action=exp.var(action), expressions=elements, to=to,
                                                   exists=exists))  # fmt: skip

    def _parse_alter_table_action(self) -> tuple[str, list[exp.Expr] | None, exp.Expr | None]:
        if self._match_text_seq("RESET"):
            self._expect(TokenType.L_PAREN, "'(' and the option keys to reset")
            keys = self._parse_csv(lambda: self._parse_string_literal("an option key in quotes"))
            self._expect(TokenType.R_PAREN, "')' after the option keys")
            return "RESET", keys, None
        if self._match_text_seq("RENAME"):
            if self._match_text_seq("TO"):
                return "RENAME TO", None, self._parse_object_name("the new table name")
            old = self._parse_column_name()
            self._expect_words("TO")
            return "RENAME COLUMN", [old, self._parse_column_name()], None
        if self._match_texts(("ADD", "MODIFY")):
            action = self._prev.text.upper()
            if self._match(TokenType.L_PAREN):
                elements = self._parse_csv(self._parse_positioned_element)
                self._expect(TokenType.R_PAREN, "',' or ')' after the elements")
            else:
                elements = [self._parse_positioned_element()]
            return action, elements, None
        if self._match(TokenType.DROP):
            if self._match(TokenType.PRIMARY_KEY):
                return "DROP PRIMARY KEY", None, None
            if self._match_text_seq("WATERMARK"):
                return "DROP WATERMARK", None, None
            if self._match(TokenType.CONSTRAINT):
                self._parse_column_name()
                return "DROP PRIMARY KEY", None, None
            if self._match(TokenType.L_PAREN):
                names = self._parse_csv(self._parse_column_name)
                self._expect(TokenType.R_PAREN, "')' after the column names")
                return "DROP", names, None
            return "DROP", [self._parse_column_name()], None
        self._unexpected("SET, RESET, ADD, MODIFY, DROP or RENAME")

    def _parse_positioned_element(self) -> exp.Expr:
        element = self._parse_table_element()
        if self._match_text_seq("FIRST"):
            return nodes.Positioned(this=element, first=True)
        if self._match_text_seq("AFTER"):
            return nodes.Positioned(this=element, after=self._parse_column_name())
        return element

    def _parse_alter_view(self) -> nodes.AlterViewDdl:
        name = self._parse_object_name("a view name")
        if self._match_text_seq("RENAME", "TO"):
            return self.expression(nodes.AlterViewDdl(this=name, to=self._parse_object_name("the new view name")))
        self._expect(TokenType.ALIAS, "RENAME TO and a name, or AS and the view's new query")
        return self.expression(nodes.AlterViewDdl(this=name, expression=self._parse_query()))
