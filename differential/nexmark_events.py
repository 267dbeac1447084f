"""A small, deterministic, Nexmark-shaped event file (JSON lines) for the differential Nexmark cases.

Why it exists: Nexmark's queries read one table, `datagen`, filled by Nexmark's own Flink source connector
(`'connector' = 'nexmark'`), which is Java, unbounded and random per run. A differential case needs a bounded
file that Flink's filesystem/json source and streamshell both read, so this module writes events with the
shape of Nexmark's generator (com.github.nexmark.flink.generator) from a seed, with the standard library only
(it runs in either virtualenv):

* events interleaved in Nexmark's proportions: per 50 events 1 person, 3 auctions, 46 bids (event n is a person
  when n % 50 == 0, an auction when it is 1..3, else a bid); person and auction ids count up from 1000;
* auctions' sellers and bids' auctions and bidders refer to persons and auctions of the file, most of them "hot"
  (the first id of the latest batch of HOT_BATCH ids: Nexmark uses batches of 100, far too many for a few
  thousand events), the others drawn from the active ones plus a small lead (an id that appears a little later
  in the file, as in Nexmark), never beyond the last id the file holds;
* event times a few ms apart (mean `--gap` ms), unique, so ORDER BY `dateTime` never ties; every
  OUT_OF_ORDER-th event on average is up to 2 s early, less than the 4 s of Nexmark's watermark, so none is late;
* auctions expire 1 ms to about 2 x (the time of the next `IN_FLIGHT_AUCTIONS` auctions) after their dateTime;
  categories 10..14; states AZ, CA, ID, OR, WA, WY and Nexmark's cities and names; prices
  round(10 ** (6 u) * 100); half of the bids on the channels Google, Facebook, Baidu, Apple (each with its own
  url), the others on one of CHANNELS `channel-i` with a url that mostly ends in `&channel_id=...`; short extra
  strings (Nexmark pads records to a few hundred bytes, which would only make the file bigger).

Each line is `{"event_type": 0|1|2, "person": {...}|null, "auction": {...}|null, "bid": {...}|null}` with
timestamps as `yyyy-MM-dd HH:mm:ss.SSS`. The default start time is shortly before midnight, so the events span
two days (Nexmark's queries q10 and q15-q17 group by DATE_FORMAT(`dateTime`, ...)).

    .venv/bin/python -m differential.nexmark_events [--events 3000] [--seed 1] [--gap 40] OUT.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from pathlib import Path

PERSON_PROPORTION, AUCTION_PROPORTION, BID_PROPORTION = 1, 3, 46
TOTAL_PROPORTION = PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION
FIRST_PERSON_ID = FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID, NUM_CATEGORIES = 10, 5
HOT_BATCH = 10  # Nexmark: 100
HOT_AUCTION_RATIO, HOT_SELLERS_RATIO, HOT_BIDDERS_RATIO = 2, 4, 4  # Nexmark's defaults: 1 - 1/ratio are hot
ID_LEAD = 10
IN_FLIGHT_AUCTIONS = 100
ACTIVE_PEOPLE = 1000
CHANNELS = 100  # Nexmark: 10,000
HOT_CHANNELS = ("Google", "Facebook", "Baidu", "Apple")
OUT_OF_ORDER = 20  # one event in this many comes early
MAX_EARLY_MS = 2000

STATES = "AZ,CA,ID,OR,WA,WY".split(",")
CITIES = "Phoenix,Los Angeles,San Francisco,Boise,Portland,Bend,Redmond,Seattle,Kent,Cheyenne".split(",")
FIRST_NAMES = "Peter,Paul,Luke,John,Saul,Vicky,Kate,Julie,Sarah,Deiter,Walter".split(",")
LAST_NAMES = "Shultz,Abrams,Spencer,White,Bartels,Walton,Smith,Jones,Noris".split(",")

DEFAULT_START = "2024-01-01 23:59:10.000"


def last_person(n: int) -> int:
    """The base-0 id of the latest person at event n (n's own id when n is a person)."""
    epoch, offset = divmod(n, TOTAL_PROPORTION)
    return epoch * PERSON_PROPORTION + min(offset, PERSON_PROPORTION - 1)


def last_auction(n: int) -> int:
    """The base-0 id of the latest auction at event n (n's own id when n is an auction); -1 before the first."""
    epoch, offset = divmod(n, TOTAL_PROPORTION)
    if offset < PERSON_PROPORTION:
        epoch, offset = epoch - 1, AUCTION_PROPORTION - 1
    elif offset >= PERSON_PROPORTION + AUCTION_PROPORTION:
        offset = AUCTION_PROPORTION - 1
    else:
        offset -= PERSON_PROPORTION
    return epoch * AUCTION_PROPORTION + offset


class Generator:
    def __init__(self, events: int, seed: int, start: dt.datetime, gap_ms: int) -> None:
        self.events, self.gap_ms = events, max(1, gap_ms)
        self.rng = random.Random(seed)
        self.start = start
        self.max_person = last_person(events - 1)  # the last ids the file will hold
        self.max_auction = last_auction(events - 1)
        self.hot_urls = [self.base_url() for _ in HOT_CHANNELS]
        self.channels = []
        for i in range(CHANNELS):
            url = self.base_url()
            if self.rng.randrange(10) > 0:
                url += f"&channel_id={java_abs(int32_reverse(i))}"
            self.channels.append((f"channel-{i}", url))
        self.used_ms: set[int] = set()

    # --- strings and numbers, the way Nexmark draws them ---------------------------------------------------------

    def string(self, max_length: int, special: str = " ") -> str:
        n = 3 + self.rng.randrange(max_length - 3)
        chars = (special if self.rng.randrange(13) == 0 else chr(97 + self.rng.randrange(26)) for _ in range(n))
        return "".join(chars).strip()

    def extra(self) -> str:
        n = self.rng.randrange(12)
        return "".join(chr(97 + self.rng.randrange(26)) for _ in range(n))

    def price(self) -> int:
        return round(10.0 ** (self.rng.random() * 6.0) * 100.0)

    def base_url(self) -> str:
        dirs = "/".join(self.string(5, "_") for _ in range(3))
        return f"https://www.nexmark.com/{dirs}/item.htm?query=1"

    # --- ids -------------------------------------------------------------------------------------------------

    def cold_person(self, n: int) -> int:
        people = last_person(n) + 1
        active = min(people, ACTIVE_PEOPLE)
        return min(people - active + self.rng.randrange(active + ID_LEAD), self.max_person)

    def cold_auction(self, n: int) -> int:
        last = max(last_auction(n), 0)
        low = max(last - IN_FLIGHT_AUCTIONS, 0)
        return min(low + self.rng.randrange(last - low + 1 + ID_LEAD), self.max_auction)

    # --- time ------------------------------------------------------------------------------------------------

    def event_ms(self, n: int, clock: int) -> int:
        """A unique event time: the clock, or now and then up to MAX_EARLY_MS earlier."""
        ms = clock
        if n > 0 and self.rng.randrange(OUT_OF_ORDER) == 0:
            ms = max(0, clock - 1 - self.rng.randrange(MAX_EARLY_MS))
        while ms in self.used_ms:
            ms += 1
        self.used_ms.add(ms)
        return ms

    def stamp(self, ms: int) -> str:
        t = self.start + dt.timedelta(milliseconds=ms)
        return t.strftime("%Y-%m-%d %H:%M:%S") + f".{t.microsecond // 1000:03d}"

    # --- events ----------------------------------------------------------------------------------------------

    def __iter__(self):
        clock = 0
        for n in range(self.events):
            clock += 1 + self.rng.randrange(2 * self.gap_ms - 1)
            while clock in self.used_ms:  # an early event took this ms
                clock += 1
            ms = self.event_ms(n, clock)
            offset = n % TOTAL_PROPORTION
            if offset < PERSON_PROPORTION:
                yield {"event_type": 0, "person": self.person(n, ms), "auction": None, "bid": None}
            elif offset < PERSON_PROPORTION + AUCTION_PROPORTION:
                yield {"event_type": 1, "person": None, "auction": self.auction(n, ms), "bid": None}
            else:
                yield {"event_type": 2, "person": None, "auction": None, "bid": self.bid(n, ms)}

    def person(self, n: int, ms: int) -> dict:
        rng = self.rng
        return {
            "id": FIRST_PERSON_ID + last_person(n),
            "name": f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
            "emailAddress": f"{self.string(7)}@{self.string(5)}.com",
            "creditCard": " ".join(f"{rng.randrange(10000):04d}" for _ in range(4)),
            "city": rng.choice(CITIES),
            "state": rng.choice(STATES),
            "dateTime": self.stamp(ms),
            "extra": self.extra(),
        }

    def auction(self, n: int, ms: int) -> dict:
        rng = self.rng
        if rng.randrange(HOT_SELLERS_RATIO) > 0:
            seller = last_person(n) // HOT_BATCH * HOT_BATCH
        else:
            seller = self.cold_person(n)
        initial = self.price()
        # Nexmark: an auction runs 1 ms to about twice the time until IN_FLIGHT_AUCTIONS more auctions exist.
        horizon = IN_FLIGHT_AUCTIONS * TOTAL_PROPORTION // AUCTION_PROPORTION * self.gap_ms
        return {
            "id": FIRST_AUCTION_ID + last_auction(n),
            "itemName": self.string(20),
            "description": self.string(60),
            "initialBid": initial,
            "reserve": initial + self.price(),
            "dateTime": self.stamp(ms),
            "expires": self.stamp(ms + 1 + rng.randrange(2 * horizon)),
            "seller": FIRST_PERSON_ID + seller,
            "category": FIRST_CATEGORY_ID + rng.randrange(NUM_CATEGORIES),
            "extra": self.extra(),
        }

    def bid(self, n: int, ms: int) -> dict:
        rng = self.rng
        if rng.randrange(HOT_AUCTION_RATIO) > 0:
            auction = last_auction(n) // HOT_BATCH * HOT_BATCH
        else:
            auction = self.cold_auction(n)
        if rng.randrange(HOT_BIDDERS_RATIO) > 0:  # the second of the batch: hot bidders are not hot sellers
            bidder = min(last_person(n) // HOT_BATCH * HOT_BATCH + 1, self.max_person)
        else:
            bidder = self.cold_person(n)
        price = self.price()
        if rng.randrange(2) > 0:
            i = rng.randrange(len(HOT_CHANNELS))
            channel, url = HOT_CHANNELS[i], self.hot_urls[i]
        else:
            channel, url = rng.choice(self.channels)
        return {
            "auction": FIRST_AUCTION_ID + auction,
            "bidder": FIRST_PERSON_ID + bidder,
            "price": price,
            "channel": channel,
            "url": url,
            "dateTime": self.stamp(ms),
            "extra": self.extra(),
        }


def int32_reverse(i: int) -> int:
    """Java's Integer.reverse: the 32 bits of i in reverse order, as a signed int."""
    r = int(f"{i & 0xFFFFFFFF:032b}"[::-1], 2)
    return r - (1 << 32) if r >= 1 << 31 else r


def java_abs(i: int) -> int:
    return i if i == -(1 << 31) else abs(i)  # Math.abs(Integer.MIN_VALUE) stays negative


def write_events(path: Path, events: int, seed: int, start: dt.datetime, gap_ms: int) -> int:
    """Write the events to `path`, one JSON object a line; return the number written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for event in Generator(events, seed, start, gap_ms):
            out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m differential.nexmark_events", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the JSON-lines file to write")
    parser.add_argument("--events", type=int, default=3000, help="number of events (default 3000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--gap", type=int, default=40, help="mean ms between events (default 40)")
    parser.add_argument("--start", default=DEFAULT_START, help=f"first event time (default {DEFAULT_START!r})")
    args = parser.parse_args(argv)
    if args.events < 1:
        parser.error("--events must be at least 1")
    start = dt.datetime.strptime(args.start, "%Y-%m-%d %H:%M:%S.%f" if "." in args.start else "%Y-%m-%d %H:%M:%S")
    count = write_events(args.out, args.events, args.seed, start, args.gap)
    print(f"nexmark_events: wrote {count} events to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
