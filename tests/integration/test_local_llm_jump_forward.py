"""The server child's grammar-drafted decoding (``agents/llm/local/_jump_forward.py``) on a real model: the
replies token-by-token decoding writes, with the schema's forced text decoded in batches.

Runs in-process on smollm2-135m (the child's patches, installed here under ``monkeypatch``)."""

from __future__ import annotations

import json

import pytest
from support.local_models import json_replies, smoke_llama

from agents.llm.local import _greedy_grammar, _jump_forward

pytestmark = pytest.mark.llm

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"},
                                          "larger": {"type": "boolean"},
                                          "action": {"enum": ["accept", "replan"]}},
          "required": ["city", "population", "larger", "action"]}
PROMPTS = ["Give the city and population of Paris as JSON, whether it is larger than Rome, and accept.",
           "Reply with a JSON object about Tokyo."]


@pytest.fixture(scope="module")
def model():
    return smoke_llama()


def _replies(model) -> list[str]:
    return json_replies(model, PROMPTS, SCHEMA, max_tokens=64, cold=True)


def test_drafted_decoding_writes_the_replies_of_token_by_token_decoding(model, monkeypatch):
    from llama_cpp.llama import Llama

    for name in ("_init_sampler", "generate", "eval"):
        monkeypatch.setattr(Llama, name, getattr(Llama, name))  # restored after the test
    _greedy_grammar.install()
    expected = _replies(model)
    decoded: list[int] = []
    _jump_forward.install()
    drafted_eval = Llama.eval

    def counting(self, tokens):
        decoded.append(len(tokens))
        return drafted_eval(self, tokens)

    monkeypatch.setattr(Llama, "eval", counting)
    assert _replies(model) == expected
    assert all(isinstance(json.loads(r), dict) for r in expected)
    reply_tokens = sum(len(model.tokenize(r.encode(), add_bos=False)) for r in expected)
    # One decode for each prompt, then one a reply token without drafts: fewer means drafts were kept.
    assert len(decoded) - len(PROMPTS) < reply_tokens - len(PROMPTS)
