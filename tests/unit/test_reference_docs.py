"""docs/reference/connectors.md and settings.md are what shell/reference.py writes from the declarations in the
code (connector and format options, settings), so a change to either side that is not carried to the other fails
here, with the command that brings them back together."""

from __future__ import annotations

from pathlib import Path

import pytest

from shell import reference
from shell.config import SETTINGS
from shell.connectors.registry import CONNECTORS, specs_for
from shell.formats.registry import FORMATS

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(reference.PAGES))
def test_the_committed_page_is_what_the_code_writes(name):
    committed = ROOT / name
    assert committed.is_file(), f"{name} is missing: run `make docs`"
    assert committed.read_text(encoding="utf-8") == reference.PAGES[name](), (
        f"{name} is out of date with the code: run `make docs` and commit the result"
    )


def test_make_docs_writes_every_page_and_then_nothing(tmp_path, capsys):
    assert reference.main([str(tmp_path)]) == 0
    for name, page in reference.PAGES.items():
        assert (tmp_path / name).read_text(encoding="utf-8") == page()
    assert reference.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"wrote {name}" for name in reference.PAGES]


def section(page: str, heading: str) -> str:
    start = page.index(heading + "\n")
    end = page.find("\n#", start + len(heading))
    return page[start : end if end >= 0 else len(page)]


@pytest.mark.parametrize("connector", list(CONNECTORS.values()), ids=list(CONNECTORS))
def test_every_connector_option_is_documented_with_a_meaning(connector):
    assert reference.summary(type(connector)), f"connector '{connector.name}': give its class a docstring"
    text = section(reference.connectors_page(), f"## `{connector.name}`")
    for spec in specs_for(connector):
        assert spec.description.strip(), f"option '{spec.key}' of '{connector.name}': declare its description"
        row = next((line for line in text.splitlines() if line.startswith(f"| `{spec.key}` |")), None)
        assert row is not None, spec.key
        assert ("| yes |" if spec.required else "| no |") in row
        if spec.default is not None:
            assert f"`{spec.default}`" in row
        for allowed in spec.allowed:
            assert f"`{allowed}`" in row


@pytest.mark.parametrize("fmt", list(FORMATS.values()), ids=list(FORMATS))
def test_every_format_option_is_documented_with_a_meaning(fmt):
    assert reference.summary(type(fmt)), f"format '{fmt.name}': give its class a docstring"
    text = section(reference.connectors_page(), f"### `{fmt.name}`")
    for spec in fmt.options:
        assert spec.description.strip(), f"option '{spec.key}' of format '{fmt.name}': declare its description"
        assert f"| `{spec.key}` |" in text, spec.key


def test_every_setting_is_documented_with_what_it_accepts():
    page = reference.settings_page()
    for key, spec in SETTINGS.items():
        assert spec.description.strip(), key
        row = next(line for line in page.splitlines() if line.startswith(f"| `{key}` |"))
        assert (f"`{spec.default}`" if spec.default is not None else "| — |") in row
    rows = {line.split("`")[1]: line for line in page.splitlines() if line.startswith("| `")}
    assert "| a positive integer |" in rows["sql-client.display.max-column-width"]
    assert "| one of none, fixed-delay, exponential-delay |" in rows["restart-strategy.type"]


def test_markdown_special_characters_stay_text():
    assert reference.prose("default <home>/errors/<table>") == "default &lt;home&gt;/errors/&lt;table&gt;"
    assert reference.cell("a | b\nc") == "a \\| b c"
    assert reference.code('"') == '`"`' and reference.code("a`b") == "`` a`b ``" and reference.code("") == "(empty)"


def test_the_settings_page_says_what_set_does_with_a_key_that_is_not_one_of_ours():
    from shell.config import Settings
    from shell.errors import OptionError

    page = reference.settings_page()
    intro = " ".join(page.split("| key |")[0].split())
    settings = Settings()
    # a Flink key that has no effect here is taken, with a notice: the page must not say it is refused
    assert settings.set("pipeline.max-parallelism", "4") is not None
    assert "`pipeline.max-parallelism`" in intro and "accepted with a warning" in intro
    with pytest.raises(OptionError, match="unknown setting"):  # and any other key is refused
        settings.set("no.such.key", "1")
    assert "any other key is refused" in intro
