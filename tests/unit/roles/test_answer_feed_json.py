"""A typed answer streamed out of the reviewer's reply (``agents.roles.answer_feed``): in the JSON reply form the
answer is a JSON value, streamed as the text the task's answer will be (``answer_text``); in the terse form the
answer line is JSON text, streamed as written. Either way the pieces add up to the answer, and they come as the
reply is written, not at its end."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from agents.roles.answer_feed import AnswerFeed, answer_text
from agents.roles.messages import StepView
from agents.roles.reflector import filled_text

_HEAD = '{"scores": {"completeness": 5, "correctness": 5, "format": 5}, "overall_pass": true, "action": "accept", ' \
        '"retry_details": null, "feedback": "", "answer": '


def _fed(reply: str, fill=lambda text: text) -> list[str | None]:
    sent: list[str | None] = []
    feed = AnswerFeed(sent.append, fill)
    for end in range(len(reply) + 1):
        feed.feed(reply[:end])
    return sent


def test_a_json_value_answer_streams_as_its_answer_text_whatever_its_spacing() -> None:
    written = '{ "bigger":"Z\u00fcrich",\n "by" : 0.70, "names": ["a\\"b", 1e3, true, null], "more": {}}'
    sent = _fed(_HEAD + written + "}")
    assert None not in sent and len(sent) > 10
    assert "".join(sent) == answer_text(json.loads(written))  # type: ignore[arg-type]


def test_a_number_is_sent_once_it_has_ended() -> None:
    sent = _fed(_HEAD + '[12, 345]}')
    assert sent == ["[", "12,", " 345]"]  # "1" and "34" were not sent: they were not yet whole numbers


def test_a_scalar_answer_is_sent_once_complete_and_null_is_no_answer() -> None:
    assert _fed(_HEAD + "42}") == ["42"]
    assert _fed(_HEAD + "false}") == ["false"]
    assert _fed(_HEAD + "null}") == []


def test_a_terse_json_answer_streams_before_its_object_closes() -> None:
    answer = '{"bigger": "Rome", "difference_millions": 0.7}'
    sent = _fed(f"accept 5 5 5\nanswer: {answer}")
    assert "".join(sent) == answer and len(sent) > 10  # type: ignore[arg-type]


def test_a_reference_inside_a_json_answer_waits_and_is_sent_filled() -> None:
    views = [StepView(3, "difference", "subtract", "completed", 0.7)]
    for reply in (_HEAD + '{"note": "by {$step_3_result} million"}}',
                  'accept 5 5 5\nanswer: {"note": "by $step_3_result million"}'):
        sent = _fed(reply, fill=lambda text: filled_text(text, views))
        assert "".join(sent) == '{"note": "by 0.7 million"}', sent  # type: ignore[arg-type]
        assert not any("step_3" in piece for piece in sent if piece)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(value=_JSON.filter(lambda v: v is not None and not isinstance(v, str)),
       spacing=st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " : ")]), indent=st.sampled_from([None, 2]))
def test_any_json_value_streams_as_its_answer_text(value, spacing, indent) -> None:
    written = json.dumps(value, separators=spacing, indent=indent, ensure_ascii=False)
    sent = _fed(_HEAD + written + "}")
    assert None not in sent
    assert "".join(sent) == answer_text(value)  # type: ignore[arg-type]
