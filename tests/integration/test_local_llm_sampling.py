"""The server child's grammar-checked greedy sampling (``agents/llm/local/_greedy_grammar.py``) on a real model:
the same replies as llama-cpp-python's own chain, token for token, with one grammar check a token.

Runs in-process on smollm2-135m (the child's patch, installed here under ``monkeypatch``)."""

from __future__ import annotations

import pytest
from support.local_models import json_replies, smoke_llama

from agents.llm.local import _greedy_grammar

pytestmark = pytest.mark.llm

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"},
                                          "larger": {"type": "boolean"}},
          "required": ["city", "population", "larger"]}
PROMPTS = ["Give the city and population of Paris as JSON, and whether it is larger than Rome.",
           "Say hello.",  # the model wants prose: its first choices are rejected and the whole vocabulary filtered
           "Reply with a JSON object about Tokyo."]


@pytest.fixture(scope="module")
def model():
    return smoke_llama()


def _replies(model) -> list[str]:
    return json_replies(model, PROMPTS, SCHEMA, max_tokens=48, repeat_penalty=1.1)


def test_checked_greedy_gives_the_librarys_replies_token_for_token(model, monkeypatch):
    from llama_cpp.llama import Llama

    expected = _replies(model)
    monkeypatch.setattr(Llama, "_init_sampler", Llama._init_sampler)  # restored after the test
    _greedy_grammar.install()
    samplers: list[_greedy_grammar.GrammarCheckedGreedy] = []
    patched = Llama._init_sampler

    def recording(self, *args, **kwargs):
        sampler = patched(self, *args, **kwargs)
        if isinstance(sampler, _greedy_grammar.GrammarCheckedGreedy):
            samplers.append(sampler)
        return sampler

    monkeypatch.setattr(Llama, "_init_sampler", recording)
    assert _replies(model) == expected
    assert len(samplers) == len(PROMPTS)
    filters = sum(s.full_filters for s in samplers)
    assert 0 < filters < sum(len(r) for r in expected)  # both paths ran; most tokens took the one-token check


def test_sampling_without_a_grammar_keeps_the_librarys_chain(model, monkeypatch):
    from llama_cpp.llama import Llama

    monkeypatch.setattr(Llama, "_init_sampler", Llama._init_sampler)
    _greedy_grammar.install()
    sampler = Llama._init_sampler(model, temp=0.0, grammar=None)
    assert not isinstance(sampler, _greedy_grammar.GrammarCheckedGreedy)
