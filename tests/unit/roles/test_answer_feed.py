"""The answer read out of the reviewer's reply while it streams (``agents.roles.answer_feed``): only once the reply
has accepted, only text that what follows cannot change, references filled, a repaired reply voiding what was sent."""

from __future__ import annotations

from support import wire

from agents.roles.answer_feed import AnswerFeed, accepted_answer
from agents.roles.messages import StepView
from agents.roles.reflector import filled_text


def _fed(reply: str, step: int = 1, fill=lambda text: text) -> list[str | None]:
    sent: list[str | None] = []
    feed = AnswerFeed(sent.append, fill)
    for end in range(0, len(reply) + 1, step):
        feed.feed(reply[:end])
    feed.feed(reply)
    return sent


def test_terse_and_json_accepts_stream_the_answer_and_nothing_else() -> None:
    for reply in ("accept 5 5 5\nanswer: Rome, by 0.7 million.\n", wire.reflection(answer="Rome, by 0.7 million.")):
        sent = _fed(reply)
        assert "".join(sent) == "Rome, by 0.7 million." and len(sent) > 5  # type: ignore[arg-type]


def test_a_reply_that_does_not_accept_streams_nothing() -> None:
    for reply in ("replan 2 2 4: look Paris up\nanswer: Rome, maybe", "escalate 3 3 3: which year?\nanswer: x",
                  wire.reflection("replan", answer="Rome, maybe", feedback="again")):
        assert _fed(reply) == []


def test_the_verdict_counts_only_once_its_line_has_ended() -> None:
    assert accepted_answer("accept 5 5") is None
    assert accepted_answer('{"scores": {}, "overall_pass": true, "action": "acc') is None


def test_a_json_escape_is_sent_whole() -> None:
    reply = wire.reflection(answer='It is 4\u00b0C, "cold".')
    assert "".join(_fed(reply)) == 'It is 4\u00b0C, "cold".'  # type: ignore[arg-type]


def test_a_step_reference_is_sent_filled_once_it_closes() -> None:
    views = [StepView(3, "difference", "subtract", "completed", 0.7)]
    sent = _fed("accept 5 5 5\nanswer: Rome, by {$step_3_result} million.",
                fill=lambda text: filled_text(text, views))
    assert "".join(sent) == "Rome, by 0.7 million."  # type: ignore[arg-type]
    assert not any("{" in piece for piece in sent if piece)


def test_the_repair_round_voids_what_the_first_reply_sent() -> None:
    sent: list[str | None] = []
    feed = AnswerFeed(sent.append)
    feed.feed("accept 5 5 5\nanswer: Rome")
    feed.feed("")  # the repair round starts
    feed.feed("accept 5 5 5\nanswer: Rome, by 0.7 million.")
    assert sent == ["Rome", None, "Rome, by 0.7 million."]
