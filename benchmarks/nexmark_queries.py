"""The Nexmark queries the benchmark runs: Nexmark's own SQL as the differential cases hold it, over Kafka.

Why it exists: benchmarks/nexmark.py must run the same SQL text in streamshell and in Flink SQL, the SQL Nexmark
publishes, and check what each wrote. The differential cases `nexmark_q0` .. `nexmark_q22`
(tests/differential/cases, docs/differential.md) already hold it: Nexmark's `datagen` table with ROW columns and
a computed, watermarked `dateTime`, its `person`/`auction`/`bid` views, and each query as a bare SELECT. This
module takes each case as it is, with two changes:

* the `datagen` table reads a Kafka topic (`'scan.bounded.mode' = 'latest-offset'`, so the job ends when it has
  read it, and, as in Flink, every pending window then fires) instead of the case's file;
* the query is Nexmark's `INSERT INTO nexmark_qN`, a sink whose columns are the query's result columns as Flink
  resolves them (SINKS): a `kafka` topic (JSON) for an append-only result, an `upsert-kafka` topic keyed by the
  case's `key` (the columns the differential materializes the result by) for an updating one (UPSERT).

The queries are the differential's Nexmark cases: q0-q22 but q6, which Flink cannot run, and q13, which needs a
lookup join on a side input. q14 calls its user function, `count_char`, in Python on both engines.

PYSPARK holds the queries written by hand in PySpark (q0, q1, q2, q5, q7): the same topic read with a typed
`from_json`, Nexmark's views as DataFrame projections, Spark's window() structs; each writes JSON to a Kafka
topic as the SQL sinks do.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # the Flink side imports this module from .venv-flink, as a script's sibling
    sys.path.insert(0, str(REPO))

from differential.cases import load_cases  # noqa: E402  (standard library only: both virtualenvs import it)

# name -> (what it is, the sink's columns): the query's result columns as Flink 2.3 resolves them (NOT NULL and
# time attributes left out, VARCHAR(n) as STRING); the sink's key is the differential case's `key`
SINKS = {
    "q0": ("pass-through", "auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), extra STRING"),
    "q1": ("currency conversion", "auction BIGINT, bidder BIGINT, price DECIMAL(24, 3), `dateTime` TIMESTAMP(3), extra STRING"),
    "q2": ("selection", "auction BIGINT, price BIGINT"),
    "q3": ("local item suggestion: join", "name STRING, city STRING, state STRING, id BIGINT"),
    "q4": ("average price per category: join, aggregate of an aggregate", "category BIGINT, final BIGINT"),
    "q5": ("hot items: HOP window counts joined with their maximum", "auction BIGINT, num BIGINT"),
    "q7": ("highest bid: bids joined with their TUMBLE window's maximum",
           "auction BIGINT, price BIGINT, bidder BIGINT, `dateTime` TIMESTAMP(3), extra STRING"),
    "q8": ("new users: join of TUMBLE window aggregates", "id BIGINT, name STRING, starttime TIMESTAMP(3)"),
    "q9": ("winning bids: top-1 of a join",
           "id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), "
           "expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra STRING, auction BIGINT, bidder BIGINT, "
           "price BIGINT, bid_dateTime TIMESTAMP(3), bid_extra STRING"),
    "q10": ("log to a file system: DATE_FORMAT",
            "auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), extra STRING, dt STRING, hm STRING"),
    "q11": ("user sessions: SESSION window",
            "bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)"),
    "q12": ("processing-time windows", "bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)"),
    "q14": ("calculation with a Python function",
            "auction BIGINT, bidder BIGINT, price DECIMAL(24, 3), bidTimeType STRING, `dateTime` TIMESTAMP(3), "
            "extra STRING, c_counts BIGINT"),
    "q15": ("bidding statistics per day: COUNT DISTINCT with FILTER",
            "`day` STRING, total_bids BIGINT, rank1_bids BIGINT, rank2_bids BIGINT, rank3_bids BIGINT, "
            "total_bidders BIGINT, rank1_bidders BIGINT, rank2_bidders BIGINT, rank3_bidders BIGINT, "
            "total_auctions BIGINT, rank1_auctions BIGINT, rank2_auctions BIGINT, rank3_auctions BIGINT"),
    "q16": ("channel statistics per day",
            "channel STRING, `day` STRING, `minute` STRING, total_bids BIGINT, rank1_bids BIGINT, rank2_bids BIGINT, "
            "rank3_bids BIGINT, total_bidders BIGINT, rank1_bidders BIGINT, rank2_bidders BIGINT, "
            "rank3_bidders BIGINT, total_auctions BIGINT, rank1_auctions BIGINT, rank2_auctions BIGINT, "
            "rank3_auctions BIGINT"),
    "q17": ("auction statistics per day",
            "auction BIGINT, `day` STRING, total_bids BIGINT, rank1_bids BIGINT, rank2_bids BIGINT, rank3_bids BIGINT, "
            "min_price BIGINT, max_price BIGINT, avg_price BIGINT, sum_price BIGINT"),
    "q18": ("last bid per bidder and auction: top-1",
            "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` TIMESTAMP(3), extra STRING"),
    "q19": ("top-10 bids per auction",
            "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` TIMESTAMP(3), "
            "extra STRING, rank_number BIGINT"),
    "q20": ("expanded bids: join with the auction",
            "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, bid_dateTime TIMESTAMP(3), "
            "bid_extra STRING, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, "
            "auction_dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, auction_extra STRING"),
    "q21": ("channel id: REGEXP_EXTRACT", "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, channel_id STRING"),
    "q22": ("URL directories: SPLIT_INDEX",
            "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, dir1 STRING, dir2 STRING, dir3 STRING"),
}  # fmt: skip
QUERIES = list(SINKS)
# the queries whose result Flink plans as updating (aggregates, top-N): their sink is an `upsert-kafka` topic keyed by
# the case's key; the others' results are append-only (Flink refuses a primary key on a sink its query has no
# upsert key for), their sink a `kafka` topic
UPSERT = {"q4", "q9", "q15", "q16", "q17", "q18", "q19"}
WALL_CLOCK = {"q12"}  # processing-time windows: what fires depends on the wall clock (see benchmarks/nexmark_check.py)

_WITH = re.compile(r"\)\s*WITH\s*\((.*)\)\s*$", re.S)


def columns(query: str) -> list[str]:
    """The sink's column names, in order."""
    return [re.match(r"`?(\w+)`?", c.strip()).group(1) for c in SINKS[query][1].split(", ") if c.strip()]


