"""Run differential cases on both engines and compare their final results.

Why it exists: the pytest module and a person at a terminal need the same three steps: Flink's result for a case
(from PyFlink in .venv-flink, cached, since a JVM start and a job cost seconds and Flink's answer only changes
when the case does), streamshell's result (its CLI, exactly as a user runs it), and a diff a person can read.
Runs in streamshell's .venv; imports nothing of the `shell` package either (it drives the CLI).

    .venv/bin/python -m differential.compare [--all | CASE ...] [--flink-only] [--refresh] [--show]

Flink's results are cached in `${STREAMSHELL_CACHE:-~/.cache/streamshell}/differential/<case>-<hash>.json`; the
hash covers every file of the case, the runner, `cases.py` and the PyFlink version stamp, so editing a case (or
the runner, or moving to another Flink) runs Flink again for that case only. A failure is never cached.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from differential.cases import (
    OPS,
    REPO,
    Case,
    CaseError,
    duplicate_keys,
    load_cases,
    materialize,
    normalize_row,
    row_text,
    sort_rows,
)

DIFFERENTIAL = REPO / "differential"
FLINK_VENV = Path(os.environ.get("FLINK_VENV") or REPO / ".venv-flink")
FLINK_STAMP = FLINK_VENV / ".flink-stamp"
RUNNER = DIFFERENTIAL / "flink_runner.py"
STREAMSHELL = REPO / ".venv" / "bin" / "streamshell"
FLINK_TIMEOUT = float(os.environ.get("STREAMSHELL_DIFFERENTIAL_FLINK_TIMEOUT", 1800))
STREAMSHELL_TIMEOUT = float(os.environ.get("STREAMSHELL_DIFFERENTIAL_TIMEOUT", 600))


class FlinkUnavailable(RuntimeError):
    """.venv-flink is missing, or the runner itself broke (not one case: the whole run)."""


@dataclass
class Outcome:
    """One engine's answer for one case: final rows, or an error."""

    rows: list[dict] | None = None
    error: str | None = None
    anomalies: list[str] = field(default_factory=list)  # changes that did not apply cleanly
    changes: int = 0
    seconds: float = 0.0
    cached: bool = False
    log: str = ""  # streamshell's stderr (its tail is shown on failure)

    @property
    def first_error_line(self) -> str:
        lines = [line for line in (self.error or "").splitlines() if line.strip()]
        return lines[0] if lines else ""


def cache_dir() -> Path:
    base = os.environ.get("STREAMSHELL_CACHE") or Path.home() / ".cache" / "streamshell"
    return Path(base) / "differential"


def flink_stamp() -> bytes:
    return FLINK_STAMP.read_bytes() if FLINK_STAMP.is_file() else b""


def cache_file(case: Case) -> Path:
    digest = case.digest(RUNNER.read_bytes(), (DIFFERENTIAL / "cases.py").read_bytes(), flink_stamp())
    return cache_dir() / f"{case.name}-{digest[:16]}.json"


# --- Flink -------------------------------------------------------------------------------------------------------


def flink_results(cases: list[Case], refresh: bool = False) -> dict[str, Outcome]:
    """Flink's final rows for every case: from the cache, else from one runner process for all missing cases."""
    results: dict[str, Outcome] = {}
    missing: list[Case] = []
    for case in cases:
        path = cache_file(case)
        if not refresh and path.is_file():
            data = json.loads(path.read_text())
            results[case.name] = Outcome(rows=data["rows"], changes=data.get("changes", 0), cached=True)
        else:
            missing.append(case)
    if missing:
        results.update(_run_flink(missing))
    return {c.name: results[c.name] for c in cases}


def _run_flink(cases: list[Case]) -> dict[str, Outcome]:
    python = FLINK_VENV / "bin" / "python"
    if not (python.is_file() and FLINK_STAMP.is_file()):
        raise FlinkUnavailable(f"{FLINK_VENV} is missing or incomplete: run `make setup-flink` (scripts/flink-venv)")
    cache_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flink-runner-") as tmp:
        out = Path(tmp) / "out.json"
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [str(python), str(RUNNER), "--details", "--out", str(out), *[str(c.folder) for c in cases]],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=FLINK_TIMEOUT,
                env={**os.environ, "PYTHONPATH": ""},
            )
        except subprocess.TimeoutExpired as e:
            raise FlinkUnavailable(f"the Flink runner did not finish in {FLINK_TIMEOUT:.0f} s") from e
        if not out.is_file():
            tail = "\n".join(proc.stderr.splitlines()[-30:])
            raise FlinkUnavailable(f"the Flink runner failed (exit {proc.returncode}):\n{tail}")
        data = json.loads(out.read_text())
    seconds = time.monotonic() - started
    results = {}
    for case in cases:
        value = data.get(case.name)
        if not isinstance(value, dict) or "rows" not in value:
            error = value.get("error") if isinstance(value, dict) else "no result from the runner"
            results[case.name] = Outcome(error=error)
            continue
        outcome = Outcome(rows=value["rows"], changes=value.get("changes", 0), seconds=value.get("seconds", 0.0))
        dup = duplicate_keys(outcome.rows, case.key)
        if dup:  # the case's `key` is wrong: say so rather than compare with a broken materialization
            outcome = Outcome(error=f"case.json's key {list(case.key)} is not unique in Flink's result: {dup[:3]}")
        else:
            payload = {"case": case.name, "rows": outcome.rows, "changes": outcome.changes}
            path = cache_file(case)
            for stale in path.parent.glob(f"{case.name}-*.json"):  # older versions of this case
                if stale.name != path.name and stale.stem.rsplit("-", 1)[0] == case.name:
                    stale.unlink(missing_ok=True)
            path.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
        results[case.name] = outcome
    print(f"differential: Flink ran {len(cases)} case(s) in {seconds:.0f} s", file=sys.stderr)
    return results


