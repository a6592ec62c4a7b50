"""The scripted LLM behind ``tetrarch mcp serve --llm-factory support.mcp_serve_llm:build`` in the subprocess
tests: it computes 20 * 2, the reflector escalates ("is 20 right?"), and after a human's answer the replan
computes 21 * 2, which the reflector accepts. Stateless (decided from the prompts): every role actor has
its own copy."""

from __future__ import annotations

from agents.llm import FunctionLLM, LLMRequest
from support import wire

__all__ = ["build"]


def build() -> FunctionLLM:
    # On the stdio transport this must reach stderr, never the MCP wire (the test would see a bad line).
    print("building the scripted LLM for mcp serve")
    return FunctionLLM(_reply)


def _reply(request: LLMRequest) -> str:
    text = " ".join(str(m["content"]) for m in request.messages)
    if request.role == "router":
        return wire.route()
    if request.role == "planner":
        expression = "21 * 2" if "A human reviewer says" in text else "20 * 2"
        return wire.plan(wire.step(1, "calculator", {"expression": expression}))
    if request.role == "reflector":
        if "42" in text:
            return wire.reflection(answer="42")
        return wire.reflection("escalate", (2, 2, 2), answer=None, feedback="Is 20 the right number to double?")
    raise AssertionError(f"unexpected role {request.role}")
