"""Prefill the static start of every role's prompt while the embedded model server starts.

Prefill dominates a task's time on two CPU cores: the 1.5B model reads ~30-45 prompt tokens/s, and the demo's three
calls read ~1,600 prompt tokens past the opening they share (~60 s of its 100 s, measured). Each role's prompt puts
its static part first (``# opening: opening/v1`` — the roles and the tool list — then the role's own instructions;
the task comes last), so only the task's own text needs reading. llama.cpp reuses the longest common prefix with
the *previous* prompt only, and the roles take turns; the server's prompt cache (``server.PROMPT_CACHE_BYTES``)
keeps one model state per prompt and loads the one sharing the longest prefix. One request per role, each with
empty task values and asking for one token, puts those states there before the first task: measured on the demo's
calls, the router then reads 41 new tokens instead of 319, the planner 41 instead of 582, the reviewer 304 instead
of 668. The same requests make the server load the weights into memory.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.llm.profile import ModelProfile, profile_of
from agents.llm.base import LLM, LLMError, LLMRequest, Role
from prompts import PromptTemplate, load_prompt

__all__ = ["WARMED_ROLES", "RolePrefix", "Warming", "role_prefixes", "start_warming", "template_prefix",
           "warm_prefixes"]

log = logging.getLogger("tetrarch")

WARMED_ROLES: tuple[Role, ...] = ("router", "planner", "executor", "reflector")
"""The roles a planned task calls, in the order it calls them (the first reads the shared opening). The executor
is called by reasoning steps only, but the embedded planner writes one for every name it must find first, and
each call would otherwise read the executor's instructions again."""


@dataclass(frozen=True)
class RolePrefix:
    role: Role
    messages: list[dict[str, str]]
    tools: list[dict[str, Any]] | None = None
    """Tool specs the role's requests carry (native function calling): the chat template renders them into the
    prompt's start, so the warm-up request must carry them too."""


def role_prefixes(profile: ModelProfile, tools_catalog: str, max_steps: int) -> list[RolePrefix]:
    """Each warmed role's prompt as its template renders it with no task (the task's values empty): everything
    a call of that role shares with every other call of it. Templates without the shared opening (the hosted
    forms, e.g. router/v5) are left out: nothing is prefilled for a hosted model.

        >>> from agents.llm.profile import SMALL_LOCAL
        >>> [p.role for p in role_prefixes(SMALL_LOCAL, "calculator: arithmetic", 50)]
        ['router', 'planner', 'executor', 'reflector']
    """
    static = {"tools": tools_catalog, "max_steps": str(max_steps)}
    prefixes = []
    for role in WARMED_ROLES:
        template = load_prompt(role, profile.prompt(role))
        if template.opening is None:
            continue
        prefixes.append(template_prefix(role, template, static))
    return prefixes


def template_prefix(role: Role, template: PromptTemplate, static: Mapping[str, str]) -> RolePrefix:
    """``template`` rendered with the ``static`` values and cut where its first other value (the task's) begins.

        >>> from prompts import PromptTemplate, load_prompt
        >>> prefix = template_prefix("react", load_prompt("react"), {"tools": "calculator: arithmetic"})
        >>> [m["role"] for m in prefix.messages], prefix.messages[-1]["content"]
        (['system', 'user'], 'Task: ')
    """
    rendered = template.render(**{name: static.get(name, _TASK_MARK) for name in template.variables})
    return RolePrefix(role, _up_to_mark(rendered.messages))


_TASK_MARK = "\ue000"  # a private-use character: stands in for the task's values, found and cut off


def _up_to_mark(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The messages up to the first task value: the last one cut there, the ones after it dropped."""
    kept = []
    for message in messages:
        content, mark, _ = message["content"].partition(_TASK_MARK)
        kept.append({**message, "content": content})
        if mark:
            break
    return kept


class Warming:
    """The embedded model's start-up on a thread: wait for the server to answer, then prefill each role's static
    prompt. ``join`` waits for it and raises what stopped the server from starting (a warm-up call that fails is
    only logged: it costs the first task its prefill, nothing else)."""

    def __init__(self, llm: LLM, prefixes: Sequence[RolePrefix], ready: Callable[[], None] | None = None) -> None:
        self._llm, self._prefixes, self._ready = llm, list(prefixes), ready
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="tetrarch-warm-up", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if self._ready is not None:
                self._ready()
        except BaseException as exc:  # noqa: BLE001 - handed to join(), in the caller's thread
            self._error = exc
            return
        took = warm_prefixes(self._llm, self._prefixes)
        if took is not None:
            log.info("the embedded model prefilled %d roles' static prompts in %.1fs", len(self._prefixes), took)

    def join(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


def start_warming(llm: LLM, tools_catalog: str, max_steps: int,
                  ready: Callable[[], None] | None = None) -> Warming:
    """Wait for the server (``ready``, e.g. ``LlamaServer.wait_ready``) and prefill each role's static prompt, on a
    thread, while the caller starts the rest (Ray, the actors); a task's first calls would only queue behind the
    prefill at the server, so the caller joins it before taking tasks."""
    return Warming(llm, role_prefixes(profile_of(llm), tools_catalog, max_steps), ready)


def warm_prefixes(llm: LLM, prefixes: Sequence[RolePrefix], timeout_s: float = 300.0) -> float | None:
    """Send each prefix once (one output token each) and return how long it took, or None if a call failed: a
    warm-up that fails costs the first task its prefill, nothing else, so it is logged, never raised."""
    started = time.monotonic()
    # A worker thread: the caller may be inside a running event loop (a notebook), where asyncio.run refuses.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        warmed = pool.submit(asyncio.run, _warm(llm, prefixes, timeout_s)).result()
    return time.monotonic() - started if warmed else None


async def _warm(llm: LLM, prefixes: Sequence[RolePrefix], timeout_s: float) -> bool:
    try:
        for prefix in prefixes:
            request = LLMRequest(role=prefix.role, messages=prefix.messages, max_tokens=1, tools=prefix.tools,
                                 metadata={"purpose": "warm-up"})
            try:
                await asyncio.wait_for(llm.complete(request), timeout_s)
            except (LLMError, TimeoutError) as exc:
                log.warning("the embedded model's warm-up call for the %s failed (%s); its first call reads its "
                            "whole prompt instead", prefix.role, exc or "timed out")
                return False
        return True
    finally:
        # One event loop for every call, its HTTP client closed on it: a client left to the garbage collector
        # closes its sockets on a loop that is gone ("Event loop is closed" tracebacks in the demo's output).
        aclose = getattr(llm, "aclose", None)
        if aclose is not None:
            await aclose()
