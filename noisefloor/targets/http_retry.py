"""When the HTTP target tries again: exponential backoff with full jitter, and the delay an
endpoint asks for in `Retry-After` (seconds or an HTTP date)."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = [
    "BACKOFF_BASE_S",
    "BACKOFF_CAP_S",
    "RETRY_AFTER_MAX_S",
    "backoff_delay",
    "parse_retry_after",
]

#: First backoff ceiling; each further retry doubles it (full jitter draws below the ceiling).
BACKOFF_BASE_S = 0.5
#: The backoff ceiling never grows beyond this.
BACKOFF_CAP_S = 30.0
#: A `Retry-After` longer than this (e.g. a daily quota) ends the call instead of stalling the run.
RETRY_AFTER_MAX_S = 300.0


def backoff_delay(
    retry: int, *, base_s: float = BACKOFF_BASE_S, cap_s: float = BACKOFF_CAP_S
) -> float:
    """Exponential backoff with full jitter: uniform in [0, min(cap, base * 2**retry)].

    Args:
        retry: The 0-based index of the retry about to be made.
        base_s: Ceiling of the first retry's delay.
        cap_s: Largest ceiling.

    Returns:
        Seconds to wait.
    """
    # min() before the power would overflow a float after ~1000 retries
    ceiling = cap_s if retry >= 64 else min(cap_s, base_s * 2.0**retry)
    return random.uniform(0.0, ceiling)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Read a `Retry-After` header: delay seconds or an HTTP date.

    Args:
        value: The header value, or None when absent.
        now: The current time for an HTTP date (default: now, UTC).

    Returns:
        Seconds to wait (never negative), or None when absent or unreadable.
    """
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if seconds == seconds else None  # NaN is unreadable
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)
