"""Syntax highlighting of our dialect: a pygments lexer and the colours the prompt and demo mode use.

Why it exists: pygments' SQL lexers do not know Flink's words (WATERMARK, METADATA, TUMBLE, DESCRIPTOR) nor our
quoting rules (backquoted identifiers, '' inside strings), and they colour demo annotations (`-- @wait ...`) like
any comment. The lexer never fails: text it does not understand is shown plain.
"""

from __future__ import annotations

from prompt_toolkit.styles.pygments import pygments_token_to_classname
from pygments.lexer import RegexLexer
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

from shell.repl.keywords import function_names, keywords, type_names


def _word(lexer: RegexLexer, match):  # noqa: ANN201 - a pygments callback
    text = match.group(0)
    upper = text.upper()
    rest = match.string[match.end() :].lstrip()
    if upper in function_names() and rest.startswith("("):
        token = Name.Function
    elif upper in type_names():
        token = Keyword.Type
    elif upper in keywords():
        token = Keyword
    else:
        token = Name
    yield match.start(), token, text


class StreamshellLexer(RegexLexer):
    """Flink-style SQL as streamshell reads it."""

    name = "Streamshell SQL"
    aliases = ["streamshell"]
    filenames: list[str] = []

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"--[ \t]*@\w+[^\r\n]*", Comment.Special),
            (r"--[^\r\n]*", Comment.Single),
            (r"/\*", Comment.Multiline, "comment"),
            (r"'", String.Single, "string"),
            (r"`", Name.Quoted, "quoted"),
            (r"(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", Number),
            (r"<>|<=|>=|!=|\|\||::|[-+*/%<>=]", Operator),
            (r"[;:()\[\],.]", Punctuation),
            (r"[A-Za-z_][\w$]*", _word),
            (r".", Text),
        ],
        "comment": [
            (r"/\*", Comment.Multiline, "#push"),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"[^/*]+", Comment.Multiline),
            (r"[/*]", Comment.Multiline),
        ],
        "string": [
            (r"''", String.Escape),
            (r"[^']+", String.Single),
            (r"'", String.Single, "#pop"),
        ],
        "quoted": [
            (r"``", Name.Quoted),
            (r"[^`]+", Name.Quoted),
            (r"`", Name.Quoted, "#pop"),
        ],
    }


# Readable on dark and light terminals (ANSI colours follow the terminal's palette), by token type.
PROMPT_COLOURS = {
    Keyword: "ansiblue bold",
    Keyword.Type: "ansicyan",
    Name.Function: "ansimagenta",
    Name.Quoted: "ansiyellow",
    String: "ansigreen",
    Number: "ansiyellow",
    Operator: "",
    Comment: "ansibrightblack italic",
    Comment.Special: "ansimagenta bold",
    Error: "ansired",
}

# The prompt's style classes, named as prompt_toolkit's PygmentsLexer names a token's class: from the token's full
# path, so String (Token.Literal.String) is 'pygments.literal.string', not 'pygments.string', which no token has.
PYGMENTS_STYLE = {pygments_token_to_classname(token): style for token, style in PROMPT_COLOURS.items()}

# The same colours for rich (demo mode shows statements with rich).
RICH_STYLE = {
    Keyword: "bold blue",
    Keyword.Type: "cyan",
    Name.Function: "magenta",
    Name.Quoted: "yellow",
    String: "green",
    Number: "yellow",
    Comment: "bright_black italic",
    Comment.Special: "bold magenta",
    Error: "red",
}


def rich_style_for(token) -> str:  # noqa: ANN001 - a pygments token type
    """The rich style of a token type (its nearest styled parent), '' for plain text."""
    while token is not None:
        if token in RICH_STYLE:
            return RICH_STYLE[token]
        token = token.parent
    return ""


def highlight_rich(sql: str):  # noqa: ANN201 - returns rich.text.Text
    """`sql` as a rich Text coloured by the lexer."""
    from rich.text import Text as RichText

    out = RichText()
    for token, value in StreamshellLexer().get_tokens(sql):
        out.append(value, style=rich_style_for(token) or None)
    out.rstrip()
    return out
