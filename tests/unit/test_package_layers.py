"""The packages and top-level modules of shell/ sit in layers (docs/development.md, "Layers"): each imports only
from its own layer and those below it, and none imports another in a circle.

Every import counts: at module level, inside functions, under `if TYPE_CHECKING:`, and `importlib.import_module`
of a literal name, so a lazy import does not hide a dependency on a layer above.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

SHELL = Path(__file__).resolve().parents[2] / "shell"

# Bottom to top. A unit is a package of shell/ (catalog) or a top-level module (config); `shell` is the package's
# own __init__.py. Units of one layer may import each other (test_no_import_cycles keeps that acyclic).
LAYERS: list[tuple[str, set[str]]] = [
    ("foundation", {"shell", "compiled_sql", "secrets", "errors", "files", "paths", "units", "values", "changes",
                    "results", "udf", "flink_keys", "flink_settings", "exitcodes", "commands", "suggestions",
                    "options", "restart", "logfiles", "stdio"}),
    ("catalog model", {"catalog"}),
    ("sql", {"sql"}),
    ("functions", {"functions"}),
    ("formats", {"formats"}),
    ("connectors", {"connectors"}),
    ("catalogs", {"catalogs"}),
    ("planner", {"planner"}),
    ("settings", {"config"}),
    ("engine", {"engine"}),
    ("inspect and jobs", {"inspect", "jobs"}),
    ("session", {"session"}),
    ("front ends", {"render", "script", "repl", "reference"}),
    ("entry points", {"cli", "gateway", "job_process", "__main__"}),
]
LAYER_OF = {unit: (index, name) for index, (name, units) in enumerate(LAYERS) for unit in units}


@dataclass(frozen=True)
class Import:
    path: Path  # the importing file
    line: int
    module: str  # the importing module, dotted
    target: str  # the imported module (or name), dotted

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(SHELL.parent)}:{self.line}"


def unit_of(module: str) -> str:
    """The layer unit of a dotted name under shell: its package or top-level module, or `shell` itself."""
    parts = module.split(".")
    if len(parts) < 2:
        return "shell"
    if (SHELL / parts[1]).is_dir() or (SHELL / f"{parts[1]}.py").is_file():
        return parts[1]
    return "shell"  # a name of shell/__init__.py, as in `from shell import __version__`


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SHELL.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[Import]:
    """Every import of a shell module in `path`, wherever it stands in the file."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # `from shell import compiled_sql` imports a module; `from shell.sql import nodes` imports from sql
            targets = [f"{base}.{alias.name}" for alias in node.names] if base == "shell" else [base]
        elif isinstance(node, ast.Call) and _is_import_call(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                targets = [first.value]
        found += [Import(path, node.lineno, module, t) for t in targets if t == "shell" or t.startswith("shell.")]
    return found


def _is_import_call(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("import_module", "__import__")


@functools.cache
def all_imports() -> tuple[Import, ...]:
    return tuple(found for path in sorted(SHELL.rglob("*.py")) for found in imports_of(path))


def test_every_package_and_top_level_module_has_a_layer():
    units = {p.name for p in SHELL.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    units |= {p.stem for p in SHELL.glob("*.py") if p.name != "__init__.py"} | {"shell"}
    missing = sorted(units - set(LAYER_OF))
    assert not missing, f"no layer for {', '.join(missing)}: add each to LAYERS here and to docs/development.md"
    gone = sorted(set(LAYER_OF) - units)
    assert not gone, f"LAYERS names {', '.join(gone)}, which shell/ no longer has"


def test_no_package_imports_from_a_layer_above_it():
    upward = []
    for found in all_imports():
        mine, theirs = unit_of(found.module), unit_of(found.target)
        if mine == theirs or mine not in LAYER_OF or theirs not in LAYER_OF:
            continue
        (my_index, my_layer), (their_index, their_layer) = LAYER_OF[mine], LAYER_OF[theirs]
        if their_index > my_index:
            upward.append(f"{found.where}: {found.module} imports {found.target}, but {mine} (layer '{my_layer}') "
                          f"may not import from {theirs} (layer '{their_layer}', above it)")
    assert not upward, "imports from a layer above (docs/development.md, \"Layers\"):\n" + "\n".join(upward)


def test_no_import_cycles():
    """Units of one layer may import each other, but not in a circle."""
    edges: dict[str, dict[str, Import]] = {}
    for found in all_imports():
        mine, theirs = unit_of(found.module), unit_of(found.target)
        if mine != theirs:
            edges.setdefault(mine, {}).setdefault(theirs, found)
    cycle = _find_cycle(edges)
    assert cycle is None, "an import cycle: " + "; ".join(
        f"{a} -> {b} ({edges[a][b].where})" for a, b in zip(cycle, cycle[1:])
    )


def _find_cycle(edges: dict[str, dict[str, Import]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(unit: str) -> list[str] | None:
        state[unit] = 1
        path.append(unit)
        for nxt in sorted(edges.get(unit, {})):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[unit] = 2
        return None

    for unit in sorted(edges):
        if unit not in state and (found := visit(unit)) is not None:
            return found
    return None


@pytest.mark.parametrize("source, target", [
    ("import shell.session\n", "shell.session"),
    ("def f():\n    from shell.session import Session\n", "shell.session"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from shell.planner import plan\n", "shell.planner"),
    ("from shell import config\n", "shell.config"),
    ("from ..planner import plan\n", "shell.planner"),
    ("import importlib\nimportlib.import_module('shell.jobs.job')\n", "shell.jobs.job"),
])  # fmt: skip
def test_the_imports_it_counts(monkeypatch, source, target):
    """Lazy and TYPE_CHECKING imports are seen, and relative ones are resolved (here as if in shell/sql/)."""
    path = SHELL / "sql" / "probe.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    [found] = imports_of(path)
    assert (found.module, found.target) == ("shell.sql.probe", target)
    assert LAYER_OF[unit_of(found.target)][0] > LAYER_OF[unit_of(found.module)][0]
