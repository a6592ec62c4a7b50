"""The JSON plan schema as the embedded server enforces it: converted by llama-cpp-python's own JSON-Schema-to-grammar
code (what its server does with a ``schema``) and matched token by token by llama.cpp's grammar sampler.

No text is generated: the smoke model's vocabulary alone is loaded, and each candidate reply is fed through the
grammar, so the verdicts are exact and take milliseconds."""

from __future__ import annotations

import ctypes
import json
import math
from collections.abc import Iterator
from typing import Annotated

import pytest
from pydantic import Field
from support.local_models import require_model

from agents.llm.local import SMOKE_MODEL
from agents.tools.builtins import builtin_tools
from agents.tools.decorator import tool
from agents.tools.registry import ToolRegistry
from planning.parse import plan_schema

pytestmark = pytest.mark.llm


@tool
def revenue(company: str, quarter: str) -> str:
    """A company's revenue in one quarter.

    Args:
        company: The company's name.
        quarter: The quarter, e.g. "2025-Q2".
    """
    return f"{company} {quarter}: 1 M€"


@tool
def p95_latency(service: str, week: int) -> str:
    """A service's p95 latency in one ISO week.

    Args:
        service: The service's name.
        week: The ISO week number.
    """
    return f"{service} week {week}: 120 ms"


class GrammarMatcher:
    """llama.cpp's grammar sampler over a vocabulary: which texts the grammar lets a model write, in full."""

    def __init__(self, model_path: str) -> None:
        import llama_cpp

        self._llama_cpp = llama_cpp
        self._model = llama_cpp.Llama(model_path=model_path, vocab_only=True, verbose=False)
        self._vocab = llama_cpp.llama_model_get_vocab(self._model._model.model)

    def accepts(self, gbnf: str, text: str) -> bool:
        lc = self._llama_cpp
        sampler = lc.llama_sampler_init_grammar(self._vocab, gbnf.encode(), b"root")
        assert sampler, "llama.cpp could not parse the grammar"
        try:
            for token in self._tokens(text):
                data = (lc.llama_token_data * 1)(lc.llama_token_data(token, 0.0, 0.0))
                candidates = lc.llama_token_data_array(data, 1, -1, False)
                lc.llama_sampler_apply(sampler, ctypes.byref(candidates))
                if math.isinf(data[0].logit):
                    return False
                if token != self._model.token_eos():
                    lc.llama_sampler_accept(sampler, token)
            return True
        finally:
            lc.llama_sampler_free(sampler)

    def _tokens(self, text: str) -> Iterator[int]:
        yield from self._model.tokenize(text.encode(), add_bos=False, special=False)
        yield self._model.token_eos()  # allowed only where the grammar is complete


@tool
def ticket(ticket_id: Annotated[str, Field(pattern=r"^T-\d+$")]) -> str:
    """A support ticket by id (a pattern the converter cannot keep: this tool's arguments stay unconstrained).

    Args:
        ticket_id: The ticket's id, e.g. "T-42".
    """
    return f"{ticket_id}: open"


@pytest.fixture(scope="module")
def plan_grammar(tmp_path_factory) -> tuple[GrammarMatcher, str]:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    matcher = GrammarMatcher(str(require_model(SMOKE_MODEL)))
    registry = ToolRegistry([*builtin_tools(tmp_path_factory.mktemp("workspace")), revenue, p95_latency, ticket])
    return matcher, json_schema_to_gbnf(json.dumps(plan_schema(registry.schemas())))


def _plan(*steps: dict) -> str:
    return json.dumps({"steps": list(steps)}, ensure_ascii=False)


