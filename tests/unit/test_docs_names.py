"""What the docs name exists in the code: every table option, connector, format, catalog type and setting named in
README.md and docs/*.md (in ```sql blocks and in `code` in the prose), and every statement they show.

Why it exists: the pages are written by hand beside code that moves; test_docs_sql.py only checks that the SQL
blocks parse. Here each `CREATE TABLE` and `CREATE CATALOG` of a block is checked against the declarations as the
shell checks it, each `'key' = ...` anywhere must be a declared option (of some connector, format or catalog) or
setting, each `SET 'key'` a setting, each complete statement in the prose must parse, and a statement named by
its keywords (`RESUME JOB`, `SHOW ERRORS`) must be one the parser knows. Two pages that list or count what the code
has are compared with it: docs/flink-users.md's connectors and formats, docs/differential.md's cases.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from shell.catalogs.kinds import COMMON as CATALOG_COMMON
from shell.catalogs.kinds import CatalogDef, catalog_types, validate_catalog
from shell.config import SETTINGS, check_setting
from shell.connectors.registry import CONNECTORS, ENV_REFERENCE, specs_for, validate_table
from shell.errors import StreamshellError
from shell.formats.registry import FORMATS, ROLES
from shell.sql import statements as st
from shell.sql.parse import parse_script

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"(`+)(.+?)\1", re.S)
OPTION = re.compile(r"'([A-Za-z][\w.#*-]*)'\s*=\s*(?:'([^']*)')?")
SET_KEY = re.compile(r"\bSET\s+'([^'=]+)", re.I)
PLACEHOLDERS = {"k", "key"}  # `SET 'key' = 'value'` shows the form, not a key
STATEMENT_HEAD = re.compile(r"^(SHOW|DESCRIBE|STOP|RESUME|PRINT|USE|DROP|ALTER|EXECUTE|BEGIN|RESET|HELP|QUIT|EXIT|CLEAR)\b")
MISTAKES_ON_PURPOSE = {"SELEC 1;"}  # reliability.md: the error a typo gets


def where(page: Path, text: str, offset: int) -> str:
    return f"{page.relative_to(ROOT)}:{text[:offset].count(chr(10)) + 1}"


def sql_blocks() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        found += [(where(page, text, m.start()), m.group(2)) for m in FENCE.finditer(text) if m.group(1) == "sql"]
    return found


def prose_spans() -> list[tuple[str, str]]:
    """(where, text) of every code span outside the fenced blocks."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # keeps the line numbers
        found += [(where(page, prose, m.start()), m.group(2)) for m in SPAN.finditer(prose)]
    return found


def code_spans() -> list[tuple[str, str]]:
    """Every code span of the prose and every ```sql block."""
    return prose_spans() + sql_blocks()


def known_option(key: str) -> bool:
    """A key some connector, format (in any of its spellings: `json.x`, `value.json.x`, `key.json.x`) or catalog
    type declares; a `#` in a declaration matches any column name."""
    columns = set(key.split("."))
    if any(spec.matches(key, columns) for connector in CONNECTORS.values() for spec in specs_for(connector)):
        return True
    role_keys = {k for keys in ROLES.values() for k in keys}
    prefixes = {p for keys in ROLES.values() for forms in keys.values() for p in forms}
    if key in role_keys:
        return True
    for fmt in FORMATS.values():
        if any(key == prefix.format(fmt.name) + spec.key for spec in fmt.options for prefix in prefixes):
            return True
    return any(spec.matches(key, set()) for kind in catalog_types().values()
               for spec in CATALOG_COMMON + kind.options)


def known_setting(key: str) -> bool:
    return key in SETTINGS or key.startswith("spark.")


def test_the_walk_finds_the_docs_code():
    spans = code_spans()
    assert len(spans) > 1000 and len(sql_blocks()) >= 20
    assert sum(1 for _, s in spans if OPTION.search(s)) > 50


def test_every_create_table_and_catalog_and_set_in_a_sql_block_is_valid(monkeypatch):
    checked = 0
    for place, block in sql_blocks():
        for name in ENV_REFERENCE.findall(block):  # `${env:NAME}` is read when the table is used: give it a value
            monkeypatch.setenv(name, "1")
        for statement in parse_script(block):
            try:
                if isinstance(statement, st.CreateTable) and statement.table.like is None and statement.query is None:
                    validate_table(statement.table)
                elif isinstance(statement, st.CreateCatalog):
                    validate_catalog(CatalogDef(statement.name, dict(statement.options)))
                elif isinstance(statement, st.Set) and statement.key is not None:
                    check_setting(statement.key, statement.value or "")
                else:
                    continue
            except StreamshellError as error:
                pytest.fail(f"{place}: {error.message}")
            checked += 1
    assert checked >= 20


