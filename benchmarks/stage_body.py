"""What one call of the keyed stage costs in Python, step by step, without Spark.

Why it exists: the changelog path's micro-batch time at 1M keys is mostly the keyed stage, and that is Spark's
state round trips plus this body. This measures the body alone, on the shape of one of the engine benchmark's
pipelines: `count` (the user count: one upsert input) or `join` (the three-way LEFT JOIN: three upsert inputs
keyed by their primary key, a change in one of the three). A call touches `--subs` sub-buckets of
`--rows-per-sub` rows per input with `--changes` changes (at 1M keys, 16 buckets of 64 sub-buckets and ~2K
changes per batch: ~55 sub-buckets of ~1K rows and ~130 changes per call).

    .venv/bin/python -m benchmarks.stage_body [--pipeline count|join] [--subs 55] [--rows-per-sub 1000]
        [--changes 130] [--calls 20] [--profile]

Prints milliseconds per call for: decoding the touched sub-buckets, the step, splitting the new state by
sub-bucket, encoding it, and the output's conversion to pandas. `--profile` also prints cProfile's top entries
of the step.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np
import pyarrow as pa

from shell.engine import keyed_stage as ks

# the stage columns each input contributes, as engine/changelog.py names them
PIPELINES = {
    "count": (("users__accountId",),),
    "join": (("users__accountId", "users__uid"), ("ufcol__favoriteColor",), ("ufchz__favoriteCheese",)),
}
CONTROL = [(ks.W, pa.int32()), (ks.SRC, pa.int32()), (ks.KEY, pa.string()), (ks.SUB, pa.int32()),
           (ks.PK, pa.string()), (ks.POS, pa.int64())]  # fmt: skip


def stage_spec(pipeline: str) -> ks.StageSpec:
    inputs = PIPELINES[pipeline]
    payload = [pa.field(c, pa.string()) for columns in inputs for c in columns]
    schema = pa.schema(payload + [pa.field(n, t) for n, t in CONTROL])
    return ks.StageSpec(tuple(
        ks.InputSpec(ks.UPSERT, columns, "left" if i else "", 0, key_is_pk=True,
                     pk_column=next((c for c in columns if c.endswith("__uid")), ""))
        for i, columns in enumerate(inputs)
    ), schema)  # fmt: skip


def changes(spec: ks.StageSpec, rng: np.random.Generator, subs: np.ndarray, source: np.ndarray) -> pa.Table:
    """Rows of input `source[r]` for a user of sub-bucket `subs[r]` (the key's value does not pick it here)."""
    n = len(subs)
    uid = np.array([f"u{x}" for x in rng.integers(0, 1_000_000, n)], dtype=object)
    columns = {}
    for i, spec_input in enumerate(spec.inputs):
        for c in spec_input.columns:
            values = uid if c.endswith("uid") else np.array([f"v{x}" for x in rng.integers(0, 10_000, n)], dtype=object)
            columns[c] = pa.array(np.where(source == i, values, None), pa.string())
    return pa.table({
        **columns, ks.W: np.ones(n, np.int32), ks.SRC: source.astype(np.int32), ks.KEY: uid,
        ks.SUB: subs.astype(np.int32), ks.PK: uid, ks.POS: np.arange(n),
    }, schema=spec.schema)  # fmt: skip


def with_users(table: pa.Table, uids: pa.Array) -> pa.Table:
    for name in (ks.KEY, ks.PK):
        table = table.set_column(table.schema.get_field_index(name), name, uids)
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", choices=tuple(PIPELINES), default="count")
    parser.add_argument("--subs", type=int, default=55)
    parser.add_argument("--rows-per-sub", type=int, default=1000, help="per input")
    parser.add_argument("--changes", type=int, default=130)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top entries of the step")
    args = parser.parse_args(argv)

    spec = stage_spec(args.pipeline)
    inputs = len(spec.inputs)
    rng = np.random.default_rng(1)
    touched = list(range(args.subs))
    # every user in every input, as the join's preload puts them
    users = np.repeat(np.arange(args.subs), args.rows_per_sub)
    preload = changes(spec, rng, np.tile(users, inputs), np.repeat(np.arange(inputs), len(users)))
    uid = preload.column(ks.KEY).slice(0, len(users)).combine_chunks()
    preload = with_users(preload, pa.concat_arrays([uid] * inputs))  # the same users in every input
    empty = [spec.state_schema(i).empty_table() for i in range(inputs)]
    state = ks.step(spec, empty, preload).state
    blobs = {s: [ks.encode_part(spec, i, t) for i, t in enumerate(parts)]
             for s, parts in ks.by_sub_bucket(state, touched).items()}  # fmt: skip
    picked = rng.integers(0, len(users), args.changes)  # each change is to a user the state holds
    batch = changes(spec, rng, users[picked], rng.integers(0, inputs, args.changes))
    batch = with_users(batch, uid.take(pa.array(picked)))

    spent: dict[str, float] = {}
    profile = cProfile.Profile() if args.profile else None

    def lap(name: str, since: float) -> float:
        now = time.perf_counter()
        spent[name] = spent.get(name, 0.0) + now - since
        return now

    for _ in range(args.calls):
        t = time.perf_counter()
        old = [pa.concat_tables([ks.decode_part(spec, i, blobs[s][i], s) for s in touched]) for i in range(inputs)]
        t = lap("decode", t)
        if profile:
            profile.enable()
        change = ks.step(spec, old, batch)
        if profile:
            profile.disable()
        t = lap("step", t)
        parts = ks.by_sub_bucket(change.state, touched)
        t = lap("split", t)
        [ks.encode_part(spec, i, table) for tables in parts.values() for i, table in enumerate(tables)]
        t = lap("encode", t)
        change.output.to_pandas()
        lap("output", t)
    per_call = {name: seconds / args.calls * 1000 for name, seconds in spent.items()}
    print(f"{args.pipeline}: {args.subs} sub-buckets of {args.rows_per_sub} rows per input, {args.changes} changes, "
          f"{change.output.num_rows} output rows; ms per call: "
          + ", ".join(f"{name} {ms:.1f}" for name, ms in per_call.items())
          + f"; total {sum(per_call.values()):.1f}")
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
