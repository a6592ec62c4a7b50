"""Prefill the text every role's prompt opens with while the embedded model server starts.

llama.cpp's server keeps the previous prompt's KV cache and reuses its longest common prefix. The embedded
model's prompts all open alike (``# opening: opening/v1``: the roles, then the tool list), so after one call the
opening costs nothing; without a warm-up the first task's router paid for it (~500 tokens of the demo's six tools
at 25-45 tokens/s on 2 cores). One request of the opening alone, asking for one token, moves that cost to start-up,
where the model load already is. The same request also makes the server load the weights into memory.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time

from agents.llm.base import LLM, LLMError, LLMRequest
from prompts import load_prompt

__all__ = ["opening_messages", "warm_opening"]

log = logging.getLogger("tetrarch")


def opening_messages(router_version: str | None, tools_catalog: str) -> list[dict[str, str]] | None:
    """The opening the router's template (and every embedded role's) starts with, as a one-call prompt; None
    when that template has no opening (nothing shared to prefill)."""
    router = load_prompt("router", router_version)
    if router.opening is None:
        return None
    name, _, version = router.opening.partition("/")
    system = load_prompt(name, version).render(tools=tools_catalog).messages[0]["content"]
    return [{"role": "system", "content": system}, {"role": "user", "content": "Ready?"}]


def warm_opening(llm: LLM, messages: list[dict[str, str]], timeout_s: float = 300.0) -> float | None:
    """Send the opening once (one output token) and return how long it took, or None if the call failed: a
    warm-up that fails costs the first task its prefill, nothing else, so it is logged, never raised."""
    request = LLMRequest(role="router", messages=messages, max_tokens=1, metadata={"purpose": "warm-up"})
    started = time.monotonic()
    # A worker thread: the caller may be inside a running event loop (a notebook), where asyncio.run refuses.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        try:
            pool.submit(asyncio.run, llm.complete(request)).result(timeout=timeout_s)
        except (LLMError, concurrent.futures.TimeoutError) as exc:
            log.warning("the embedded model's warm-up call failed (%s); the first task prefills the opening itself",
                        exc)
            return None
    return time.monotonic() - started
