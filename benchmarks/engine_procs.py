"""Engine processes of the engine benchmark: start one, follow what it reports, measure its CPU, stop it.

Why it exists: benchmarks/engine.py runs streamshell (benchmarks/engine_streamshell.py, in .venv) and Flink
(benchmarks/engine_flink.py, in .venv-flink) as child processes, each in a session of its own, so that every
measurement starts a fresh JVM, the harness's own work stays out of the engine's process, and the CPU time of the
engine's whole process tree (JVM, Spark's Python workers, PyFlink's gateway) can be summed from /proc.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def say(event: str, **fields) -> None:
    """An engine process's event: one JSON object on a line of stdout (what `Engine` reads)."""
    print(json.dumps({"event": event, "t": time.time(), **fields}), flush=True)


def stop_requested() -> threading.Event:
    """Set once the harness writes `stop` on the engine process's stdin (or closes it)."""
    stopping = threading.Event()

    def watch_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stopping.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    return stopping
TICKS = os.sysconf("SC_CLK_TCK")


def _session(sid: int) -> list[tuple[int, list[str]]]:
    """(pid, /proc stat fields after the command) of the live processes of a session."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # state ppid pgrp session ...
            found.append((int(entry.name), fields))
    return found


class SessionCpu:
    """CPU seconds (user + system) spent by the processes of a session, sampled on a thread.

    Each process's own time is remembered at its last sample, so a process that ends (a Python worker, or one
    reaped outside the session) keeps what it spent; children's times (cutime) are not used, so nothing counts
    twice. What a process spends between its last sample and its end is lost (at most `every` seconds' worth).
    A session, not a process group: Spark's Python daemon puts its workers in a process group of their own.
    """

    def __init__(self, sid: int, every: float = 0.5):
        self.sid = sid
        self.every = every
        self.seen: dict[int, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.sample()
        threading.Thread(target=self._run, name=f"cpu-{sid}", daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def sample(self) -> float:
        with self._lock:
            for pid, fields in _session(self.sid):
                self.seen[pid] = max(self.seen.get(pid, 0), int(fields[11]) + int(fields[12]))  # utime + stime
            return sum(self.seen.values()) / TICKS

    def close(self) -> None:
        self._stop.set()


PAGE = os.sysconf("SC_PAGE_SIZE")


def session_memory(sid: int) -> dict[int, tuple[str, int]]:
    """Each live process of a session: (its command name, its resident bytes) (one look)."""
    found = {}
    for pid, fields in _session(sid):
        try:
            found[pid] = (Path(f"/proc/{pid}/comm").read_text().strip(), int(fields[21]) * PAGE)  # rss, in pages
        except OSError:
            continue  # it ended meanwhile
    return found


def jvm_live_heap(pid: int) -> int | None:
    """Bytes of a JVM's heap in use right after a full collection (`jcmd GC.run`, then `GC.heap_info`); None if
    jcmd cannot reach it. The collection is a pause of the measured JVM: sample it seldom."""
    try:
        subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=120, check=True)
        info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60,
                              check=True).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    used = [int(k) for k in re.findall(r"total \d+K, used (\d+)K", info)]  # the heap's lines, not Metaspace's
    return sum(used) * 1024 if used else None


def session_cpu(sid: int) -> float:
    """CPU seconds of a session's live processes and of the children they waited for (one look)."""
    return sum(sum(int(f) for f in fields[11:15]) for _, fields in _session(sid)) / TICKS  # utime..cstime


class Engine:
    """One engine process. Its stdout is one JSON event per line (see engine_streamshell.py, engine_flink.py)."""

    def __init__(self, name: str, command: list[str], log: Path, env: dict[str, str] | None = None,
                 state: Path | None = None):
        self.name = name
        self.log = log
        self.state = state  # the directory of the job's checkpoints and state files, if it keeps any
        self.events: list[dict] = []
        self.rows = 0  # input records the job has read so far
        self.moving_at = time.time()  # when the job's counters last changed
        self.failed: str | None = None
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(
            command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log.open("w"), text=True,
            start_new_session=True, env={**os.environ, **(env or {})},
        )  # fmt: skip
        # the engine's CPU: its process's session, or a detached job's own session once the process names it
        # (engine_streamshell: the process is then only the harness that follows the job)
        self._cpu = SessionCpu(self.proc.pid)
        self._sessions = [self.proc.pid]
        threading.Thread(target=self._read, name=f"{name}-events", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # something else printed on stdout
            with self._changed:
                self.events.append(event)
                kind = event.get("event")
                if kind == "submitted" and event.get("sid"):
                    self._cpu.close()
                    self._cpu = SessionCpu(int(event["sid"]))
                    self._sessions.append(int(event["sid"]))
                if kind == "batch":
                    self.rows += event["rows"]
                    if event["rows"]:
                        self.moving_at = event["t"]
                elif kind == "progress":
                    self.rows = event["rows"]
                    if event["moving"]:
                        self.moving_at = event["t"]
                elif kind == "failed":
                    self.failed = f"{event.get('status')}: {event.get('error')}"
                self._changed.notify_all()
        with self._changed:
            if self.failed is None:
                self.failed = f"the process ended (exit {self.proc.wait()}); see {self.log}"
            self._changed.notify_all()

    def event(self, kind: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = next((e for e in self.events if e.get("event") == kind), None)
                if found is not None:
                    return found
                if self.failed:
                    raise RuntimeError(f"{self.name}: {self.failed}")
                if not self._changed.wait(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"{self.name}: no '{kind}' after {timeout:.0f} s (see {self.log})")

    def wait_rows(self, target: int, timeout: float, quiet_s: float = 0.0) -> bool:
        """Until the job has read `target` records and its counters have not moved for `quiet_s`; False on
        timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.failed:
                raise RuntimeError(f"{self.name}: {self.failed}")
            if self.rows >= target and time.time() - self.moving_at >= quiet_s:
                return True
            time.sleep(0.1)
        return False

    def cpu(self) -> float:
        """CPU seconds of the engine's process tree (for a detached job, of the job's)."""
        return self._cpu.sample()

    def stop(self, timeout: float = 90) -> None:
        """Ask the engine to stop its job and end; after `timeout`, end what is left of its session."""
        self._cpu.close()
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("stop\n")
                self.proc.stdin.flush()
            except OSError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        for sid in self._sessions:  # what is left of the sessions: the engine's JVM and workers, a job's processes
            for pid, _ in _session(sid):
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass


def run_json(command: list[str], log: Path, timeout: float = 1800) -> dict:
    """Run a command of ours that prints one JSON object on stdout; that object."""
    with log.open("a") as err:
        done = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, stderr=err, text=True, timeout=timeout,
                              check=False)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... failed (exit {done.returncode}); see {log}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def start_json(command: list[str], log: Path) -> subprocess.Popen:
    """Start such a command in the background; `finish_json` collects its object."""
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=log.open("a"), text=True)


def finish_json(proc: subprocess.Popen, timeout: float = 1800) -> dict:
    out, _ = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{proc.args[:4]} ... failed (exit {proc.returncode})")
    return json.loads(out.strip().splitlines()[-1])
