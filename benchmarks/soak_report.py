"""The report of a night-long soak (benchmarks/engine_soak.py): figures, bounds, plots, from its soak.jsonl.

Why it exists: the soak writes every sample as it takes it, so a run of 8 hours that is stopped at 5 still has its
figures; this turns such a file, finished or not, into the report: per job and figure the first and the last hour
(medians of the minutes), the slope after the first hour, the bound the figure is held to and whether it held; an
hourly table; and a PNG plot per figure over time. A run shorter than 3 hours has thirds of its length in place of
hours, so that the first and the last window never overlap.

The bounds (the first hour is the jobs' warm-up: the JVM's heap and JIT, RocksDB's memtables and caches filling):

* RSS of the job's processes: after the first hour, grows by less than 5 % of the first hour's median per hour
  (least-squares slope over the samples after the first hour);
* the checkpoint folder on disk: the same slope bound, and the last hour's largest at most 1.5 times the first
  hour's largest (Spark's state store maintenance deletes the files of batches older than the retained ones);
* the micro-batches' duration (median of each minute) and the p99 latency (of each minute's probes): the last
  hour's median at most 1.5 times the first hour's (the machine's load is plotted beside them: at a fixed rate a
  job given less CPU falls behind, and that is not growth of its own).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "reliability.md"
IMAGES = REPO / "docs" / "images"
SECTION = "soak-night"
SLOPE_BOUND = 5.0  # % of the first hour's median per hour
RATIO_BOUND = 1.5

# key, what it is, unit, how it is bounded ("slope", "slope+max", "ratio"), plot file
FIGURES = [
    ("rss_mib", "RSS of the job's processes", "MiB", "slope", "soak-rss.png"),
    ("checkpoint_mib", "checkpoint folder on disk", "MiB", "slope+max", "soak-checkpoint.png"),
    ("batch_ms_p50", "micro-batch duration (median of the minute)", "ms", "ratio", "soak-batch.png"),
    ("p99_s", "p99 latency (the minute's probes)", "s", "ratio", "soak-latency.png"),
]
MACHINE_PLOT = "soak-machine.png"


def load(path: Path) -> list[dict]:
    """The records of a soak.jsonl; a last line cut short by an interruption is left out."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def first_at(path: Path) -> float:
    with path.open(encoding="utf-8") as f:
        return json.loads(f.readline())["at"]


def progress_line(samples: list[dict], host: dict) -> str:
    """One line per sample round, for the log of an unattended run."""
    parts = [f"{host['t'] / 60:6.1f} min load {host['load1']:.1f}"]
    for s in samples:
        part = f"{s['job']}: RSS {s['rss_mib']:,.0f} MiB"
        if s.get("checkpoint_mib") is not None:
            part += f", checkpoint {s['checkpoint_mib']:,.0f} MiB"
        if s.get("batch_ms_p50") is not None:
            part += f", {s['batches']} batches of {s['batch_ms_p50'] / 1000:.1f} s"
        if s.get("p99_s") is not None:
            part += f", p99 {s['p99_s']:.1f} s"
        parts.append(part)
    return " | ".join(parts)


