"""What one call of the keyed stage costs in Python, step by step, without Spark.

Why it exists: the changelog path's micro-batch time at 1M keys is mostly the keyed stage, and that is Spark's
state round trips plus this body. This measures the body alone, on the user count's shape: one upsert input,
a call that touches `--subs` sub-buckets of `--rows-per-sub` rows with `--changes` changes (at 1M keys, 16
buckets of 64 sub-buckets and ~2K changes per batch: ~55 sub-buckets of ~1K rows and ~130 changes per call).

    .venv/bin/python -m benchmarks.stage_body [--subs 55] [--rows-per-sub 1000] [--changes 130] [--calls 20]

Prints milliseconds per call for: decoding the touched sub-buckets, the step, splitting the new state by
sub-bucket, encoding it, and the output's conversion to pandas.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from shell.engine import keyed_stage as ks

ACCOUNT = "users__accountId"


def stage_spec() -> ks.StageSpec:
    schema = pa.schema([
        pa.field(ACCOUNT, pa.string()), pa.field(ks.W, pa.int32()), pa.field(ks.SRC, pa.int32()),
        pa.field(ks.KEY, pa.string()), pa.field(ks.SUB, pa.int32()), pa.field(ks.PK, pa.string()),
        pa.field(ks.POS, pa.int64()), pa.field(ks.H, pa.int64()),
    ])  # fmt: skip
    return ks.StageSpec((ks.InputSpec(ks.UPSERT, (ACCOUNT,)),), schema)


def changes(spec: ks.StageSpec, rng: np.random.Generator, subs: np.ndarray) -> pa.Table:
    n = len(subs)
    uid = [f"u{x}" for x in rng.integers(0, 1_000_000, n)]
    return pa.table({
        ACCOUNT: [f"a{x}" for x in rng.integers(0, 10_000, n)], ks.W: np.ones(n, np.int32),
        ks.SRC: np.zeros(n, np.int32), ks.KEY: uid, ks.SUB: subs.astype(np.int32), ks.PK: uid,
        ks.POS: np.arange(n), ks.H: rng.integers(0, 2**62, n),
    }, schema=spec.schema)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subs", type=int, default=55)
    parser.add_argument("--rows-per-sub", type=int, default=1000)
    parser.add_argument("--changes", type=int, default=130)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args(argv)

    spec = stage_spec()
    rng = np.random.default_rng(1)
    touched = list(range(args.subs))
    preload = changes(spec, rng, np.repeat(np.arange(args.subs), args.rows_per_sub))
    state = ks.step(spec, [spec.state_schema(0).empty_table()], preload).state
    blobs = {s: ks.encode(parts[0]) for s, parts in ks.by_sub_bucket(state, touched).items()}
    batch = changes(spec, rng, rng.integers(0, args.subs, args.changes))

    spent: dict[str, float] = {}

    def lap(name: str, since: float) -> float:
        now = time.perf_counter()
        spent[name] = spent.get(name, 0.0) + now - since
        return now

    for _ in range(args.calls):
        t = time.perf_counter()
        old = pa.concat_tables([ks.decode(blobs[s], spec.state_schema(0)) for s in touched])
        t = lap("decode", t)
        change = ks.step(spec, [old], batch)
        t = lap("step", t)
        parts = ks.by_sub_bucket(change.state, touched)
        t = lap("split", t)
        [ks.encode(p[0]) for p in parts.values()]
        t = lap("encode", t)
        change.output.to_pandas()
        lap("output", t)
    per_call = {name: seconds / args.calls * 1000 for name, seconds in spent.items()}
    print(f"{args.subs} sub-buckets of {args.rows_per_sub} rows, {args.changes} changes; ms per call: "
          + ", ".join(f"{name} {ms:.1f}" for name, ms in per_call.items())
          + f"; total {sum(per_call.values()):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
