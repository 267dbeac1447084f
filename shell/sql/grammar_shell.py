"""Grammar of the shell's own statements: HELP, QUIT, SET, SHOW ..., DESCRIBE, EXPLAIN, jobs, topics.

Why it exists: these statements are not SQL queries but users type them in the same buffer, so
they are parsed by the same parser, yield nodes.py nodes and get the same precise errors.
A link of the grammar's class chain (grammar_base.py); each handler runs after the first word
is consumed.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.tokens import TokenType

from shell.sql import nodes
from shell.sql.grammar_catalog import SCOPED_SHOW
from shell.sql.grammar_ddl import DdlGrammar
from shell.sql.hints import FOLLOW_KEYWORDS, suggest


SHOW_KINDS = ("CATALOGS",)
UNSUPPORTED_SHOW = ("MODULES", "FULL", "JARS", "PARTITIONS", "PROCEDURES", "MODELS", "USER", "MATERIALIZED", "CONNECTIONS")
EXPLAIN_DETAILS = ("ESTIMATED_COST", "CHANGELOG_MODE", "PLAN_ADVICE", "JSON_EXECUTION_PLAN")
# Tokens that end an unquoted SET/RESET key or value.
_WORD_END = {TokenType.EQ, TokenType.SEMICOLON}


class ShellGrammar(DdlGrammar):
    """Shell commands (Flink SQL client style)."""

    def _parse_help(self) -> nodes.HelpCommand:
        topic = None
        if self._curr:
            self._advance()
            topic = exp.var(self._prev.text.upper())
        return nodes.HelpCommand(this=topic)

    def _parse_quit(self) -> nodes.QuitCommand:
        return nodes.QuitCommand(exit=self._prev.text.upper() == "EXIT" or None)

    def _parse_clear(self) -> nodes.ClearCommand:
        return nodes.ClearCommand()

    def _parse_loose_word(self, what: str) -> exp.Literal:
        """A quoted string, or unquoted tokens glued together (`table.exec.mini-batch.enabled`)."""
        if self._match(TokenType.STRING):
            return self.expression(exp.Literal.string(self._prev.text), self._prev)
        first = self._curr
        parts: list[str] = []
        while self._curr and self._curr.token_type not in _WORD_END:
            if parts and self._curr.start > self._prev.end + 1:
                break
            self._advance()
            parts.append(self._prev.text)
        if not parts:
            self._unexpected(what)
        return self.expression(exp.Literal.string("".join(parts)), first)

    def _parse_set_command(self) -> nodes.SetCommand:
        if not self._curr:
            return nodes.SetCommand()
        key = self._parse_loose_word("a quoted key: SET 'key' = 'value'")
        self._expect(TokenType.EQ, "'=' and a value: SET 'key' = 'value'")
        value = self._parse_loose_word("a quoted value: SET 'key' = 'value'")
        return nodes.SetCommand(this=key, expression=value)

    def _parse_reset_command(self) -> nodes.ResetCommand:
        if not self._curr:
            return nodes.ResetCommand()
        return nodes.ResetCommand(this=self._parse_loose_word("a quoted key: RESET 'key'"))

    def _parse_show(self) -> exp.Expr:
        token = self._curr
        word = token.text.upper() if token else ""
        if self._match_text_seq("JOBS"):
            return self._parse_show_jobs()
        if self._match_texts(SHOW_KINDS):
            return nodes.ShowCommand(this=word)
        if self._match_texts(SCOPED_SHOW):
            return self._parse_show_scoped(word)
        if self._match_text_seq("CURRENT"):
            return self._parse_show_current()
        if self._match_text_seq("CREATE"):
            if self._curr and self._curr.text.upper() in ("CATALOG", "DATABASE", "FUNCTION", "MODEL",
                                                          "MATERIALIZED", "CONNECTION"):
                self._unsupported(f"SHOW CREATE {self._curr.text.upper()}", token)
            if not self._match_set((TokenType.TABLE, TokenType.VIEW)):
                self._unexpected("TABLE or VIEW after SHOW CREATE")
            view = self._prev.token_type == TokenType.VIEW or None
            name = self._parse_object_name("a view name" if view else "a table name")
            return nodes.ShowCreateCommand(this=name, view=view)
        if self._match_text_seq("ERRORS"):
            self._expect(TokenType.FOR, "FOR and a table name")
            table = self._parse_object_name()
            limit = self._parse_int_literal("a row count") if self._match(TokenType.LIMIT) else None
            return nodes.ShowErrorsCommand(this=table, limit=limit)
        if word in UNSUPPORTED_SHOW:
            self._unsupported(f"SHOW {word}", token)
        hint = suggest(word, FOLLOW_KEYWORDS["SHOW"]) if word else None
        self._unexpected_with_hint("TABLES, VIEWS, FUNCTIONS, JOBS, CATALOGS, DATABASES, COLUMNS, CURRENT, CREATE or "
                                   "ERRORS", hint)

    def _parse_show_jobs(self) -> nodes.ShowCommand:
        """`SHOW JOBS [[NOT] LIKE 'pattern']`, the pattern matched against the job's name; jobs belong to the
        session, not to a database, so FROM or IN is refused with that reason."""
        if self._curr and self._curr.token_type in (TokenType.FROM, TokenType.IN):
            self._fail(f"SHOW JOBS takes no {self._curr.text.upper()}: a job belongs to no database", self._curr,
                       hint="SHOW JOBS LIKE 'insert%' lists the jobs whose names match")
        negated = self._match(TokenType.NOT) or None
        like = None
        if self._match_set((TokenType.LIKE, TokenType.ILIKE)):
            like = self._parse_string_literal("a pattern in quotes: LIKE 'insert%'")
        elif negated:
            self._unexpected("LIKE after NOT")
        return self.expression(nodes.ShowCommand(this="JOBS", like=like, negated=negated))

    def _parse_describe_command(self) -> exp.Expr:
        if self._curr and self._curr.text.upper() == "JOB" and self._next and self._next.token_type == TokenType.STRING:
            self._advance()
            return nodes.DescribeJobCommand(this=self._parse_string_literal("the job id in quotes"))
        if self._curr and self._curr.text.upper() == "FUNCTION" and self._next:
            self._advance()
            extended = self._match_text_seq("EXTENDED") or None
            return nodes.DescribeFunctionCommand(this=self._parse_object_name("a function name"), extended=extended)
        if self._curr and self._curr.text.upper() == "CATALOG" and self._next:
            self._advance()
            return self._parse_describe_catalog()
        if self._curr and self._curr.text.upper() in ("DATABASE", "MODEL", "CONNECTION") and self._next \
                and self._next.token_type != TokenType.SEMICOLON:
            self._unsupported(f"DESCRIBE {self._curr.text.upper()}", self._curr)
        if self._match_text_seq("TOPIC"):
            topic = self._parse_topic()
            sample = self._parse_int_literal("a sample size") if self._match_text_seq("SAMPLE") else None
            options = self._parse_options() if self._match(TokenType.WITH) else None
            return nodes.DescribeTopicCommand(this=topic, sample=sample, options=options)
        self._match_text_seq("EXTENDED")
        return nodes.DescribeCommand(this=self._parse_object_name())

    def _parse_topic(self) -> exp.Literal:
        if self._match(TokenType.STRING):
            return self.expression(exp.Literal.string(self._prev.text), self._prev)
        name = self._parse_object_name("a topic name as a string")
        return exp.Literal.string(name.sql())

    def _parse_print(self) -> nodes.PrintTopicCommand:
        topic = self._parse_topic()
        from_beginning = self._match_text_seq("FROM", "BEGINNING") or None
        limit = self._parse_int_literal("a row count") if self._match(TokenType.LIMIT) else None
        options = self._parse_options() if self._match(TokenType.WITH) else None
        return nodes.PrintTopicCommand(
            this=topic, from_beginning=from_beginning, limit=limit, options=options
        )

    def _parse_explain(self) -> nodes.ExplainCommand:
        details = None
        if self._match_text_seq("PLAN", "FOR"):
            pass
        elif self._curr and self._curr.text.upper() in EXPLAIN_DETAILS:
            details = []
            while self._match_texts(EXPLAIN_DETAILS):
                details.append(exp.var(self._prev.text.upper()))
                if not self._match(TokenType.COMMA):
                    break
        token = self._curr
        if not token:
            self._unexpected("a statement to explain")
        inner = self._parse_statement()
        if not isinstance(inner, (exp.Query, exp.Values, exp.Insert, nodes.StatementSetBlock)):
            self._fail("EXPLAIN takes a query, an INSERT or a statement set", token)
        return nodes.ExplainCommand(this=inner, details=details)

    def _parse_job_command(self, verb: str) -> exp.Expr:
        if not self._match_text_seq("JOB"):
            hint = suggest(self._curr.text, FOLLOW_KEYWORDS[verb]) if self._curr else None
            self._unexpected_with_hint(f"JOB after {verb}", hint)
        job_id = self._parse_string_literal("the job id in quotes")
        if verb == "RESUME":
            return nodes.ResumeJobCommand(this=job_id)
        savepoint = drain = None
        while self._match(TokenType.WITH):
            if self._match_text_seq("SAVEPOINT"):
                savepoint = True
            elif self._match_text_seq("DRAIN"):
                drain = True
            else:
                self._unexpected("SAVEPOINT or DRAIN")
        return nodes.StopJobCommand(this=job_id, savepoint=savepoint, drain=drain)

    SHELL_HANDLERS: t.ClassVar[dict[str, t.Callable[[t.Any], exp.Expr]]] = {
        "HELP": lambda self: self._parse_help(),
        "QUIT": lambda self: self._parse_quit(),
        "EXIT": lambda self: self._parse_quit(),
        "CLEAR": lambda self: self._parse_clear(),
        "SET": lambda self: self._parse_set_command(),
        "RESET": lambda self: self._parse_reset_command(),
        "SHOW": lambda self: self._parse_show(),
        "DESCRIBE": lambda self: self._parse_describe_command(),
        "DESC": lambda self: self._parse_describe_command(),
        "EXPLAIN": lambda self: self._parse_explain(),
        "STOP": lambda self: self._parse_job_command("STOP"),
        "RESUME": lambda self: self._parse_job_command("RESUME"),
        "PRINT": lambda self: self._parse_print(),
        "USE": lambda self: self._parse_use(),
    }
