"""Grammar of Flink's catalog and database statements: CREATE/DROP/ALTER/USE CATALOG, CREATE/DROP DATABASE, USE,
and the SHOW forms that list them (SHOW CATALOGS, SHOW DATABASES, SHOW CURRENT ..., SHOW TABLES FROM db LIKE ...,
SHOW COLUMNS FROM t).

Why it exists: these are a family of their own (they name catalogs and databases, not tables), so they live
apart from the table DDL; a link of the grammar's class chain (grammar_base.py), between the base and the DDL.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from shell.sql import nodes
from shell.sql.grammar_base import GrammarBase

SCOPED_SHOW = ("TABLES", "VIEWS", "COLUMNS", "DATABASES", "FUNCTIONS")


class CatalogGrammar(GrammarBase):
    """Catalog and database statements (after their first keyword has been consumed)."""

    def _parse_catalog_name(self, what: str = "a catalog name") -> exp.Identifier:
        if not self._curr or self._curr.token_type not in self.NAME_TOKENS:
            self._unexpected(what)
        name = self._parse_id_var(any_token=True)
        if not isinstance(name, exp.Identifier):
            self._unexpected(what)
        return name

    def _parse_comment_clause(self) -> exp.Literal | None:
        return self._parse_string_literal("a comment string") if self._match(TokenType.COMMENT) else None

    def _parse_create_catalog(self) -> nodes.CreateCatalogDdl:
        exists = self._match_text_seq("IF", "NOT", "EXISTS") or None
        name = self._parse_catalog_name()
        comment = self._parse_comment_clause()
        self._expect(TokenType.WITH, "WITH and the catalog's options: WITH ('type' = 'generic_in_memory')")
        return self.expression(nodes.CreateCatalogDdl(this=name, options=self._parse_options(), comment=comment,
                                                      exists=exists))  # fmt: skip

    def _parse_create_database(self) -> nodes.CreateDatabaseDdl:
        exists = self._match_text_seq("IF", "NOT", "EXISTS") or None
        name = self._parse_object_name("a database name")
        comment = self._parse_comment_clause()
        options = self._parse_options() if self._match(TokenType.WITH) else None
        return self.expression(nodes.CreateDatabaseDdl(this=name, comment=comment, options=options, exists=exists))

    def _parse_drop_catalog_or_database(self, kind: str) -> exp.Expr:
        exists = self._match_text_seq("IF", "EXISTS") or None
        if kind == "CATALOG":
            return self.expression(nodes.DropCatalogDdl(this=self._parse_catalog_name(), exists=exists))
        name = self._parse_object_name("a database name")
        cascade = None
        if self._match_texts(("CASCADE", "RESTRICT")):
            cascade = self._prev.text.upper() == "CASCADE" or None
        return self.expression(nodes.DropDatabaseDdl(this=name, exists=exists, cascade=cascade))

    def _parse_alter_catalog(self) -> nodes.AlterCatalogDdl:
        name = self._parse_catalog_name()
        if self._match(TokenType.SET):
            return self.expression(nodes.AlterCatalogDdl(this=name, options=self._parse_options()))
        if self._match(TokenType.COMMENT):
            comment = self._parse_string_literal("a comment string")
            return self.expression(nodes.AlterCatalogDdl(this=name, comment=comment))
        self._unexpected("SET and the options, or COMMENT 'text'")

    def _parse_use(self) -> exp.Expr:
        if self._match_text_seq("CATALOG"):
            return self.expression(nodes.UseCatalogCommand(this=self._parse_catalog_name()))
        if self._match_text_seq("MODULES"):
            self._unsupported("USE MODULES", self._prev)
        return self.expression(nodes.UseCommand(this=self._parse_object_name("a database name, or CATALOG and a name")))

    def _parse_show_scoped(self, kind: str) -> nodes.ShowCommand:
        """`SHOW TABLES|VIEWS|FUNCTIONS [FROM|IN db] [[NOT] LIKE 'pattern']`, `SHOW COLUMNS FROM|IN t [...]`,
        `SHOW DATABASES [FROM|IN catalog] [...]`."""
        scope = None
        if self._match_set((TokenType.FROM, TokenType.IN)):
            if kind == "DATABASES":
                scope = self._parse_catalog_name()
            else:
                scope = self._parse_object_name("a table name" if kind == "COLUMNS" else "a database name")
        elif kind == "COLUMNS":
            self._unexpected("FROM or IN and a table name")
        negated = self._match(TokenType.NOT) or None
        like = None
        if self._match_set((TokenType.LIKE, TokenType.ILIKE)):
            like = self._parse_string_literal("a pattern in quotes: LIKE 'or%'")
        elif negated:
            self._unexpected("LIKE after NOT")
        return self.expression(nodes.ShowCommand(this=kind, scope=scope, like=like, negated=negated))

    def _parse_show_current(self) -> nodes.ShowCommand:
        if not self._match_texts(("CATALOG", "DATABASE")):
            self._unexpected("CATALOG or DATABASE after SHOW CURRENT")
        return self.expression(nodes.ShowCommand(this=f"CURRENT {self._prev.text.upper()}"))

    def _parse_describe_catalog(self) -> nodes.DescribeCatalogCommand:
        extended = self._match_text_seq("EXTENDED") or None
        return self.expression(nodes.DescribeCatalogCommand(this=self._parse_catalog_name(), extended=extended))