def slope_per_hour(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, value) points, per hour."""
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return 3600 * sum((x - mx) * (y - my) for x, y in points) / den if den else None


class Run:
    """A soak's records, sorted out."""

    def __init__(self, records: list[dict]):
        self.records = records
        self.start = next((r for r in records if r["kind"] == "start"), None)
        if self.start is None:
            raise ValueError("not a soak's results: no start record")
        self.args = self.start["args"]
        self.jobs = [r for r in records if r["kind"] == "job"]
        self.samples: dict[str, list[dict]] = {}
        for r in records:
            if r["kind"] == "sample":
                self.samples.setdefault(r["job"], []).append(r)
        self.machine = [r for r in records if r["kind"] == "machine"]
        self.ends = {r["job"]: r for r in records if r["kind"] == "end"}
        self.verdicts = {r["job"]: r["result"] for r in records if r["kind"] == "verify"}
        self.failures = [r for r in records if r["kind"] == "failed"]
        self.done = next((r for r in records if r["kind"] == "done"), None)
        self.completed = self.done is not None and self.done.get("completed", True)  # ran its minutes, no failure
        self.length = max((s["t"] for ss in self.samples.values() for s in ss), default=0.0)
        self.window = 3600.0 if self.length >= 3 * 3600 else self.length / 3  # "hour" in the report

    @property
    def hours(self) -> bool:
        return self.window == 3600.0

    def window_name(self) -> str:
        return "hour" if self.hours else f"third ({self.window / 60:.1f} min)"

    def verified(self) -> bool:
        return bool(self.jobs) and all((self.verdicts.get(j["job"]) or {}).get("ok") for j in self.jobs)

    def series(self, job: str, key: str) -> list[tuple[float, float]]:
        return [(s["t"], s[key]) for s in self.samples.get(job, []) if s.get(key) is not None]

    def figure(self, job: str, key: str, bound: str) -> dict:
        points = self.series(job, key)
        first = [v for t, v in points if t <= self.window]
        last = [v for t, v in points if t >= self.length - self.window]
        out: dict = {"first": statistics.median(first) if first else None,
                     "last": statistics.median(last) if last else None,
                     "first_max": max(first, default=None), "last_max": max(last, default=None),
                     "slope": slope_per_hour([(t, v) for t, v in points if t >= self.window])}  # fmt: skip
        held: list[bool] = []
        if not first or not last:
            out["held"], out["why"] = None, "not enough samples"
            return out
        if bound in ("slope", "slope+max"):
            if out["slope"] is None or not out["first"]:
                out["held"], out["why"] = None, "not enough samples after the first window"
                return out
            out["slope_pct"] = 100 * out["slope"] / out["first"]
            held.append(out["slope_pct"] < SLOPE_BOUND)
        if bound == "slope+max":
            held.append(out["last_max"] <= RATIO_BOUND * out["first_max"])
        if bound == "ratio":
            held.append(out["last"] <= RATIO_BOUND * out["first"])
        out["held"] = all(held)
        return out


def bound_text(bound: str, window: str) -> str:
    after = f"after the first {window}"
    return {"slope": f"< {SLOPE_BOUND:g} %/h of the first {window}'s median, {after}",
            "slope+max": f"< {SLOPE_BOUND:g} %/h {after}; last {window}'s largest <= {RATIO_BOUND:g}x the first's",
            "ratio": f"last {window}'s median <= {RATIO_BOUND:g}x the first's"}[bound]  # fmt: skip


def _num(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.2f} s"
    return f"{value:,.0f} {unit}"


def summary_table(run: Run) -> str:
    window = "hour" if run.hours else "third"
    lines = [f"| job | figure | first {window} | last {window} | slope after the first {window} | bound | held |",
             "| --- | --- | ---: | ---: | ---: | --- | --- |"]
    for job in run.jobs:
        name = job["job"]
        for key, label, unit, bound, _ in FIGURES:
            if not run.series(name, key):
                continue
            f = run.figure(name, key, bound)
            first, last = _num(f["first"], unit), _num(f["last"], unit)
            if bound == "slope+max":
                first += f" (max {_num(f['first_max'], unit)})"
                last += f" (max {_num(f['last_max'], unit)})"
            slope = "-" if f["slope"] is None else f"{f['slope']:+,.{2 if unit == 's' else 1}f} {unit}/h"
            if f.get("slope_pct") is not None:
                slope += f" ({f['slope_pct']:+.1f} %/h)"
            held = {True: "yes", False: "**no**", None: f"- ({f.get('why')})"}[f["held"]]
            lines.append(f"| {name} | {label} | {first} | {last} | {slope} | {bound_text(bound, window)} | {held} |")
    return "\n".join(lines)


