"""The terse plan's ``answer:`` line: the answer's shape with step references, read into ``Plan.answer`` in
wire spelling, kept out of the plan's wire dump and JSON schema, and used only when it rests on the plan's
steps."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from planning.models import Plan, PlanStep
from planning.stream import StreamingPlanParser
from planning.terse import parse_terse, render_terse
from planning.validate import answer_draft

PLAN = '1. lookup(city="Paris")\n2. lookup(city="Rome")\n3. subtract(a=$2, b=$1)\n'


def test_the_answer_line_is_read_in_wire_spelling_after_the_steps() -> None:
    plan = parse_terse(PLAN + "answer: Rome has $3 million more people ($2 vs {$1}), costing $$5.")
    assert plan.answer == ("Rome has {$step_3_result} million more people ({$step_2_result} vs "
                           "{$step_1_result}), costing $5.")
    assert [s.step_id for s in plan.steps] == [1, 2, 3]


def test_an_answer_line_before_any_step_is_prose_and_a_plan_without_one_has_none() -> None:
    assert parse_terse("Answer: guessing 3\n" + PLAN).answer is None
    assert parse_terse(PLAN).answer is None


def test_the_streaming_parser_reads_the_answer_line_whatever_the_chunks() -> None:
    text = PLAN + "ANSWER:  Rome, by $3 million"
    for size in (1, 3, 7, len(text)):
        parser = StreamingPlanParser()
        steps = [s for i in range(0, len(text), size) for s in parser.feed(text[i:i + size])]
        steps += parser.close()
        assert len(steps) == 3 and parser.answer == "Rome, by {$step_3_result} million", size
    json_parser = StreamingPlanParser()
    json_parser.feed('{"steps": [{"step_id": 1, "tool_name": "lookup", "tool_input": {}}], '
                     '"answer": "x $step_1_result"}')
    json_parser.close()
    assert json_parser.answer is None  # a JSON plan carries no draft: its schema has no such key


def test_the_draft_stays_out_of_the_wire_dump_and_the_json_schema() -> None:
    plan = parse_terse(PLAN + "answer: by $3")
    assert "answer" not in plan.model_dump() and "answer" not in plan.model_dump_json()
    assert set(Plan.model_json_schema()["properties"]) == {"steps"}
    assert parse_terse(render_terse(plan)) == plan


def test_a_draft_must_name_steps_of_the_plan_and_only_them() -> None:
    steps = [PlanStep(step_id=1, tool_name="lookup"), PlanStep(step_id=2, tool_name="lookup")]
    assert answer_draft("By {$step_2_result}.", steps) == "By {$step_2_result}."
    assert answer_draft("Rome is larger.", steps) is None  # written before any result
    assert answer_draft("By {$step_9_result}.", steps) is None  # could never be filled
    assert answer_draft(None, steps) is None and answer_draft("", steps) is None


_WORDS = st.text(st.sampled_from("abc XYZ.,;:()%-é"), min_size=1, max_size=12)


@given(st.lists(st.tuples(_WORDS, st.integers(1, 3)), min_size=1, max_size=4), _WORDS)
def test_any_rendered_draft_reads_back_equal(parts: list[tuple[str, int]], tail: str) -> None:
    answer = " ".join(f"{w.strip() or 'x'} {{$step_{n}_result}}" for w, n in parts) + " " + tail.strip()
    answer = " ".join(answer.split())
    plan = parse_terse(PLAN).model_copy(update={"answer": answer})
    assert parse_terse(render_terse(plan)).answer == answer
