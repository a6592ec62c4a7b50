"""The user's documents are part of each tool call's configuration, not the process's: two dispatchers (two
executors, as two Orchestrators in one process have) with different stores, their calls interleaved, each
``doc_search`` sees its own documents; with none given, the environment variable still names the store."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM
from agents.memory.doc_search import USER_DOCUMENTS_ENV, user_documents_path
from agents.memory.documents import DocumentIndex
from agents.roles.executor import Executor
from agents.roles.messages import StepRequest
from agents.tools import ToolDispatcher, ToolRegistry, tool
from agents.tools.builtins.docsearch import doc_search
from planning.models import PlanStep

QUERY = {"query": "Paris office employees", "k": 2}
HEADCOUNT = {"a": "40 employees", "b": "75 employees"}
"""What each store's one document says: the two stores answer the query differently."""


@pytest.fixture(autouse=True)
def no_environment_store(monkeypatch):
    monkeypatch.delenv(USER_DOCUMENTS_ENV, raising=False)


@pytest.fixture
def stores(tmp_path):
    """Two stores, each with one document that answers the query differently: ``{name: path}``."""
    for name, headcount in HEADCOUNT.items():
        index = DocumentIndex(tmp_path / f"{name}.db")
        index.add([f"Our Paris office has {headcount} and opened in 2019."])
        index.close()
    return {name: tmp_path / f"{name}.db" for name in HEADCOUNT}


def _own(hits, name: str) -> bool:
    """The user's document of store ``name`` ranks first, and the other store's is nowhere."""
    texts = [h["text"] for h in hits]
    others = [count for key, count in HEADCOUNT.items() if key != name]
    return "source" in hits[0] and HEADCOUNT[name] in texts[0] and not any(o in t for o in others for t in texts)


def _dispatchers(stores, *tools):
    return {name: ToolDispatcher(ToolRegistry([doc_search, *tools]), documents_path=path)
            for name, path in stores.items()}


def test_interleaved_calls_of_two_dispatchers_each_search_their_own_documents(stores):
    dispatchers = _dispatchers(stores)
    order = ["a", "b"] * 8

    async def main():
        concurrent = await asyncio.gather(*(dispatchers[n].call("doc_search", QUERY) for n in order))
        one_by_one = [await dispatchers[n].call("doc_search", QUERY, timeout_s=10) for n in order]
        return concurrent, one_by_one

    concurrent, one_by_one = asyncio.run(main())
    for results in (concurrent, one_by_one):
        for name, result in zip(order, results, strict=True):
            assert _own(result.output, name), (name, result.output)
    assert user_documents_path() is None  # nothing was left set for the caller or the process


def test_an_async_tool_sees_its_own_store_while_the_other_dispatchers_call_is_in_flight(stores):
    barrier: asyncio.Barrier | None = None

    @tool
    async def documents_store() -> str:
        """The store this call's doc_search would search."""
        await barrier.wait()  # both calls are running at once before either reads its store
        return str(user_documents_path())

    dispatchers = _dispatchers(stores, documents_store)

    async def main():
        nonlocal barrier
        barrier = asyncio.Barrier(2)
        return await asyncio.gather(dispatchers["a"].call("documents_store", {}, timeout_s=10),
                                    dispatchers["b"].call("documents_store", {}))

    a, b = asyncio.run(main())
    assert (a.output, b.output) == (str(stores["a"]), str(stores["b"]))


def test_without_a_store_of_its_own_the_call_uses_the_environments(stores, monkeypatch):
    monkeypatch.setenv(USER_DOCUMENTS_ENV, str(stores["a"]))
    plain = ToolDispatcher(ToolRegistry([doc_search]))
    mine = ToolDispatcher(ToolRegistry([doc_search]), documents_path=stores["b"])

    async def main():
        return await asyncio.gather(plain.call("doc_search", QUERY), mine.call("doc_search", QUERY))

    from_env, own = asyncio.run(main())
    assert _own(from_env.output, "a") and _own(own.output, "b")


def test_two_executors_with_different_stores_in_one_process_each_find_their_own_document(stores):
    def no_model(request):
        raise AssertionError(f"a tool step needs no model call ({request.role})")

    options = RuntimeConfig().executor_options()
    executors = {name: Executor([doc_search], FunctionLLM(no_model),
                                dataclasses.replace(options, documents_path=str(path)), name=f"executor-{name}")
                 for name, path in stores.items()}
    step = PlanStep(step_id=1, description="find the office", tool_name="doc_search", tool_input=QUERY)
    request = StepRequest(task_id="t", task="t", plan_version=1, step=step, attempt=1, timeout_s=10)
    order = ["b", "a", "a", "b", "a", "b"]

    async def main():
        return await asyncio.gather(*(executors[n].run(request, {}) for n in order))

    for name, outcome in zip(order, asyncio.run(main()), strict=True):
        assert outcome.ok, outcome.error
        assert _own(outcome.output, name), (name, json.dumps(outcome.output)[:300])
    assert user_documents_path() is None
