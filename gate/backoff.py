"""Exponential backoff with jitter, for every retry loop that talks to another service."""

from __future__ import annotations

import random


def delay(attempt: int, *, base: float, cap: float) -> float:
    """Seconds to wait before retry ``attempt`` (0 = the first retry): base x 2^attempt, capped, +-20% jitter."""
    return min(base * 2**attempt, cap) * random.uniform(0.8, 1.2)
