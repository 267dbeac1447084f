"""Flink's dynamic table options: `/*+ OPTIONS('key' = 'value', ...) */` written after a table in a query or after
the target of an INSERT; that statement reads (or writes) the table with these options over its declared ones.

Why it exists: a Flink user changes per statement what differs from a table's declaration, most often where a
source starts reading (`scan.startup.mode`), without an ALTER TABLE or a second table. The options are checked as
ALTER TABLE ... SET checks them (the connector's declaration, the values), so a wrong one is refused where it is
written; the connector itself cannot change. The table's own definition in the catalog is left as it was.

sqlglot keeps the hint after a table as a comment on the table's node (or on its alias), without its `+`; so a
plain comment written exactly `/* OPTIONS(...) */` there is read as the hint too.
"""

from __future__ import annotations

import re
from dataclasses import replace

from sqlglot import exp

from shell.catalog.model import TableDef
from shell.connectors.registry import validate_table
from shell.errors import StreamshellError, UnsupportedFeatureError
from shell.sql.positions import at_name

OPENING = re.compile(r"^\s*\+?\s*OPTIONS\s*\(", re.IGNORECASE)  # a comment that starts an OPTIONS hint
HINT = re.compile(r"^\s*\+?\s*OPTIONS\s*\((?P<body>.*)\)\s*$", re.IGNORECASE | re.DOTALL)
PAIR = re.compile(r"\s*'(?P<key>(?:[^']|'')*)'\s*=\s*'(?P<value>(?:[^']|'')*)'\s*(?:,|$)")


def has_hint(table: exp.Table) -> bool:
    """Whether an OPTIONS hint is written after `table` (or its alias), read or not."""
    return any(OPENING.match(comment) for comment in hint_comments(table))


def hint_comments(table: exp.Table) -> list[str]:
    """The comments written after a table's name or after its alias: Flink writes the hint before the alias, and
    sqlglot prints it after (a view's stored text, a CTAS's job), where parsing the text again hangs it on the alias."""
    alias = table.args.get("alias")
    return [*(table.comments or ()), *((alias.comments or ()) if isinstance(alias, exp.Expr) else ())]


def written_options(table: exp.Table) -> dict[str, str] | None:
    """The options of the OPTIONS hint written after `table` (or its alias), or None when it has none."""
    for comment in hint_comments(table):
        match = HINT.match(comment)
        if match is None:
            if OPENING.match(comment):
                raise at_name(UnsupportedFeatureError(
                    f"the OPTIONS hint after '{table.name}' is not closed by ')'",
                    hint="write it as /*+ OPTIONS('key' = 'value', ...) */"), table)
            continue
        return _pairs(match.group("body"), table)
    return None


def _pairs(body: str, table: exp.Table) -> dict[str, str]:
    options: dict[str, str] = {}
    at = 0
    while at < len(body.rstrip()):
        pair = PAIR.match(body, at)
        if pair is None:
            raise at_name(UnsupportedFeatureError(
                f"cannot read the OPTIONS hint after '{table.name}' at: {body[at:].strip()[:40]}",
                hint="write each option as 'key' = 'value', the quotes included, separated by commas"), table)
        options[pair.group("key").replace("''", "'")] = pair.group("value").replace("''", "'")
        at = pair.end()
    if not options:
        raise at_name(UnsupportedFeatureError(f"the OPTIONS hint after '{table.name}' names no option",
                                              hint="write /*+ OPTIONS('key' = 'value') */ or remove it"), table)
    return options


def with_options(table: TableDef, options: dict[str, str], node: exp.Table) -> TableDef:
    """`table` with the hint's `options` over its own, checked as ALTER TABLE SET checks them; errors point at
    `node`, the table where the hint is written."""
    if any(key.lower() == "connector" for key in options):
        raise at_name(UnsupportedFeatureError(
            f"an OPTIONS hint cannot change the connector of '{table.name}'",
            hint="declare another table with that connector (CREATE TEMPORARY TABLE ... LIKE)"), node)
    hinted = replace(table, options={**table.options, **options})
    try:
        validate_table(hinted)
    except StreamshellError as error:
        raise at_name(type(error)(f"in the OPTIONS hint after '{node.name}': {error.message}", hint=error.hint), node) \
            from None
    return hinted


def hinted_target(table: TableDef, insert: exp.Expr | None) -> TableDef:
    """The target of an INSERT with the OPTIONS hint written after its name applied, if one is."""
    target = insert.this if isinstance(insert, exp.Insert) else None
    if isinstance(target, exp.Schema):
        target = target.this
    if not isinstance(target, exp.Table):
        return table
    options = written_options(target)
    return table if options is None else with_options(table, options, target)
