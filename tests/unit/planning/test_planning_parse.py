from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning import (
    LLMOutputError,
    extract_json_object,
    json_schema_for,
    parse_plan,
    parse_reflection,
    parse_router_decision,
)
from planning.models import Plan, Reflection
from support.tiers import examples


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', {"a": 1}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('```\n{"a": 1}\n```', {"a": 1}),
    ('Output: {"a": {"b": [1, 2,],},}', {"a": {"b": [1, 2]}}),
    ('I think {so} but here: ```json\n{"a": "}{"}\n``` hope this helps', {"a": "}{"}),
    ('{"a": "say \\"hi\\" {", "b": true}', {"a": 'say "hi" {', "b": True}),
    ('{"a": True, "b": None, "c": "None"}', {"a": True, "b": None, "c": "None"}),
    ('{"ville": "Zürich ✓", "n": 1e3}', {"ville": "Zürich ✓", "n": 1000.0}),
    ('prose {not json} then {"a": 2}', {"a": 2}),
])
def test_extract_json_object_tolerates_real_model_output(text, expected):
    assert extract_json_object(text) == expected


@pytest.mark.parametrize("text, message", [
    ("no json here", "Your output contained no JSON object. Return only one JSON object."),
    ('{"a": 1', "Your output ended before the JSON object was closed"),
    ('{"a": 1 "b": 2}', "Your output was not valid JSON: Expecting ',' delimiter: line 1 column 9 (char 8). "
                        "Return only one JSON object."),
])
def test_extract_errors_are_written_for_the_repair_round(text, message):
    with pytest.raises(LLMOutputError) as err:
        extract_json_object(text)
    assert str(err.value).startswith(message)
    assert err.value.raw == text


def test_router_and_reflection():
    d = parse_router_decision('{"route": "clarify", "confidence": 0.4, "reason": "vague", "answer": "Which city?"}')
    assert (d.route, d.answer) == ("clarify", "Which city?")
    r = parse_reflection('```json\n{"scores": {"completeness": 5, "correctness": 4, "format": 5}, "overall_pass": '
                         'true, "action": "retry_step", "retry_details": {"step_id": 2, "modification": "use km"}, '
                         '"feedback": "units", "answer": null, "extra": 1}\n```')
    assert r.retry_details is not None and r.retry_details.step_id == 2 and r.action == "retry_step"


def test_wrong_shape_lists_fields():
    with pytest.raises(LLMOutputError) as err:
        parse_reflection('{"scores": {"completeness": 9}, "overall_pass": "maybe", "action": "celebrate"}')
    text = str(err.value)
    assert text.startswith("Your JSON does not match the required format: scores.completeness: Input should be "
                           "less than or equal to 5; scores.correctness: Field required")
    assert "action: Input should be 'accept', 'retry_step', 'replan' or 'escalate'" in text


def test_plan_forms():
    plan = parse_plan('[{"step_id": 1, "tool_name": "none"}, {"step_id": 2, "tool_name": "", "depends_on": [1]},]')
    assert [s.tool_name for s in plan.steps] == [None, None]
    with pytest.raises(LLMOutputError, match=r"steps.0.depends_on: Input should be a valid list"):
        parse_plan('{"steps": [{"step_id": 1, "depends_on": "none"}]}')
    with pytest.raises(LLMOutputError, match='no "steps" array'):
        parse_plan('{"route": "plan"}')
    assert parse_plan('{"steps": []}').steps == []


def test_json_schema_for_is_flat():
    schema = json_schema_for(Reflection)
    assert "$defs" not in schema and "title" not in json.dumps(schema)
    assert schema["properties"]["scores"]["properties"]["format"]["maximum"] == 5
    assert json_schema_for(Plan)["properties"]["steps"]["items"]["properties"]["step_id"]["minimum"] == 1


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]",:\\ abc1\n`truefalsn')), max_size=80))
def test_garbage_raises_only_llm_output_error(text):
    for fn in (extract_json_object, parse_plan, parse_reflection, parse_router_decision):
        try:
            fn(text)
        except LLMOutputError:
            pass


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=5), st.sampled_from(["", " ", "\n", " \n\t"]),
       st.sampled_from(["", " ", "\n"]), st.sampled_from([None, 0, 2]), st.text(max_size=8))
def test_a_whole_object_reply_reads_as_the_lenient_scan_reads_it(value, before, after, indent, tail):
    """The fast path for a reply that is one JSON object gives what the candidate scan gives, and a reply with
    anything around it (prose, a fence) still takes the scan."""
    from planning.lenient import _extract

    for text in (f"{before}{json.dumps(value, indent=indent, ensure_ascii=False)}{after}",
                 f"{before}{json.dumps(value)}{tail}", f"```json\n{json.dumps(value)}\n```"):
        try:
            scanned = _extract(text, "{")
        except LLMOutputError:
            with pytest.raises(LLMOutputError):
                extract_json_object(text)
            continue
        assert extract_json_object(text) == scanned


def test_plan_schema_enumerates_the_registered_tools():
    from planning.parse import plan_schema

    schema = plan_schema(["lookup", "calculator"])
    tool_name = schema["properties"]["steps"]["items"]["properties"]["tool_name"]
    assert tool_name["anyOf"] == [{"enum": ["calculator", "lookup"], "type": "string"}, {"type": "null"}]
    assert plan_schema([])["properties"]["steps"]["items"]["properties"]["tool_name"]["anyOf"][0] == {"type": "string"}


def test_reflection_schema_spells_scores_out():
    from planning.parse import reflection_schema

    scores = reflection_schema()["properties"]["scores"]["properties"]
    assert all(s["enum"] == [1, 2, 3, 4, 5] and "minimum" not in s for s in scores.values())


def test_plan_schema_requires_a_step():
    # A grammar-constrained model cannot answer {"steps": []}, which validation would reject anyway.
    from planning.parse import plan_schema

    assert plan_schema({"lookup": {}})["properties"]["steps"]["minItems"] == 1


def test_the_classified_word_reply_requires_its_kind_from_a_closed_set():
    from planning.models import POINTING_KINDS
    from planning.parse import classified_word_schema, parse_classified_word

    schema = classified_word_schema()
    assert schema["required"] == ["word", "kind"]
    kinds = next(o["enum"] for o in schema["properties"]["kind"]["anyOf"] if "enum" in o)
    assert POINTING_KINDS < set(kinds) and "noun" in kinds
    assert parse_classified_word('{"word": " them ", "kind": "pronoun"}').word == "them"
    blank = parse_classified_word('{"word": "  ", "kind": "noun"}')
    assert blank.word is None and blank.kind is None  # no word: no kind to weigh
    with pytest.raises(LLMOutputError):
        parse_classified_word('{"word": "it", "kind": "thing"}')