def test_every_option_and_setting_named_in_the_docs_is_declared():
    unknown = []
    for place, span in code_spans():
        for match in SET_KEY.finditer(span):
            key = match.group(1).strip()
            if key not in PLACEHOLDERS and not known_setting(key):
                unknown.append(f"{place}: SET '{key}' is no setting")
        for match in OPTION.finditer(span):
            key, value = match.group(1), match.group(2)
            if key in PLACEHOLDERS:
                continue
            if not (known_option(key) or known_setting(key)):
                unknown.append(f"{place}: '{key}' is no option of a connector, format or catalog, nor a setting")
            elif key == "connector" and value is not None and value not in CONNECTORS:
                unknown.append(f"{place}: no connector '{value}'")
            elif key in {k for keys in ROLES.values() for k in keys} and value and value not in FORMATS:
                unknown.append(f"{place}: no format '{value}'")
            elif key == "type" and value and value not in catalog_types():
                unknown.append(f"{place}: no catalog type '{value}'")
    assert unknown == []


def test_every_statement_the_prose_shows_is_one_the_shell_knows():
    wrong = []
    for place, span in prose_spans():  # the blocks are parsed by test_docs_sql.py
        text = " ".join(span.split())
        if "..." in text or ".." in text or text in MISTAKES_ON_PURPOSE:
            continue
        complete = text.endswith(";") and re.match(r"[A-Z]{2,}\b", text)
        named = STATEMENT_HEAD.match(text) and re.fullmatch(r"[A-Z ]+(?: '[^']*')?", text)
        if not (complete or named):
            continue
        try:
            parse_script(text if text.endswith(";") else text + ";")
        except StreamshellError as error:
            message = error.message
            if named and not complete and "found end of statement" in message:
                continue  # `RESUME JOB`: the statement's name, its arguments left out
            if "is not supported" in message and message.startswith(text.rstrip(";")):
                continue  # `SHOW MODULES`, named as what is refused (docs/flink-users.md)
            wrong.append(f"{place}: `{text}`: {message}")
    assert wrong == []


def test_flink_users_names_every_connector_and_format():
    page = (ROOT / "docs" / "flink-users.md").read_text(encoding="utf-8")
    paragraph = page[page.index("**Connectors and formats.**"):].split("\n\n", 1)[0]
    named = set(re.findall(r"`([a-z-]+)`", paragraph))
    assert set(CONNECTORS) - named == set(), "docs/flink-users.md: name every connector"
    assert set(FORMATS) - named == set(), "docs/flink-users.md: name every format"


def test_differential_md_counts_and_lists_the_cases_there_are():
    page = (ROOT / "docs" / "differential.md").read_text(encoding="utf-8")
    folders = {p.name for p in (ROOT / "tests" / "differential" / "cases").iterdir() if (p / "case.json").is_file()}
    defaults = {name for name in folders
                if json.loads((ROOT / "tests/differential/cases" / name / "case.json").read_text()).get("default")}
    stated = re.search(r"There are (\d+) cases", page)
    assert stated and int(stated.group(1)) == len(folders)
    runs = re.search(r"`make test` runs the (\w+) whose `case.json` has `\"default\": true`: (.*?)\. ", page, re.S)
    numbers = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
    assert runs and numbers.get(runs.group(1)) == len(defaults)
    assert set(re.findall(r"`(\w+)`", runs.group(2))) == defaults

    table = page.split("\n## Cases\n", 1)[1].split("\n## ", 1)[0]
    listed, marked = set(), set()
    for row in (line for line in table.splitlines() if line.startswith("| `")):
        first = row.split("|")[1]
        names = re.findall(r"`(\w+)`", first)
        if " .. " in first:  # `nexmark_q0` .. `nexmark_q22`: every case between, by number
            low, high = (int(re.search(r"\d+$", n).group()) for n in names[:2])
            prefix = names[0].rstrip("0123456789")
            listed |= {f for f in folders if f.startswith(prefix) and low <= int(f[len(prefix):]) <= high}
            names = names[2:]
        listed |= set(names)
        marked |= set(re.findall(r"`(\w+)` \(default\)", first)) | set(re.findall(r"\(`(\w+)` default\)", first))
    assert listed == folders, f"not in the table: {sorted(folders - listed)}; not a case: {sorted(listed - folders)}"
    assert marked == defaults
