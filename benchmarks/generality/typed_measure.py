"""The generality suite with typed outputs (``--typed``): every task run with ``output_type`` of its answer's shape
(``benchmarks.generality.typed``), every role scripted, the reviewer writing the expected value's JSON under the
schema it is shown; beside it the same task's text run, so a task typed outputs lose shows up against the text.

Both reply forms are measured: ``hosted`` (the terse form: the schema on the prompt's last line, the answer line is
JSON text) and ``small-local`` (the JSON form: the reply schema's ``answer`` is the output's schema, as the embedded
model's grammar enforces it). The target: on every task, ``result.output`` validates and equals the expected value.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from agents.llm.profile import HOSTED, SMALL_LOCAL, ModelProfile
from agents.outputs import output_spec
from agents.tools import Tool
from benchmarks.generality.model import GenTask
from benchmarks.generality.scripted import Script, config_for, run_scripted
from benchmarks.generality.typed import expected_value, output_type, shape_of

__all__ = ["PROFILES", "TypedRecord", "measure_typed", "summarize_typed", "typed_record", "typed_script"]

PROFILES: dict[str, ModelProfile] = {"hosted": HOSTED, "small-local": SMALL_LOCAL}
"""The reply forms the typed answer is asked in: terse (hosted) and JSON under a schema (the embedded model)."""


@dataclass(frozen=True, slots=True)
class TypedRecord:
    """One task's typed run (and its text run) under one configuration and reply form."""

    task_id: str
    shape: str
    lang: str
    split: str
    config: str
    profile: str
    answer_shape: str
    """``benchmarks.generality.typed.AnswerShape``: count, number, signed, name, names, named_figure."""
    output_type: str
    status: str
    schema_shown: bool
    """Every review call was asked for the output's schema."""
    valid: bool
    """``result.output`` is a validated value (not None)."""
    equal: bool
    """``result.output == expected_value``."""
    text_accepted: bool
    """The same task's text answer was accepted (the text run's counterpart)."""
    stopped_reason: str = ""
    feedback: str = ""

    @property
    def right(self) -> bool:
        return self.valid and self.equal and self.schema_shown


def typed_script(task: GenTask) -> Script:
    """The task's scripted run with its output type; the reviewer's answer is the expected value as JSON."""
    tp = output_type(task.expect)
    value = TypeAdapter(tp).dump_python(expected_value(task.expect), mode="json")
    return Script(task.question, task.plan, json.dumps(value, ensure_ascii=False), output_spec(tp, importable=True))


def typed_record(task: GenTask, config: str, profile: str, out: Any, text_accepted: bool) -> TypedRecord:
    tp = output_type(task.expect)
    return TypedRecord(task.id, task.shape, task.lang, task.split, config, profile, shape_of(task.expect),
                       output_spec(tp, importable=True).type_path, out.status, out.schema_shown,
                       valid=out.output is not None, equal=out.output == expected_value(task.expect),
                       text_accepted=text_accepted, stopped_reason=out.stopped_reason, feedback=out.feedback)


def measure_typed(tasks: Sequence[GenTask], configs: Sequence[str], profiles: Sequence[str], tools: Sequence[Tool],
                  progress: Callable[[str], None] = print) -> tuple[list[TypedRecord], list[str]]:
    """Each task typed and as text, per configuration and reply form: (records, configurations this build has)."""
    records: list[TypedRecord] = []
    available = []
    with tempfile.TemporaryDirectory(prefix="tetrarch-generality-typed-") as scratch:
        for name in configs:
            config = config_for(name, Path(scratch) / "bench.db")
            if config is None:
                progress(f"  configuration {name!r} is not in this build: skipped")
                continue
            available.append(name)
            for profile in profiles:
                model = PROFILES[profile]
                for task in tasks:
                    text = run_scripted(Script(task.question, task.plan, task.answer), tools, config, model)
                    typed = run_scripted(typed_script(task), tools, config, model)
                    records.append(typed_record(task, name, profile, typed, text.status == "accepted"))
                progress(f"  {name} {profile}: {sum(r.right for r in records[-len(tasks):])}/{len(tasks)} typed "
                         "outputs equal to the expected value")
    return records, available


def _counts(records: Sequence[TypedRecord]) -> dict[str, int]:
    return {"tasks": len(records), "accepted": sum(r.status == "accepted" for r in records),
            "schema_shown": sum(r.schema_shown for r in records), "valid": sum(r.valid for r in records),
            "equal": sum(r.right for r in records), "text_accepted": sum(r.text_accepted for r in records),
            "lost_against_text": sum(r.text_accepted and not r.right for r in records),
            "gained_against_text": sum(r.right and not r.text_accepted for r in records)}


def summarize_typed(records: Sequence[TypedRecord]) -> dict[str, Any]:
    """Counts overall, by answer shape and by tool-output shape, and the tasks whose typed output was not the
    expected value (with why)."""
    def by(key: str) -> dict[str, dict[str, int]]:
        groups: dict[str, list[TypedRecord]] = {}
        for r in records:
            groups.setdefault(getattr(r, key), []).append(r)
        return {k: _counts(v) for k, v in sorted(groups.items())}

    misses = [{"task_id": r.task_id, "output_type": r.output_type, "status": r.status,
               "text_accepted": r.text_accepted, "why": (r.feedback or r.stopped_reason)[:160]}
              for r in records if not r.right]
    return {**_counts(records), "by_answer_shape": by("answer_shape"), "by_shape": by("shape"), "misses": misses}


def records_jsonable(records: Sequence[TypedRecord]) -> list[dict[str, Any]]:
    return [asdict(r) for r in records]