# --- streamshell -------------------------------------------------------------------------------------------------


def run_streamshell(case: Case, workdir: Path | None = None, timeout: float = STREAMSHELL_TIMEOUT) -> Outcome:
    """streamshell's final rows for a case: its CLI in script mode with --result-mode json, a fresh catalog."""
    if not STREAMSHELL.is_file():
        return Outcome(error=f"{STREAMSHELL} is missing: run `make setup`")
    own_tmp = None
    if workdir is None:
        own_tmp = tempfile.TemporaryDirectory(prefix=f"differential-{case.name}-")
        workdir = Path(own_tmp.name)
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        script = workdir / "case.sql"
        script.write_text(case.script_keeping_lines())
        home = workdir / "home"
        cmd = [str(STREAMSHELL), "--result-mode", "json", "--catalog", str(home), "-f", str(script)]
        env = {**os.environ, "STREAMSHELL_HOME": str(home)}
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as e:
            log = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            return Outcome(error=f"streamshell did not finish in {timeout:.0f} s", log=log)
        seconds = time.monotonic() - started
        if proc.returncode != 0:
            error = _streamshell_error(proc.stderr, proc.returncode).replace(str(script), _shown_path(case))
            return Outcome(error=error, log=proc.stderr, seconds=seconds)
        changes, bad = parse_json_changes(proc.stdout)
        if bad:
            return Outcome(error=f"streamshell wrote {len(bad)} stdout line(s) that are not changes: {bad[0]!r}",
                           log=proc.stderr, seconds=seconds)
        final = materialize(changes, case.key)
        return Outcome(rows=final.rows, anomalies=final.anomalies, changes=len(changes), seconds=seconds,
                       log=proc.stderr)
    finally:
        if own_tmp is not None:
            own_tmp.cleanup()


def _shown_path(case: Case) -> str:
    path = case.folder / "case.sql"
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def _streamshell_error(stderr: str, code: int) -> str:
    """The `file:line:col: message` block (and hint) streamshell printed, or the tail of stderr."""
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("[INFO]")]
    for i, line in enumerate(lines):
        if "case.sql:" in line:
            return "\n".join(lines[i : i + 4])
    return f"exit {code}: " + "\n".join(lines[-8:])


def parse_json_changes(stdout: str) -> tuple[list[tuple[str, dict]], list[str]]:
    """`{"op": "+I", "row": {...}}` lines -> [(op, row)], and the lines that are not such objects."""
    changes, bad = [], []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad.append(line)
            continue
        if not (isinstance(obj, dict) and obj.get("op") in OPS and isinstance(obj.get("row"), dict)):
            bad.append(line)
            continue
        changes.append((obj["op"], obj["row"]))
    return changes, bad


# --- comparing ---------------------------------------------------------------------------------------------------


@dataclass
class Comparison:
    equal: bool
    text: str  # empty when equal