@pytest.mark.parametrize("reply", [
    _plan({"step_id": 1, "tool_name": "revenue", "tool_input": {"company": "Olivar", "quarter": "2025-Q1"}},
          {"step_id": 2, "tool_name": "revenue", "tool_input": {"company": "Olivar", "quarter": "2025-Q2"}},
          {"step_id": 3, "tool_name": "calculator",
           "tool_input": {"expression": "{$step_2_result} - {$step_1_result}"}, "depends_on": [1, 2]}),
    _plan({"step_id": 1, "description": "the slower service", "tool_name": None, "depends_on": []},
          {"step_id": 2, "description": "its latency", "tool_name": "p95_latency",
           "tool_input": {"service": "{$step_1_result}", "week": 11}, "depends_on": [1]}),
    _plan({"step_id": 1, "tool_name": "p95_latency", "tool_input": {"service": "api", "week": "$step_2_result"}},
          {"step_id": 2, "tool_name": "calculator", "tool_input": {"expression": "round(2.5 million × 3 − 1e3, 2)"}}),
    _plan({"step_id": 1, "tool_name": "calculator", "tool_input": {"expression": "{$step_1_result} billion / 2"}}),
    _plan({"step_id": 1, "tool_name": "ticket", "tool_input": {"ticket_id": "T-42", "anything": 1}}),
])
def test_right_plans_are_written_freely(plan_grammar, reply):
    matcher, grammar = plan_grammar
    assert matcher.accepts(grammar, reply)


@pytest.mark.parametrize("reply", [
    _plan({"step_id": 1, "tool_name": "calculator", "tool_input": {"expression": "Q2 - Q1"}}),
    _plan({"step_id": 1, "tool_name": "calculator", "tool_input": {"expression": "sum({$step_1_result}.orders)"}}),
    _plan({"step_id": 1, "tool_name": "calculator", "tool_input": {"expression": "BilLion - {$step_1_result}"}}),
    _plan({"step_id": 1, "tool_name": "revenue", "tool_input": {"company": "Olivar"}}),
    _plan({"step_id": 1, "tool_name": "revenue", "tool_input": {"name": "Olivar", "quarter": "Q1"}}),
    _plan({"step_id": 1, "tool_name": "p95_latency", "tool_input": {"service": "api", "week": "eleven"}}),
    _plan({"step_id": 1, "tool_name": "search_web", "tool_input": {"query": "x"}}),
])
def test_calls_the_tools_refuse_cannot_be_written(plan_grammar, reply):
    matcher, grammar = plan_grammar
    assert not matcher.accepts(grammar, reply)


@pytest.mark.parametrize(("figure", "answer", "admitted"), [
    (0.660694576805, "It is about 0.66 times.", True),
    (0.660694576805, "Tate Modern has 451,210 visitors.", False),
    (-46186.0, "Zwinger hat mehr Besucher als Städel, um 46.186.", True),
    (-46186.0, "Zwinger hat mehr Besucher als Städel.", False),
    (16970.100000000002, "Müller GmbH, um 16 970,10 EUR.", True),
    (23903.0, 'Rome, by "23903".', False),
    (3.0, "Schreinerei Vogt, um 3.", True),
    (3.0, "Schreinerei Vogt hat 13 Bestellungen.", False),
    (3.0, "Die Differenz beträgt 3.000 Euro.", False),
    (3.0, "Die Differenz beträgt 3,0.", True),
    (6.0, "Ganze 6,5 Tests.", False),
    (6.0, "E-6636 tiene más pedidos abiertos, por 6.", True),
    (6.0, "x" * 220 + " 6.", False),
])
def test_a_second_look_answer_is_held_to_the_plans_figure(figure, answer, admitted):
    # The pattern as the embedded server enforces it (agents.roles.reflector.Reflector.answer_again).
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from planning.written_answer import figure_pattern, written_answer_schema

    matcher = GrammarMatcher(str(require_model(SMOKE_MODEL)))
    grammar = json_schema_to_gbnf(json.dumps(written_answer_schema(figure_pattern(figure))))
    assert matcher.accepts(grammar, json.dumps({"answer": answer}, ensure_ascii=False)) is admitted
