"""The server child's lean model states (``agents/llm/local/_lean_state.py``) on a real model: the same replies as
the library's own save and load through the prompt cache, token for token, with states that carry no logits copy.

Runs in-process on smollm2-135m (the child's patch, installed here under ``monkeypatch``)."""

from __future__ import annotations

import pytest
from support.local_models import require_model

from agents.llm.local import SMOKE_MODEL
from agents.llm.local import _lean_state

pytestmark = pytest.mark.llm

INSTRUCTIONS = "You answer questions about cities in one short sentence. Use figures when you know them."
QUESTIONS = ["How many people live in Paris?", "Which is larger, Rome or Paris?", "How many people live in Paris?"]


@pytest.fixture(scope="module")
def model():
    from llama_cpp import Llama

    return Llama(str(require_model(SMOKE_MODEL)), n_ctx=1024, logits_all=False, verbose=False)


def _replies(model) -> list[str]:
    """Each question after the same instructions, through a fresh prompt cache: the second and third load a state
    the one before saved (the shared instructions), as the server does between roles."""
    from llama_cpp import LlamaRAMCache

    model.reset()
    model.set_cache(LlamaRAMCache(capacity_bytes=1 << 30))
    replies = []
    for question in QUESTIONS:
        out = model.create_chat_completion(
            [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": question}],
            temperature=0.0, repeat_penalty=1.1, max_tokens=24)
        replies.append(out["choices"][0]["message"]["content"])
    return replies


def test_lean_states_give_the_librarys_replies_and_carry_one_row(model, monkeypatch):
    from llama_cpp.llama import Llama

    expected = _replies(model)
    monkeypatch.setattr(Llama, "save_state", Llama.save_state)  # restored after the test
    monkeypatch.setattr(Llama, "load_state", Llama.load_state)
    _lean_state.install()
    loads: list[int] = []
    patched_load = Llama.load_state

    def counting(self, state):
        loads.append(state.n_tokens)
        return patched_load(self, state)

    monkeypatch.setattr(Llama, "load_state", counting)
    assert _replies(model) == expected
    assert loads, "the prompt cache never loaded a state: the test did not exercise load_state"
    state = model.save_state()
    assert state.scores.shape == (1, model.n_vocab()) and state.llama_state_size == len(state.llama_state) > 0


def test_with_logits_all_the_librarys_methods_run(model, monkeypatch):
    from llama_cpp.llama import Llama

    monkeypatch.setattr(Llama, "save_state", Llama.save_state)
    monkeypatch.setattr(Llama, "load_state", Llama.load_state)
    _lean_state.install()
    model.reset()
    model.eval(model.tokenize(b"Paris has about two million people."))
    monkeypatch.setattr(model, "_logits_all", True)
    assert model.save_state().scores.shape[0] == model.n_tokens
