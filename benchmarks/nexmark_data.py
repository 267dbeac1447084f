"""The Nexmark benchmark's input: N events of differential/nexmark_events.py's generator, in a Kafka topic.

Why it exists: benchmarks/nexmark.py writes its input once per run and every engine reads the same topic. The
events are the differential's (`python -m differential.nexmark_events`: Nexmark's generator rules, one person, 3
auctions and 46 bids per 50 events, hot auctions and bidders, prices round(10^(6u) * 100), out-of-order events at
most 2 s early, unique event times), N of them, `--gap` ms apart on average, each a JSON line of Nexmark's
`datagen` shape (`{"event_type": 0|1|2, "person": ..., "auction": ..., "bid": ...}`). They are written once to a
JSON-lines file (which the check reads, for the one query that is not compared between engines) and sent to a
2-partition topic keyed by their number. Plain Python, before any engine runs.

`end_marker` writes the one event the hand-written PySpark jobs read after the topic (from a second topic): an
event of no type (not a person, auction or bid) whose time is far ahead, so that Spark's watermark passes every
window, as a bounded source's end does in Flink and in streamshell.

    .venv/bin/python -m benchmarks.nexmark_data --topic T --events N [--gap MS] [--seed S] --file PATH
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

from differential.nexmark_events import DEFAULT_START, Generator

END_EVENT = {"event_type": 9, "person": None, "auction": None,
             "bid": {"dateTime": "2100-01-01 00:00:00.000"}}  # fmt: skip


def write(topic: str, events: int, gap_ms: int, seed: int, file: Path, bootstrap: str) -> dict:
    """Generate the events into `file`, then send the file's lines to `topic`."""
    from benchmarks.engine_data_python import send

    started = time.time()
    start = dt.datetime.strptime(DEFAULT_START, "%Y-%m-%d %H:%M:%S.%f")
    with file.open("w", encoding="utf-8", newline="\n") as out:
        for event in Generator(events, seed, start, gap_ms):
            out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    generated = time.time()

    def lines():
        with file.open(encoding="utf-8") as lines_in:
            for n, line in enumerate(lines_in):
                yield topic, str(n), line.rstrip("\n")

    sent = send(lines(), bootstrap)
    return {"events": sent, "generate_s": generated - started, "send_s": time.time() - generated,
            "bytes": file.stat().st_size}  # fmt: skip


def end_marker(topic: str, bootstrap: str) -> None:
    from benchmarks.engine_data_python import send

    send([(topic, "end", json.dumps(END_EVENT))], bootstrap)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.engine_data import KAFKA

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topic", required=True)
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--gap", type=int, default=10, help="mean ms between events (default 10)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--file", type=Path, required=True, help="the JSON-lines file the events are written to")
    args = parser.parse_args(argv)
    print(json.dumps(write(args.topic, args.events, args.gap, args.seed, args.file, KAFKA)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
