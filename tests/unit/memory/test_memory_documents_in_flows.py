"""orch.add_documents → the store's FTS5 index → the built-in doc_search of every executor, through the
real task state machine (in-process, FunctionLLM scripting every role)."""

import asyncio
import json

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.memory.doc_search import user_documents_path
from agents.memory.documents import DocumentIndex
from agents.tools.builtins.docsearch import doc_search
from support.local import run_task

PLAN = {"steps": [{"step_id": 1, "description": "find the office", "tool_name": "doc_search",
                   "tool_input": {"query": "Paris office employees", "k": 2}, "depends_on": []}]}


def _script(request):
    match request.role:
        case "router":
            return json.dumps({"route": "plan", "confidence": 0.9, "reason": "look it up", "answer": None})
        case "planner":
            return json.dumps(PLAN)
        case "reflector":
            return json.dumps({"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": True,
                               "action": "accept", "retry_details": None, "feedback": "", "answer": "40"})
    raise AssertionError(f"unexpected role {request.role}")


def test_a_plan_step_finds_the_users_document(tmp_path):
    store = tmp_path / "store.db"
    index = DocumentIndex(store)
    [info] = index.add(["Our Paris office has 40 employees and opened in 2019."])
    index.close()
    result, _ = asyncio.run(run_task(FunctionLLM(_script), "How many people work in our Paris office?",
                                     tools=[doc_search], config=RuntimeConfig(store_path=store)))
    assert result.status == "accepted"
    hits = result.steps[0].output
    assert hits[0]["doc_id"] == info.doc_id and "40 employees" in hits[0]["text"]
    assert any(h["doc_id"] == "paris" for h in hits)  # the shipped corpus is searched too
    assert user_documents_path() is None  # the executor's store was the calls' own, never the process's
