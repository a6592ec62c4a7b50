"""The simulated model of a typed run (``tetrarch bench --typed --llm sim``): the gold behaviour, with the
reviewer writing the gold answer as the output type's JSON when, and only when, its request shows it the type's
schema, as a model that follows its instructions would. A run whose schema did not reach the reviewer gets the
gold text, which does not validate, and the task escalates: the plumbing is what this measures.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from agents.llm.base import LLMRequest
from agents.llm.simulated import GoldTask, LatencyModel, SimulatedLLM
from agents.outputs import OutputSpec, output_spec
from benchmarks.generality.scripted import schema_shown
from benchmarks.suite import BenchTask, expected_output, output_type_for

__all__ = ["TypedSimulatedLLM"]


class TypedSimulatedLLM(SimulatedLLM):
    """``SimulatedLLM`` whose reviewer answers a typed task with its gold value under the schema it was shown."""

    def __init__(self, tasks: Sequence[BenchTask], latency: LatencyModel, **kwargs: Any) -> None:
        super().__init__([t.gold for t in tasks], latency, **kwargs)
        self._typed: dict[str, tuple[OutputSpec, Any]] = {}
        for t in tasks:
            tp = output_type_for(t)
            value = TypeAdapter(tp).dump_python(expected_output(t), mode="json")
            self._typed[t.text] = (output_spec(tp, importable=True), value)

    def _reflect(self, gold: GoldTask, request: LLMRequest) -> str:
        typed = self._typed.get(gold.task)
        if typed is None or not schema_shown(request, typed[0]):
            return super()._reflect(gold, request)
        value = typed[1]
        reply = super()._reflect(gold.model_copy(update={"answer": json.dumps(value)}), request)
        if request.json_schema is None:
            return reply  # the terse answer line holds the JSON text
        data = json.loads(reply)
        if data.get("answer") is not None:
            data["answer"] = value  # the JSON form's schema asks for the value itself
        return json.dumps(data)
