"""``OpenAIChat``'s native function calling rules: when a server rejects ``tools``, and the one repair round for tool
calls whose arguments cannot be used.

Example:
    >>> tools_rejected(ValueError("not an HTTP error"))
    False
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import openai

from agents.llm._openai_support import Where, scrub
from agents.llm._tool_calls import RawToolCall, parse_raw_calls, repair_messages
from agents.llm.base import LLMReply, LLMRequest, LLMToolCallError, LLMToolsUnsupported, Usage

__all__ = ["CompleteRaw", "finish_tool_reply", "tools_rejected", "tools_unsupported"]

CompleteRaw = Callable[[LLMRequest], Awaitable[tuple[str, list[RawToolCall], Usage, str]]]
"""One non-streaming call: (text, tool calls as sent, usage, model)."""

_REJECTING_STATUSES = {400, 422, 500, 501}
_DETAIL_CHARS = 200


def _detail(exc: BaseException) -> str:
    return str(getattr(exc, "message", "") or exc) + " " + str(getattr(exc, "body", "") or "")


def tools_rejected(exc: BaseException) -> bool:
    """Whether an error answers a request with ``tools`` by rejecting the tools themselves (as servers without
    function calling do: HTTP 400/422, or 500/501 from llama.cpp-style servers), not by failing for another reason.
    Tested against the fake server's ``Fault.reject_tools`` (tests/unit/llm/test_llm_openai_tools.py)."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in _REJECTING_STATUSES:
        return False
    text = _detail(exc).lower()
    return "tool" in text or "function" in text


def tools_unsupported(exc: BaseException | None, where: Where, secret: str) -> LLMToolsUnsupported:
    """The error for a server that does not take ``tools`` (``exc``: its answer; ``None``: known from before)."""
    said = ""
    if exc is not None:
        detail = scrub(_detail(exc).strip(), secret)
        said = f" (HTTP {getattr(exc, 'status_code', '?')}: {detail[:_DETAIL_CHARS]})"
    return LLMToolsUnsupported(
        f"{where.model!r} at {where.base_url} does not accept native tool calls{said}. Use the JSON-in-text form "
        f"(ReActAgent(tool_calling=\"json\"), or \"auto\" to fall back by itself), or a server with function "
        f"calling (vLLM --enable-auto-tool-choice, llama.cpp --jinja, OpenAI).")


async def finish_tool_reply(complete_raw: CompleteRaw, request: LLMRequest, text: str, raw: list[RawToolCall],
                            usage: Usage, *, model: str, latency: Callable[[], float]) -> LLMReply:
    """The reply with its tool calls parsed. Calls that cannot be used (arguments that are not a JSON object, no
    tool name) get one repair round: the model sees its turn and the error for each such call, and answers again
    (both calls are costed); still unusable -> ``LLMToolCallError``."""
    calls, problems = parse_raw_calls(raw)
    if problems:
        repair = request.model_copy(update={"messages": repair_messages(request, text, raw, problems),
                                            "stream": False})
        text, raw, again, model = await complete_raw(repair)
        usage = usage + again
        calls, problems = parse_raw_calls(raw)
        if problems:
            listed = "; ".join(f"{c.id} ({c.name or 'no name'}): {problems[c.id]}" for c in raw if c.id in problems)
            raise LLMToolCallError(
                f"{model!r} wrote tool calls that cannot be used, even after one repair round: {listed}. Check the "
                f"tools' parameter schemas; a larger model, or the JSON-in-text form (tool_calling=\"json\"), may "
                f"do better.")
    return LLMReply(text=text, usage=usage, latency_s=latency(), model=model, tool_calls=calls)