def key(query: str) -> tuple[str, ...]:
    """The sink's key: the differential case's `key` for an updating result (empty: an append-only `kafka` sink)."""
    return _case(query).key if query in UPSERT else ()


def _case(query: str):  # noqa: ANN202 - a differential.cases.Case
    return load_cases([f"nexmark_{query}"])[0]


def kafka_source(topic: str, bootstrap: str) -> str:
    return (f"'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', "
            "'properties.group.id' = 'nexmark', 'scan.startup.mode' = 'earliest-offset', "
            "'scan.bounded.mode' = 'latest-offset', 'format' = 'json'")  # fmt: skip


def sink_table(query: str, topic: str | None, bootstrap: str) -> str:
    """`CREATE TABLE nexmark_qN`: an `upsert-kafka` topic keyed by the case's key, a `kafka` topic (JSON) without
    one, a `blackhole` table without a topic (the warm-up)."""
    cols, k = SINKS[query][1], key(query)
    if topic is None:
        return f"CREATE TABLE nexmark_{query} ({cols}) WITH ('connector' = 'blackhole')"
    server = f"'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}'"
    if k:
        pk = ", ".join(f"`{c}`" for c in k)
        return (f"CREATE TABLE nexmark_{query} ({cols}, PRIMARY KEY ({pk}) NOT ENFORCED) WITH ("
                f"'connector' = 'upsert-kafka', {server}, 'key.format' = 'json', 'value.format' = 'json')")  # fmt: skip
    return f"CREATE TABLE nexmark_{query} ({cols}) WITH ('connector' = 'kafka', {server}, 'format' = 'json')"


def statements(query: str, events: str, sink: str | None, bootstrap: str) -> list[str]:
    """The query's script, statement by statement: the case's SET and function statements, the `datagen` table
    over the `events` topic, the views, the sink over topic `sink` (None: a blackhole), `INSERT INTO` it."""
    case = _case(query)
    out = []
    for statement in case.ddl:
        statement = case.filled(statement)
        if re.match(r"(?is)^\s*CREATE\s+TABLE\s+datagen\b", statement):
            statement = _WITH.sub(lambda _: f") WITH ({kafka_source(events, bootstrap)})", statement)
        out.append(statement)
    out.append(sink_table(query, sink, bootstrap))
    out.append(f"INSERT INTO nexmark_{query}\n{case.filled(case.query)}")
    return out


# ---- PySpark, by hand ----------------------------------------------------------------------------------------

# the topic's JSON as the `datagen` table declares it, for from_json (timestamps 'yyyy-MM-dd HH:mm:ss.SSS')
EVENT_SCHEMA = (
    "event_type INT, "
    "person STRUCT<id: BIGINT, name: STRING, emailAddress: STRING, creditCard: STRING, city: STRING, state: STRING, "
    "dateTime: TIMESTAMP, extra: STRING>, "
    "auction STRUCT<id: BIGINT, itemName: STRING, description: STRING, initialBid: BIGINT, reserve: BIGINT, "
    "dateTime: TIMESTAMP, expires: TIMESTAMP, seller: BIGINT, category: BIGINT, extra: STRING>, "
    "bid STRUCT<auction: BIGINT, bidder: BIGINT, price: BIGINT, channel: STRING, url: STRING, dateTime: TIMESTAMP, "
    "extra: STRING>"
)
# Spark SQL over the view {bid} (bid.* with the event's `dateTime`, watermarked): Spark's window() structs,
# grouped and joined on directly
PYSPARK = {
    "q0": "SELECT auction, bidder, price, dateTime, extra FROM {bid}",
    "q1": "SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM {bid}",
    "q2": "SELECT auction, price FROM {bid} WHERE auction % 123 = 0",
    "q5": "SELECT a.auction, a.num FROM ("
          " SELECT auction, count(*) AS num, window FROM {bid} GROUP BY auction, window(dateTime, '10 seconds', '2 seconds')) a"
          " JOIN ("
          " SELECT max(num) AS maxn, window FROM ("
          "  SELECT count(*) AS num, window FROM {bid} GROUP BY auction, window(dateTime, '10 seconds', '2 seconds'))"
          " GROUP BY window) m"
          " ON a.window = m.window AND a.num >= m.maxn",
    "q7": "SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra FROM {bid} B JOIN ("
          " SELECT max(price) AS maxprice, window.end AS dateTime FROM {bid} GROUP BY window(dateTime, '10 seconds')) B1"
          " ON B.price = B1.maxprice"
          " WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL 10 SECONDS AND B1.dateTime",
}  # fmt: skip
