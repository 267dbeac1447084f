"""Build .build/compiled-sql/lib: sqlglot and the SQL front end's parsing modules compiled by mypyc.

Why it exists: see scripts/compile-sql, which runs this file in .venv-compile (where mypyc is).
Steps: copy the installed sqlglot and this repository's `shell` sources into a work directory,
compile sqlglot's modules that sqlglot's own compiled wheel compiles (every subclass of a compiled
class must be compiled too) plus ours in one mypyc build, then assemble the importable tree
(sqlglot's sources beside its extensions, our extensions alone: shell.sql's other modules come
from the repository) with a manifest of the sources, and swap it in whole.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ["STREAMSHELL_COMPILED_SQL"] = "off"  # this process only reads the sources

from shell.compiled_sql import MANIFEST, source_digests  # noqa: E402

# The modules sqlglot's compiled wheel (sqlglotc) compiles, by path under sqlglot/; None: every
# module of that subpackage.
SQLGLOT_MODULES = (
    "anonymize.py", "errors.py", "generator.py", "helper.py", "lineage.py", "parser.py", "serde.py",
    "time.py", "tokenizer_core.py", "trie.py",
)
SQLGLOT_SUBPACKAGES = {
    "expressions": None,
    "generators": None,
    "parsers": None,
    "optimizer": (
        "scope.py", "resolver.py", "isolate_table_selects.py", "normalize_identifiers.py", "qualify.py",
        "qualify_tables.py", "qualify_columns.py", "simplify.py", "annotate_types.py",
        "canonicalize_internal_names.py",
    ),
    "executor": ("table.py",),
}
# Ours: the tokenizer core, the splitter, the grammar chain and what it builds (nodes, printer), and
# parse.py, which turns each statement's tokens into a statement (with positions.py and fragments.py).
SHELL_SQL_MODULES = (
    "nodes.py", "printer.py", "scanner.py", "split.py", "grammar_errors.py", "grammar_base.py",
    "grammar_ddl.py", "grammar_shell.py", "grammar.py", "positions.py", "fragments.py", "parse.py",
)


def sqlglot_sources(src: Path) -> list[Path]:
    paths = [src / "sqlglot" / name for name in SQLGLOT_MODULES]
    for subpackage, names in SQLGLOT_SUBPACKAGES.items():
        folder = src / "sqlglot" / subpackage
        if names is None:
            names = sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")
        paths += [folder / name for name in names]
    return paths


def copy_sources(sqlglot_dir: Path, src: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    shutil.copytree(sqlglot_dir, src / "sqlglot", ignore=ignore)
    shutil.copytree(REPO / "shell", src / "shell", ignore=ignore)


def compile_all(work: Path, sources: list[Path], jobs: int) -> Path:
    """Run mypyc and the C compiler; return the directory holding the built extensions."""
    from mypyc.build import mypycify
    from setuptools import setup

    os.environ["MYPYPATH"] = str(work / "src")
    out = work / "out"
    previous = Path.cwd()
    os.chdir(work)  # mypyc writes its C files under ./build
    try:
        setup(
            name="streamshell-compiled-sql",
            packages=[],
            script_args=["build_ext", "--build-lib", str(out), "--parallel", str(jobs)],
            ext_modules=mypycify(
                [str(p) for p in sources] + ["--follow-imports=silent", "--ignore-missing-imports"],
                opt_level="2", debug_level="0", separate=True,
            ),
        )
    finally:
        os.chdir(previous)
    return out


def assemble(src: Path, out: Path, target: Path, sqlglot_dir: Path) -> None:
    staging = target.with_name(target.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(src / "sqlglot", staging / "sqlglot")
    for extension in out.rglob("*.so"):
        destination = staging / extension.relative_to(out)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(extension, destination)
    manifest = {
        "cache_tag": sys.implementation.cache_tag,
        "sources": source_digests(src / "shell"),
        "sqlglot": str(sqlglot_dir),
        "built": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sqlglot", required=True, type=Path, help="the installed sqlglot package directory")
    parser.add_argument("--build-dir", type=Path, default=REPO / ".build" / "compiled-sql")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)

    started = time.monotonic()
    work = args.build_dir / "work"
    shutil.rmtree(work, ignore_errors=True)
    copy_sources(args.sqlglot, work / "src")
    sources = sqlglot_sources(work / "src") + [work / "src" / "shell" / "sql" / m for m in SHELL_SQL_MODULES]
    out = compile_all(work, sources, args.jobs)
    assemble(work / "src", out, args.build_dir / "lib", args.sqlglot)
    shutil.rmtree(work, ignore_errors=True)
    minutes = (time.monotonic() - started) / 60
    print(f"compile-sql: built {len(sources)} modules into {args.build_dir / 'lib'} in {minutes:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
