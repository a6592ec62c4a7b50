"""``handle.stream_answer()`` / ``astream_answer()``: the answer as the reviewer writes it, read off the task's live
events (``answer_delta``, ``answer_reset``, ``task_finished``).

The iterator yields ``str`` pieces and, when the accept they came from does not count (a check or the policy refused
it, or the reviewer's reply had to be asked for again), one ``AnswerReset``: the text yielded since the previous
reset is void, and a new stream may follow. It ends with the task's run. Whatever streamed, the pieces after the
last reset always add up to ``result.answer`` of an accepted task: where the answer was not streamed (the reviewer ran
on a Ray actor, or wrote the answer again in a narrow call) or differs from what streamed, the end says so with a
reset and the answer whole, or the rest of it; a task that ends without accepting voids what streamed.
With an ``output_type`` the pieces are the answer's JSON text (``result.answer``); ``stream_output()``
(``agents.output_stream``) yields them as validated partial values of the type.

    >>> from agents.events import parse_event
    >>> raw = [{"type": "answer_delta", "payload": {"text": "Paris"}}, {"type": "answer_delta", "payload": {"text": " is"}},
    ...        {"type": "task_finished", "payload": {"status": "accepted", "stopped_reason": "accepted",
    ...                                              "answer": "Paris is larger."}}]
    >>> events = [parse_event({"task_id": "t", "seq": i, "ts": 0.0, **e}) for i, e in enumerate(raw, 1)]
    >>> list(answer_pieces(events))
    ['Paris', ' is', ' larger.']
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from agents.events import AnyEvent

__all__ = ["AnswerPiece", "AnswerReset", "StreamsAnswer", "answer_pieces"]


@dataclass(frozen=True, slots=True)
class AnswerReset:
    """The text yielded since the previous reset is void (``reason`` says why); a new stream may follow."""

    reason: str = ""


AnswerPiece = str | AnswerReset


class _Reader:
    """What one stream has yielded since its last reset, and what each event adds to it."""

    def __init__(self) -> None:
        self.text = ""

    def on(self, event: AnyEvent) -> list[AnswerPiece]:
        match event.type:
            case "answer_delta":
                self.text += event.payload.text  # type: ignore[union-attr]
                return [event.payload.text]  # type: ignore[union-attr]
            case "answer_reset":
                return self._void(event.payload.reason)  # type: ignore[union-attr]
            case "task_finished":
                return self._end(event.payload.status, event.payload.answer)  # type: ignore[union-attr]
            case _:
                return []

    def _void(self, reason: str) -> list[AnswerPiece]:
        had, self.text = self.text, ""
        return [AnswerReset(reason)] if had else []

    def _end(self, status: str, answer: str | None) -> list[AnswerPiece]:
        if status != "accepted" or not answer:
            return self._void(f"the task ended {status} without this answer") if status != "accepted" else []
        if answer.startswith(self.text):
            rest, self.text = answer[len(self.text):], answer
            return [rest] if rest else []
        return [*self._void("the accepted answer differs from the streamed text"), answer]


def answer_pieces(events: Iterable[AnyEvent]) -> Iterator[AnswerPiece]:
    """The answer's pieces and resets in a run's events (the iterator behind ``stream_answer``), until they end."""
    reader = _Reader()
    for event in events:
        yield from reader.on(event)


async def aanswer_pieces(events: AsyncIterator[AnyEvent]) -> AsyncIterator[AnswerPiece]:
    reader = _Reader()
    async for event in events:
        for piece in reader.on(event):
            yield piece


class _HasEvents(Protocol):
    def events(self, after_seq: int = 0) -> Iterator[AnyEvent]: ...

    def aevents(self, after_seq: int = 0) -> AsyncIterator[AnyEvent]: ...


class StreamsAnswer:
    """``TaskHandle``'s answer stream, over its ``events()`` / ``aevents()``."""

    def stream_answer(self: _HasEvents, after_seq: int = 0) -> Iterator[AnswerPiece]:
        """The answer as the reviewer writes it, once its decision to accept is known: ``str`` pieces, and an
        ``AnswerReset`` when the text so far is void (module ``agents.answer_stream``). Ends when the run ends."""
        return answer_pieces(self.events(after_seq))

    def astream_answer(self: _HasEvents, after_seq: int = 0) -> AsyncIterator[AnswerPiece]:
        """``stream_answer()`` for ``async for``."""
        return aanswer_pieces(self.aevents(after_seq))
