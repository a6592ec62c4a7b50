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


def test_a_stream_cut_mid_reply_is_sent_again_once_and_what_it_sent_is_void() -> None:
    """A reviewer reply read along that the connection cuts is resent (the SDK retries only before a stream
    opens), as the planner's is: the reader is told the text so far is void, and the cut reply is counted."""
    import asyncio

    from agents.llm.base import LLMReply, LLMRequest, LLMStreamTruncated, Usage
    from agents.roles.json_call import call_json

    reply = "accept 5 5 5\nanswer: Rome, by 0.7 million."

    class CutOnce:
        calls = 0

        async def complete(self, request: LLMRequest) -> LLMReply:
            raise AssertionError("a reply read along is streamed")

        async def stream(self, request: LLMRequest):
            CutOnce.calls += 1
            yield reply[:30]
            if CutOnce.calls == 1:
                raise LLMStreamTruncated("the stream ended without a finish_reason")
            yield reply[30:]
            yield LLMReply(text=reply, usage=Usage(llm_calls=1, input_tokens=10, output_tokens=12))

    sent: list[str | None] = []
    feed = AnswerFeed(sent.append)
    call = asyncio.run(call_json(CutOnce(), role="reflector", messages=[{"role": "user", "content": "review"}],
                                 parse=lambda text: text, form="terse", on_text=feed.feed))
    assert call.value == reply and CutOnce.calls == 2
    assert call.spend.usage.llm_calls == 2  # the cut reply is counted too
    assert sent[0] == "Rome, by" and sent[1] is None and "".join(p for p in sent[2:] if p) == "Rome, by 0.7 million."
