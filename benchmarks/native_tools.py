"""How well the embedded model calls tools natively: ReAct's first turn on each task of a corpus split, in the native
form (``tools`` in the request, ``<tool_call>`` blocks read back) and in the JSON-text form, on the same server.

Per form: how many first turns give a usable call (a known tool, arguments its schema accepts), the median wall
time and tokens of the turn; and what the tool specs cost: the server's prompt tokens of the same messages with and
without ``tools`` (Qwen2.5's template renders them into the system message).

    python -m benchmarks.native_tools [--model qwen2.5-coder-1.5b] [--split heldout] [--limit N]

writes ``benchmarks/results/local/native-tools-<model>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from agents.config import RuntimeConfig
from agents.errors import InvalidLLMOutputError
from agents.llm.base import LLM, LLMError, LLMRequest
from agents.react import ParallelReActTurn, ReActAgent
from agents.roles.json_call import call_json
from agents.tools import ToolRegistry
from agents.tools.builtins import calculator, doc_search
from planning.parse import parse_model
from prompts import load_prompt

__all__ = ["main", "probe"]

OUT = Path(__file__).parent / "results" / "local"


def _usable(registry: ToolRegistry, name: str, arguments: dict[str, Any]) -> bool:
    if name not in registry:
        return False
    try:
        registry.get(name).validate_arguments(arguments)
    except Exception:  # noqa: BLE001 - any validation failure makes the call unusable
        return False
    return True


async def _native_turn(llm: LLM, registry: ToolRegistry, task: str) -> dict[str, Any]:
    agent = ReActAgent(llm, list(registry), RuntimeConfig(), parallel=True)
    prompt = load_prompt(agent.prompt_name()).render(task=task)
    request = LLMRequest(role="react", messages=prompt.messages, tools=agent.tool_specs(), tool_choice="auto")
    started = time.monotonic()
    try:
        reply = await llm.complete(request)
    except LLMError as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300], "wall_s": time.monotonic() - started}
    calls = [(c.name, c.arguments) for c in reply.tool_calls]
    return {"ok": bool(calls) and all(_usable(registry, n, a) for n, a in calls), "calls": calls,
            "text": reply.text[:200], "wall_s": time.monotonic() - started, "llm_calls": reply.usage.llm_calls,
            "input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens}


async def _json_turn(llm: LLM, registry: ToolRegistry, task: str) -> dict[str, Any]:
    prompt = load_prompt("react_parallel").render(task=task, tools=registry.catalog_text())
    started = time.monotonic()
    try:
        call = await call_json(llm, role="react", messages=prompt.messages,
                               parse=lambda text: parse_model(text, ParallelReActTurn),
                               json_schema=ParallelReActTurn.model_json_schema())
    except (LLMError, InvalidLLMOutputError) as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300], "wall_s": time.monotonic() - started}
    calls = [(a.tool_name, dict(a.tool_input)) for a in call.value.actions]
    usage = call.spend.usage
    return {"ok": bool(calls) and all(_usable(registry, n, a) for n, a in calls), "calls": calls,
            "wall_s": time.monotonic() - started, "llm_calls": usage.llm_calls, "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens}


async def _spec_overhead(llm: LLM, registry: ToolRegistry) -> int:
    """The server's prompt tokens for the same messages with the tool specs minus without them."""
    messages = load_prompt("react_parallel_native").render(task="What is 2 + 2?").messages
    counts = []
    for tools in (registry.function_specs(), None):
        reply = await llm.complete(LLMRequest(role="react", messages=messages, tools=tools, max_tokens=1))
        counts.append(reply.usage.input_tokens)
    return counts[0] - counts[1]


async def probe(llm: LLM, tasks: list[str]) -> dict[str, Any]:
    registry = ToolRegistry([calculator, doc_search])
    rows = []
    try:
        overhead = await _spec_overhead(llm, registry)
        for i, task in enumerate(tasks):
            forms = (_native_turn, _json_turn) if i % 2 == 0 else (_json_turn, _native_turn)  # alternate order
            done = {form.__name__.strip("_").split("_")[0]: await form(llm, registry, task) for form in forms}
            rows.append({"task": task, **done})
            print(f"  {i + 1}/{len(tasks)} native ok={done['native']['ok']} json ok={done['json']['ok']}", flush=True)
    finally:
        aclose = getattr(llm, "aclose", None)
        if aclose is not None:
            await aclose()
    return {"spec_prompt_tokens": overhead, "rows": rows, "summary": {f: _summary([r[f] for r in rows])
                                                                      for f in ("native", "json")}}


def _summary(turns: list[dict[str, Any]]) -> dict[str, Any]:
    def med(key: str) -> float | None:
        values = [t[key] for t in turns if key in t]
        return round(statistics.median(values), 2) if values else None

    return {"turns": len(turns), "usable": sum(t["ok"] for t in turns), "median_wall_s": med("wall_s"),
            "median_input_tokens": med("input_tokens"), "median_output_tokens": med("output_tokens"),
            "median_llm_calls": med("llm_calls")}


def _markdown(model: str, split: str, doc: dict[str, Any]) -> str:
    rows = ["| form | first turns | usable calls | median wall s | median LLM calls | median input tokens | "
            "median output tokens |", "|---|---|---|---|---|---|---|"]
    for form, label in (("native", "native (tools + <tool_call> blocks)"), ("json", "JSON text (react_parallel)")):
        s = doc["summary"][form]
        rows.append(f"| {label} | {s['turns']} | {s['usable']} | {s['median_wall_s']} | {s['median_llm_calls']} | "
                    f"{s['median_input_tokens']} | {s['median_output_tokens']} |")
    return "\n".join([
        f"# Native tool calls on the embedded model: {model}", "",
        f"Generated {doc['generated_at']} by `python -m benchmarks.native_tools --model {model} --split {split}`: "
        "ReAct + parallel calls' first turn on each task, both forms on the same llama.cpp server (GGUF chat "
        "template), alternating which goes first. Usable: every call names a known tool with arguments its "
        "schema accepts.", "", *rows, "",
        f"The tool specs (calculator, doc_search) add {doc['spec_prompt_tokens']} prompt tokens to every native "
        "call (the server's count, same messages with and without `tools`).", ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.native_tools")
    parser.add_argument("--model", default=None, help="catalogue model (default: the embedded default)")
    parser.add_argument("--split", default="heldout")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from agents.llm.local import start_local_llm
    from agents.llm.local.catalog import get_model
    from benchmarks.suite import load_suite

    model = get_model(args.model).name
    tasks = [t.text for t in load_suite("corpus", args.limit, args.split)]
    llm, server = start_local_llm(model)
    try:
        doc = asyncio.run(probe(llm, tasks))
    finally:
        server.stop()
    doc["generated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"native-tools-{model}.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    (args.out / f"native-tools-{model}.md").write_text(_markdown(model, args.split, doc))
    print(json.dumps(doc["summary"], indent=1), f"\nspec prompt tokens: {doc['spec_prompt_tokens']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
