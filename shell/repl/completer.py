"""Tab completion for the prompt: keywords, tables and views, columns, connectors and their options, SET keys.

Why it exists: it turns `sqlcontext.analyze` (what belongs at the cursor) into prompt-toolkit completions, reading
the live catalog, the connector registry and the settings table, so a table created a moment ago completes at once
and a new connector's options complete without changes here. Matching ignores case; keywords follow the case the
user types in.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from shell.catalog.model import TableDef, ViewDef
from shell.config import SETTINGS
from shell.connectors.registry import CONNECTORS, specs_for
from shell.repl import sqlcontext as sc
from shell.repl.keywords import function_names, keywords, statement_starters


class Candidate:
    """One possible completion: the text inserted, what the menu shows beside it, and its kind (for sorting)."""

    __slots__ = ("text", "meta", "rank")

    def __init__(self, text: str, meta: str = "", rank: int = 5):
        self.text, self.meta, self.rank = text, meta, rank


class SqlCompleter(Completer):
    def __init__(self, catalog):  # noqa: ANN001 - shell.catalog.store.Catalog
        self.catalog = catalog

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        try:
            ctx = sc.analyze(document.text_before_cursor, document.text_after_cursor)
            if complete_event.text_inserted and not (ctx.prefix or ctx.qualifier is not None or ctx.in_string):
                return  # while typing, a menu after every blank or comma would be noise; Tab still asks
            candidates = list(self.candidates(ctx))
        except Exception:  # noqa: BLE001 - completion must never break typing
            return
        yield from self._matching(ctx.prefix, candidates)

    # what fits the context -------------------------------------------------------------------------------------

    def candidates(self, ctx: sc.Context) -> Iterable[Candidate]:
        wants = ctx.wants
        if sc.STATEMENT in wants:
            yield from (Candidate(w, "statement", 1) for w in statement_starters())
        if sc.FOLLOW in wants:
            yield from (Candidate(w, "keyword", 1) for w in ctx.follow)
        if sc.COLUMN in wants:
            yield from self._columns(ctx)
        if sc.TABLE in wants:
            yield from (Candidate(n, "table", 2) for n in self.catalog.names(TableDef))
        if sc.VIEW in wants:
            yield from (Candidate(n, "view", 2) for n in self.catalog.names(ViewDef))
        if sc.FUNCTION in wants:
            yield from (Candidate(f, "function", 4) for f in sorted(function_names()))
        if sc.KEYWORD in wants:
            yield from (Candidate(k, "keyword", 3) for k in sorted(keywords()))
        if sc.SETTING in wants:
            for key, spec in SETTINGS.items():
                yield Candidate(f"'{key}'" if ctx.quote_settings else key, _short(spec.description), 1)
        if sc.CONNECTOR in wants:
            yield from (Candidate(name, "connector", 1) for name in sorted(CONNECTORS))
        if sc.OPTION_KEY in wants:
            yield from self._option_keys(ctx)
        if sc.OPTION_VALUE in wants:
            yield from self._option_values(ctx)

    def _columns(self, ctx: sc.Context) -> Iterable[Candidate]:
        if ctx.qualifier is not None:
            names = [ctx.references.get(ctx.qualifier.lower(), ctx.qualifier)]
        else:
            names = ctx.referenced_tables()
        for name in names:
            table = self.catalog.find(name)
            if isinstance(table, TableDef):
                for column in table.columns:
                    yield Candidate(column.name, f"{table.name} {column.data_type or 'computed'}".strip(), 0)

    def _option_keys(self, ctx: sc.Context) -> Iterable[Candidate]:
        table = self.catalog.find(ctx.altered_table) if ctx.altered_table else None
        options = table.options if isinstance(table, TableDef) else {}
        connector = CONNECTORS.get(ctx.connector or options.get("connector", ""))
        if connector is None:
            yield Candidate("connector", "one of: " + ", ".join(sorted(CONNECTORS)), 0)
            return
        columns = ctx.declared_columns or ([c.name for c in table.columns] if isinstance(table, TableDef) else [])
        used = ctx.used_keys | set(options)
        for spec in specs_for(connector):
            for key in _expand(spec.key, columns):
                if key not in used:
                    yield Candidate(key, _short(spec.description) or spec.type, 0 if spec.required else 1)
        if getattr(connector, "has_formats", False):
            for key, meta in _format_keys({**options, **ctx.options}):
                if key not in used:
                    yield Candidate(key, meta, 2)

    def _option_values(self, ctx: sc.Context) -> Iterable[Candidate]:
        connector = CONNECTORS.get(ctx.connector or "")
        if connector is None or ctx.option_key is None:
            return
        if ctx.option_key in FORMAT_KEYS and getattr(connector, "has_formats", False):
            yield from (Candidate(name, "format", 0) for name in _format_names())
            return
        spec = next((s for s in specs_for(connector) if s.matches(ctx.option_key, set(map(str.lower, ctx.declared_columns)))), None)
        if spec is None:
            return
        values = spec.allowed if spec.type == "enum" else ("true", "false") if spec.type == "bool" else ()
        for value in values:
            yield Candidate(value, "default" if value == spec.default else spec.type, 0)

    # matching --------------------------------------------------------------------------------------------------

    def _matching(self, prefix: str, candidates: list[Candidate]) -> Iterator[Completion]:
        lowered = prefix.lower()
        seen: set[str] = set()
        chosen = []
        for c in candidates:
            bare = c.text.strip("'").lower()
            if not (bare.startswith(lowered) or c.text.lower().startswith(lowered)) or c.text in seen:
                continue
            if c.text.lower() == lowered and c.rank >= 3:
                continue  # the word is already typed out
            seen.add(c.text)
            chosen.append(c)
        chosen.sort(key=lambda c: c.rank)  # stable: columns keep their table order, names come sorted
        lower_case = prefix.islower()
        for c in chosen:
            text = c.text.lower() if lower_case and c.meta in ("keyword", "statement") else c.text
            yield Completion(text, start_position=-len(prefix), display_meta=c.meta)


FORMAT_KEYS = {"format": ("{}.",), "value.format": ("value.{}.", "{}."), "key.format": ("key.{}.",)}


def _format_names() -> list[str]:
    try:
        from shell.formats.registry import FORMATS
    except Exception:  # noqa: BLE001 - formats are optional for completion
        return []
    return sorted(FORMATS)


def _format_keys(options: dict[str, str]) -> list[tuple[str, str]]:
    """For connectors that carry bytes: the keys naming formats, and the options of the formats named."""
    try:
        from shell.formats.registry import FORMATS
    except Exception:  # noqa: BLE001
        return []
    keys = [(k, "format: " + ", ".join(sorted(FORMATS))) for k in FORMAT_KEYS]
    for role_key, prefixes in FORMAT_KEYS.items():
        fmt = FORMATS.get(options.get(role_key, ""))
        if fmt is None:
            continue
        for prefix in prefixes[:1]:
            for spec in fmt.options:
                keys.append((prefix.format(fmt.name) + spec.key, _short(spec.description) or f"{fmt.name} option"))
    return keys


def _expand(pattern: str, columns: list[str]) -> list[str]:
    """`fields.#.kind` -> one key per declared column; `properties.*` -> `properties.` (the user goes on)."""
    if "#" in pattern:
        return [pattern.replace("#", column) for column in columns]
    if "*" in pattern:
        return [pattern.split("*")[0]]
    return [pattern]


def _short(text: str, width: int = 50) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
