"""Prefilled prefixes kept across server starts (``agents/llm/local/_state_shelf.py``) on a real server: a prefill
is written to the shelf, the next server starts with it cached (the same prompt reads one token, not all of them),
and a reply built on the loaded state is the reply built on a fresh prefill, token for token."""

from __future__ import annotations

import json
import urllib.request

import pytest
from support.local_models import require_model

from agents.llm.local import SMOKE_MODEL, start_local_llm

pytestmark = pytest.mark.llm

INSTRUCTIONS = ("You answer questions about cities in one short sentence. Use figures when you know them. " * 6).strip()
QUESTION = "How many people live in Paris?"


def _chat(base_url: str, messages: list[dict], max_tokens: int) -> str:
    body = json.dumps({"model": "local", "messages": messages, "max_tokens": max_tokens, "temperature": 0}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def _run(state_dir, log_path) -> str:
    """Prefill the instructions (one token asked for: a prefix), then ask the question; the reply."""
    _, server = start_local_llm(SMOKE_MODEL, n_ctx=2048, state_dir=state_dir, log_path=log_path)
    try:
        _chat(server.base_url, [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": ""}], 1)
        return _chat(server.base_url, [{"role": "system", "content": INSTRUCTIONS},
                                       {"role": "user", "content": QUESTION}], 24)
    finally:
        server.stop()


def test_a_prefill_is_kept_and_the_next_server_starts_with_it(tmp_path):
    require_model(SMOKE_MODEL)
    shelf = tmp_path / "prefill"
    first = _run(shelf, tmp_path / "first.log")
    kept = list(shelf.rglob("*.state"))
    assert len(kept) == 1, kept
    second = _run(shelf, tmp_path / "second.log")
    assert second == first
    cold = (tmp_path / "first.log").read_text(errors="replace")
    warm = (tmp_path / "second.log").read_text(errors="replace")
    assert "cache miss" in cold.split("/v1/chat/completions")[0]  # the first server read the instructions
    prefill = warm.split("/v1/chat/completions")[0]  # the log of the second server's first request
    assert "Llama._create_completion: cache hit" in prefill and "remaining 1 prompt tokens to eval" in prefill
