"""The benchmark world: synthetic entities with facts, and tools over them with seeded latencies.

Entities are invented (no model can answer from memory, so a real model must use the tools), facts are
deterministic, and every tool call's latency is drawn from a seeded distribution keyed by the call
itself — the same call costs the same time under every system compared.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.tools import Tool, tool
from agents.tools.errors import PermanentToolError, ToolArgumentError

__all__ = ["LatencyDist", "World", "make_tools", "WORLD_PATH"]

WORLD_PATH = Path(__file__).parent / "suites" / "world.json"


@dataclass(frozen=True, slots=True)
class LatencyDist:
    """Log-normal latency, clipped: web/API lookups have a long right tail."""

    median_s: float = 0.6
    sigma: float = 0.45
    min_s: float = 0.05
    max_s: float = 4.0

    def sample(self, key: str, seed: int) -> float:
        digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        return min(self.max_s, max(self.min_s, self.median_s * math.exp(rng.gauss(0.0, self.sigma))))


class World:
    def __init__(self, facts: dict[str, dict[str, Any]]) -> None:
        self.facts = facts
        self._lower = {k.lower(): k for k in facts}

    @classmethod
    def load(cls, path: Path = WORLD_PATH) -> World:
        return cls(json.loads(path.read_text())["entities"])

    def lookup(self, entity: str, attribute: str) -> Any:
        name = self._lower.get(entity.strip().lower())
        if name is None:
            close = difflib.get_close_matches(entity.strip(), list(self.facts), n=2, cutoff=0.8)
            score = [difflib.SequenceMatcher(None, entity.strip(), c).ratio() for c in close]
            if len(close) == 1 or (close and score[0] > score[1]):
                # One near miss the tool can name: say so in words (for a model) and as a fix (for the executor).
                raise ToolArgumentError(f"unknown entity {entity!r}; did you mean {close[0]!r}?",
                                        fix={"entity": close[0]})
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise PermanentToolError(f"unknown entity {entity!r}{hint}")  # ambiguous: the model must decide
        facts = self.facts[name]
        if attribute not in facts:
            raise PermanentToolError(f"{name} has no attribute {attribute!r}; it has: {', '.join(sorted(facts))}")
        return facts[attribute]


def make_tools(world: World, *, lookup_latency: LatencyDist = LatencyDist(),
               calc_latency: LatencyDist = LatencyDist(0.005, 0.2, 0.001, 0.05), seed: int = 0,
               time_scale: float = 1.0) -> list[Tool]:
    """The suite's tools. ``time_scale`` shrinks every latency (e.g. 0.25 for --quick)."""
    from agents.tools.builtins.calculator import evaluate_expression

    @tool
    async def lookup(entity: str, attribute: str) -> Any:
        """Look up one attribute of an entity (a city, country, company or river) in the knowledge base.

        Args:
            entity: The entity's exact name, e.g. "Velmora".
            attribute: One of: population_millions, area_km2, country, capital, founded, revenue_billions,
                headquarters, length_km, mouth.
        """
        await asyncio.sleep(lookup_latency.sample(f"lookup:{entity}:{attribute}", seed) * time_scale)
        return world.lookup(entity, attribute)

    @tool
    async def calculator(expression: str) -> float:
        """Evaluate an arithmetic expression, e.g. "(2.5 + 3) * 2" or "max(1.2, 3.4) - min(1.2, 3.4)".

        Args:
            expression: The expression; numbers, + - * / ** ( ), and max, min, abs, round, sqrt.
        """
        await asyncio.sleep(calc_latency.sample(f"calc:{expression}", seed) * time_scale)
        value = evaluate_expression(expression)
        return round(float(value), 6)

    return [lookup, calculator]
