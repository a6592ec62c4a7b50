"""The second look's schema: an answer is written only with the cited step's reference, and may be left out."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from planning.parse import reflection_schema, reflection_schema_citing

_PLAIN = st.text(alphabet=st.characters(blacklist_characters='"\\', blacklist_categories=("Cs",)), max_size=40)


def _pattern(step_id: int) -> str:
    return reflection_schema_citing(step_id)["properties"]["answer"]["anyOf"][0]["pattern"]


@given(_PLAIN, _PLAIN, st.integers(min_value=1, max_value=999))
def test_any_text_with_the_reference_matches(before: str, after: str, step_id: int) -> None:
    assert re.match(_pattern(step_id), f"{before}{{$step_{step_id}_result}}{after}", re.DOTALL)


@given(_PLAIN)
def test_a_text_without_the_reference_does_not(text: str) -> None:
    assert "{$step_3_result}" in text or not re.match(_pattern(3), text, re.DOTALL)


def test_only_the_answer_changes_and_null_stays_allowed() -> None:
    plain, citing = reflection_schema(), reflection_schema_citing(2)
    assert {"type": "null"} in citing["properties"]["answer"]["anyOf"]
    assert {k: v for k, v in citing["properties"].items() if k != "answer"} == \
        {k: v for k, v in plain["properties"].items() if k != "answer"}
    assert not re.match(_pattern(2), 'quoted "{$step_2_result}"')