def compare_rows(expected: list[dict], actual: list[dict], key: tuple[str, ...] = ()) -> Comparison:
    """Final rows compared as multisets (after normalizing both sides).

    The text lists what differs, one JSON row a line: `~` for a row of Flink's whose closest streamshell row
    (same `key`, else most equal columns) differs in some columns, with those columns; `-` for rows only Flink
    has, `+` for rows only streamshell has.
    """
    expected = sort_rows(normalize_row(r) for r in expected)
    actual = sort_rows(normalize_row(r) for r in actual)
    by_text = {row_text(r): r for r in [*actual, *expected]}  # rows with their columns in the query's order
    only_flink = Counter(row_text(r) for r in expected)
    only_flink.subtract(Counter(row_text(r) for r in actual))
    missing = [dict(by_text[t]) for t, n in only_flink.items() for _ in range(max(n, 0))]
    extra = [dict(by_text[t]) for t, n in only_flink.items() for _ in range(max(-n, 0))]
    if not missing and not extra:
        return Comparison(True, "")
    lines = [f"Flink has {len(expected)} row(s), streamshell {len(actual)}; "
             f"{len(missing)} of Flink's are not in streamshell's, {len(extra)} of streamshell's are not in Flink's."]
    exp_cols = list(dict.fromkeys(c for r in expected for c in r))
    act_cols = list(dict.fromkeys(c for r in actual for c in r))
    if expected and actual and sorted(exp_cols) != sorted(act_cols):
        lines.append(f"Columns differ: Flink {exp_cols}, streamshell {act_cols}.")
    for flink_row in list(missing):
        match = _closest(flink_row, extra, key)
        if match is None:
            continue
        missing.remove(flink_row)
        extra.remove(match)
        same = {c: v for c, v in flink_row.items() if match.get(c, object()) == v}
        ident = {c: flink_row[c] for c in key} if key else dict(list(same.items())[:3])
        diffs = [
            f"{c}: flink {json.dumps(flink_row.get(c), ensure_ascii=False)}, "
            f"streamshell {json.dumps(match.get(c), ensure_ascii=False)}"
            for c in dict.fromkeys([*flink_row, *match])
            if flink_row.get(c, "<absent>") != match.get(c, "<absent>")
        ]
        lines.append(f"~ {_show(ident)}  " + "; ".join(diffs))
    lines += [f"- {_show(r)}" for r in missing]
    lines += [f"+ {_show(r)}" for r in extra]
    return Comparison(False, "\n".join(lines))


def _show(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False)


def _closest(row: dict, candidates: list[dict], key: tuple[str, ...]) -> dict | None:
    """The candidate with the same key (if `key`), else the one sharing most values (at least half)."""
    if key:
        want = [row.get(c) for c in key]
        return next((c for c in candidates if [c.get(k) for k in key] == want), None)
    best, best_score = None, len(row) / 2
    for c in candidates:
        score = sum(1 for col, v in row.items() if c.get(col, object()) == v)
        if score >= best_score and (best is None or score > best[1]):
            best = (c, score)
    return best[0] if best else None


def check_case(case: Case, flink: Outcome, workdir: Path | None = None) -> tuple[bool, str, Outcome]:
    """(passed, message, streamshell's outcome) for one case whose Flink result is known."""
    if flink.error:
        return False, f"[{case.name}] Flink could not run this case (fix the case):\n{flink.error}", Outcome()
    ours = run_streamshell(case, workdir)
    if ours.error:
        tail = "\n".join(ours.log.splitlines()[-15:]) if ours.log and "case.sql:" not in ours.error else ""
        rest = "\n".join(ours.error.splitlines()[1:])
        msg = f"[{case.name}] streamshell failed: {ours.first_error_line}" + (f"\n{rest}" if rest else "")
        return False, msg + (f"\n--- stderr (tail) ---\n{tail}" if tail else ""), ours
    cmp = compare_rows(flink.rows or [], ours.rows or [], case.key)
    if cmp.equal:
        return True, "", ours
    notes = ""
    if ours.anomalies:
        notes = "\nstreamshell's changelog did not apply cleanly:\n  " + "\n  ".join(ours.anomalies[:5])
    return False, f"[{case.name}] results differ ({case.description})\n{cmp.text}{notes}", ours


# --- command line ------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m differential.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: the default set)")
    parser.add_argument("--all", action="store_true", help="every case")
    parser.add_argument("--flink-only", action="store_true", help="print Flink's rows; do not run streamshell")
    parser.add_argument("--refresh", action="store_true", help="ignore cached Flink results")
    parser.add_argument("--show", action="store_true", help="print each case's Flink rows")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.cases or None)
    except CaseError as e:
        parser.error(str(e))
    if not args.cases and not args.all:
        cases = [c for c in cases if c.default]
    try:
        flink = flink_results(cases, refresh=args.refresh)
    except FlinkUnavailable as e:
        print(f"differential: {e}", file=sys.stderr)
        return 2
    passed = failed = 0
    for case in cases:
        f = flink[case.name]
        if args.show or args.flink_only:
            print(f"== {case.name}: {case.description}")
            for row in f.rows or []:
                print("  " + json.dumps(row, ensure_ascii=False))
            if f.error:
                print(f"  ERROR: {f.error}")
        if args.flink_only:
            failed += bool(f.error)
            continue
        ok, message, ours = check_case(case, f)
        passed, failed = passed + ok, failed + (not ok)
        status = "PASS" if ok else "FAIL"
        print(f"{status} {case.name} ({ours.seconds:.0f} s)" + ("" if ok else f": {message.splitlines()[0]}"))
        if not ok:
            print("\n".join("    " + line for line in message.splitlines()[1:]))
    if not args.flink_only:
        print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