def hourly_table(run: Run) -> str:
    """Per job, each hour's medians (a run shorter than 3 hours: every sample)."""
    keys = [("rss_mib", "RSS MiB"), ("jvm_mib", "of it JVM"), ("python_mib", "Python"),
            ("checkpoint_mib", "checkpoint MiB"), ("batch_ms_p50", "batch ms"), ("p50_s", "p50 s"), ("p99_s", "p99 s")]  # fmt: skip
    step = 3600.0 if run.hours else None
    head = "| job | " + ("hour" if step else "minute") + " | " + " | ".join(k[1] for k in keys) + " | load |"
    lines = [head, "| --- | ---: |" + " ---: |" * (len(keys) + 1)]
    loads = [(m["t"], m["load1"]) for m in run.machine]
    for job in run.jobs:
        samples = run.samples.get(job["job"], [])
        if step:
            buckets: dict[int, list[dict]] = {}
            hours = max(1, int(run.length // step))
            for s in samples:  # the sample at the very end belongs to the last hour
                buckets.setdefault(min(int(s["t"] // step), hours - 1), []).append(s)
            rows = [(f"{b + 1}", ss, [v for t, v in loads if min(int(t // step), hours - 1) == b])
                    for b, ss in sorted(buckets.items())]
        else:
            rows = [(f"{s['t'] / 60:.1f}", [s], [v for t, v in loads if abs(t - s["t"]) < 1]) for s in samples]
        for label, ss, load in rows:
            cells = []
            for key, _ in keys:
                values = [s[key] for s in ss if s.get(key) is not None]
                value = statistics.median(values) if values else None
                cells.append("-" if value is None else f"{value:.2f}" if key.endswith("_s") else f"{value:,.0f}")
            load_cell = f"{statistics.median(load):.1f}" if load else "-"
            lines.append(f"| {job['job']} | {label} | " + " | ".join(cells) + f" | {load_cell} |")
    return "\n".join(lines)


def job_lines(run: Run) -> str:
    out = []
    for job in run.jobs:
        name = job["job"]
        end, verdict, samples = run.ends.get(name), run.verdicts.get(name), run.samples.get(name, [])
        line = f"- {name}: {job['preload']:,} preloaded changes read in {job['caught_up_s']:.0f} s; {len(samples)} samples"
        if len(samples) >= 2 and samples[-1]["t"] > samples[0]["t"]:
            cores = (samples[-1]["cpu_s"] - samples[0]["cpu_s"]) / (samples[-1]["t"] - samples[0]["t"])
            line += f"; the job's CPU {cores:.2f} cores"
        lat = (end or {}).get("latency")
        if lat:
            s = lambda v: "-" if v is None else f"{v:.2f} s"  # noqa: E731
            line += (f"; {lat['rate']:,.0f} changes/s held, {lat['arrived']:,} of {lat['probes']:,} probes arrived, "
                     f"over the run p50 {s(lat['p50_s'])}, p99 {s(lat['p99_s'])}, max {s(lat['max_s'])}")  # fmt: skip
        if end and not end.get("caught_up"):
            line += f"; **did not catch up** ({end.get('rows')} of {end.get('expected_rows')} rows read)"
        if verdict is None:
            line += "; sink not checked" + (" (the run did not end)" if run.done is None else "")
        elif verdict.get("ok"):
            line += "; sink = the result recomputed from the input topics"
        else:
            line += f"; **sink wrong**: {json.dumps(verdict)[:300]}"
        out.append(line)
    for failure in run.failures:
        out.append(f"- stopped early at minute {failure['t'] / 60:.1f}: {failure['error']}")
    return "\n".join(out)


def machine_line(run: Run) -> str:
    if not run.machine:
        return ""
    loads = [m["load1"] for m in run.machine]
    seconds = run.machine[-1]["t"] - run.machine[0]["t"]
    steal = (run.machine[-1]["steal_s"] - run.machine[0]["steal_s"]) / seconds if seconds > 0 else 0.0
    mem = min(m["mem_available_mib"] for m in run.machine)
    kafka = [m["kafka_mib"] for m in run.machine if m.get("kafka_mib")]
    harness = [m["harness_mib"] for m in run.machine if m.get("harness_mib")]
    text = (f"The machine: 1-minute load {min(loads):.1f}-{max(loads):.1f} (median {statistics.median(loads):.1f}); "
            f"{steal:.2f} cores' time stolen by the hypervisor; at least {mem:,.0f} MiB memory available")  # fmt: skip
    if kafka:
        text += f"; the Kafka broker's RSS {kafka[0]:,.0f} MiB at the start, {kafka[-1]:,.0f} MiB at the end"
    if harness:
        text += f"; this benchmark's own process {harness[0]:,.0f} -> {harness[-1]:,.0f} MiB"
    return text + "."


def plots(run: Run, folder: Path) -> list[Path]:
    """A PNG per figure over time (one line per job) and one of the machine's load, in `folder`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scale, unit = (3600.0, "hours") if run.length >= 3 * 3600 else (60.0, "minutes")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for key, label, fig_unit, bound, name in FIGURES:
        fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
        for job in run.jobs:
            points = run.series(job["job"], key)
            if not points:
                continue
            label_of = f"{job['job']}: p99" if key == "p99_s" else job["job"]
            color = ax.plot([t / scale for t, _ in points], [v for _, v in points], label=label_of,
                            linewidth=1.2)[0].get_color()
            if key == "rss_mib":
                for part, style in (("jvm_mib", "--"), ("python_mib", ":")):
                    pts = run.series(job["job"], part)
                    if pts:
                        ax.plot([t / scale for t, _ in pts], [v for _, v in pts], style, linewidth=0.9, color=color,
                                label=f"{job['job']}: {'JVM' if part == 'jvm_mib' else 'Python workers'}")
            if key == "p99_s":
                pts = run.series(job["job"], "p50_s")
                if pts:
                    ax.plot([t / scale for t, _ in pts], [v for _, v in pts], ":", linewidth=0.9, color=color,
                            label=f"{job['job']}: p50")
        if run.window:
            ax.axvline(run.window / scale, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xlabel(f"{unit} since the rate started")
        ax.set_ylabel(fig_unit)
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        ax.set_title(f"{label}; bound: {bound_text(bound, 'hour' if run.hours else 'third')}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        fig.savefig(folder / name)
        plt.close(fig)
        written.append(folder / name)
    fig, ax = plt.subplots(figsize=(9, 3), dpi=100)
    if run.machine:
        ax.plot([m["t"] / scale for m in run.machine], [m["load1"] for m in run.machine], color="black", linewidth=1)
    ax.set_xlabel(f"{unit} since the rate started")
    ax.set_ylabel("1-minute load")
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    ax.set_title(f"the machine's load ({run.start['machine']})", fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / MACHINE_PLOT)
    plt.close(fig)
    written.append(folder / MACHINE_PLOT)
    return written


def body(run: Run, image_dir: str) -> str:
    a = run.args
    argv = [x for x in run.start.get("argv", []) if x != "--write"]
    command = " ".join([".venv/bin/python -m benchmarks.engine_soak", *argv])
    started = dt.datetime.fromtimestamp(run.start["at"], dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    state = (f"sampled for {run.length / 60:.3g} of the {a['minutes']:g} minutes it held the rate" if run.completed
             else f"**interrupted**: samples for {run.length / 60:.3g} of {a['minutes']:g} minutes")
    held = [f["held"] for j in run.jobs for key, _, _, bound, _ in FIGURES if run.series(j["job"], key)
            for f in [run.figure(j["job"], key, bound)]]  # fmt: skip
    verdict = ("every bound held" if held and all(h is True for h in held)
               else f"{sum(h is False for h in held)} of {len(held)} bounds not held"
               + (f", {sum(h is None for h in held)} not decided" if any(h is None for h in held) else ""))
    images = "\n".join(f"![{label}]({image_dir}/{name})" for _, label, _, _, name in FIGURES) + \
        f"\n![the machine's load]({image_dir}/{MACHINE_PLOT})"
    return f"""Measured with `{command}` (started {started}, at {run.start.get('commit', '?')}), {run.start['machine']};
{state}: {', '.join(j['job'] for j in run.jobs)}, each a detached job on its own topics with {a['keys']:,} users
preloaded, fed {a['rate']:,} changes/s, sampled every {a['every']:g} s. {verdict.capitalize()}.

{summary_table(run)}

{job_lines(run)}

{machine_line(run)}

{hourly_table(run)}

{images}
"""


def report(path: Path, folder: Path, write: bool) -> int:
    """Print the report of `path`, plots into `folder`; with `write`, into docs (a finished, verified run only)."""
    try:
        run = Run(load(path))
    except (OSError, ValueError) as exc:
        print(f"no report: {path}: {exc}", file=sys.stderr)
        return 1
    written = plots(run, folder)
    print("\n" + body(run, str(folder)))
    print("plots: " + ", ".join(str(p) for p in written), flush=True)
    ok = run.completed and run.verified()
    if not ok:
        print("the run did not end with every job's sink found right: " + ("nothing written to docs" if write else
              "its figures are not a result"), file=sys.stderr)  # fmt: skip
        return 1 if (write or run.done is not None) else 0
    if write:
        from benchmarks.report import write_section

        IMAGES.mkdir(parents=True, exist_ok=True)
        for p in written:
            shutil.copy(p, IMAGES / p.name)
        write_section(SECTION, body(run, "images"), DOC)
        print(f"wrote {DOC} ({SECTION} section) and {len(written)} plots into {IMAGES}")
    return 0
