"""What a job does when its query fails: Flink's `restart-strategy.*` settings, read into one small value.

A streaming job meets brokers that restart and networks that blink; Flink restarts a failed job from its last
checkpoint with a delay, and users bring its option names with them. Here a failed query is started again on the
same checkpoint directory (Spark continues from the last committed batch), after the delay this strategy gives.

* `none`: a failed job stays FAILED.
* `fixed-delay`: `attempts` restarts (3), `delay` apart (10 s); the next failure is final.
* `exponential-delay` (the default, as in Flink for a job that checkpoints): the first restart after `initial-backoff` (1 s), each next one `backoff-multiplier` (1.5)
  times later, at most `max-backoff` (1 min), each delay moved by up to +-`jitter-factor` (0.1) of itself;
  after `attempts-before-reset-backoff` (15) restarts the next failure is final, unless the job ran for
  `reset-backoff-threshold` (1 h) since its last restart: then the count and the backoff start again.

One default differs from Flink's (which restarts forever): after fifteen restarts without an hour of running
between them the job is FAILED, so that a script waiting for a job that keeps failing
(`table.dml-sync` true) ends (about seven minutes of backoff;
a Pulsar broker down for 108 s took ten restarts, each failing at once).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from shell.units import parse_duration_ms

NONE, FIXED_DELAY, EXPONENTIAL_DELAY = "none", "fixed-delay", "exponential-delay"
KINDS = (NONE, FIXED_DELAY, EXPONENTIAL_DELAY)
# Flink's other spellings of the same strategies.
ALIASES = {
    "off": NONE, "disable": NONE, "disabled": NONE, "norestart": NONE,
    "fixeddelay": FIXED_DELAY, "fixed_delay": FIXED_DELAY,
    "exponentialdelay": EXPONENTIAL_DELAY, "exponential_delay": EXPONENTIAL_DELAY,
}  # fmt: skip

PREFIX = "restart-strategy."
TYPE_KEY = PREFIX + "type"
FIXED = PREFIX + "fixed-delay."
EXPONENTIAL = PREFIX + "exponential-delay."


def strategy_kind(value: str) -> str:
    """A `restart-strategy.type` value, normalized (raises ValueError naming the accepted ones)."""
    kind = value.strip().lower()
    kind = ALIASES.get(kind, kind)
    if kind not in KINDS:
        raise ValueError("one of " + ", ".join(KINDS))
    return kind


@dataclass(frozen=True)
class RestartStrategy:
    """`attempts` is fixed-delay's attempts, or exponential-delay's attempts-before-reset-backoff."""

    kind: str = EXPONENTIAL_DELAY
    attempts: int = 15
    delay_ms: int = 1_000  # fixed-delay's delay, or exponential-delay's initial-backoff
    max_backoff_ms: int = 60_000
    multiplier: float = 1.5
    reset_after_ms: int = 3_600_000
    jitter: float = 0.1

    @classmethod
    def from_settings(cls, get: Callable[[str], str | None]) -> "RestartStrategy":
        """From session settings (`get` is `Settings.get`: it gives each key's value or default)."""

        def value(key: str, default: str) -> str:
            found = get(key)
            return default if found is None else found

        kind = strategy_kind(value(TYPE_KEY, EXPONENTIAL_DELAY))
        if kind == EXPONENTIAL_DELAY:
            return cls(
                kind,
                attempts=int(value(EXPONENTIAL + "attempts-before-reset-backoff", "15")),
                delay_ms=parse_duration_ms(value(EXPONENTIAL + "initial-backoff", "1 s")),
                max_backoff_ms=parse_duration_ms(value(EXPONENTIAL + "max-backoff", "1 min")),
                multiplier=float(value(EXPONENTIAL + "backoff-multiplier", "1.5")),
                reset_after_ms=parse_duration_ms(value(EXPONENTIAL + "reset-backoff-threshold", "1 h")),
                jitter=float(value(EXPONENTIAL + "jitter-factor", "0.1")),
            )
        if kind == FIXED_DELAY:
            return cls(
                kind,
                attempts=int(value(FIXED + "attempts", "3")),
                delay_ms=parse_duration_ms(value(FIXED + "delay", "10 s")),
            )
        return cls(NONE, attempts=0)

    def delay_s(self, attempt: int, rand: Callable[[], float] = random.random) -> float | None:
        """Seconds to wait before restart number `attempt` (1-based, since the last reset); None: do not restart."""
        if self.kind == NONE or attempt < 1 or attempt > self.attempts:
            return None
        if self.kind == FIXED_DELAY:
            return self.delay_ms / 1000
        base = min(self.delay_ms * self.multiplier ** (attempt - 1), self.max_backoff_ms)
        return max(0.0, base + base * self.jitter * (2 * rand() - 1)) / 1000

    def resets(self, ran_s: float) -> bool:
        """Whether a job that ran `ran_s` seconds since its last restart starts counting its attempts again."""
        return self.kind == EXPONENTIAL_DELAY and ran_s * 1000 >= self.reset_after_ms

    def describe(self) -> str:
        if self.kind == NONE:
            return "no restarts"
        if self.kind == FIXED_DELAY:
            return f"fixed-delay: {self.attempts} attempts, {self.delay_ms / 1000:g} s apart"
        return (
            f"exponential-delay: {self.attempts} attempts, {self.delay_ms / 1000:g} s doubling by "
            f"{self.multiplier:g} up to {self.max_backoff_ms / 1000:g} s"
        )
