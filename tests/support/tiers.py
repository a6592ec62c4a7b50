"""Which tier a test belongs to, from its markers: one rule, so the three tiers never overlap or miss a test.

    >>> tier_of({"ray", "smoke"}), tier_of({"postgres"}), tier_of({"llm", "ray"}), tier_of({"ray", "slow"})
    ('fast', 'all', 'llm', 'slow')
"""

from __future__ import annotations

import os
from collections.abc import Set

__all__ = ["NEEDS_MORE_THAN_A_LAPTOP", "TIERS", "examples", "tier_of"]

TIERS = ("fast", "all", "slow", "llm")

NEEDS_MORE_THAN_A_LAPTOP = frozenset({"ray", "cluster", "postgres", "browser", "subprocess"})
"""Markers that keep a test out of `make test`: a service, root, a browser, or processes of its own."""

_FAST_EXAMPLES = 40


def tier_of(markers: Set[str]) -> str:
    if "llm" in markers:
        return "llm"
    if "slow" in markers:  # the exhaustive matrices and the 10,000-example fuzz: `make test-slow`, not CI
        return "slow"
    if "smoke" in markers or not markers & NEEDS_MORE_THAN_A_LAPTOP:
        return "fast"
    return "all"


def examples(n: int) -> int:
    """A property test's example count: ``n`` under the `thorough` profile, at most 40 under `fast` (make test).
    Hypothesis lets an explicit ``max_examples`` win over the profile, so the cap is applied here."""
    profile = os.environ.get("TETRARCH_HYPOTHESIS", "thorough")
    return min(n, _FAST_EXAMPLES) if profile == "fast" else n

