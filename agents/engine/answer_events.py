"""The reviewer's answer as events while it streams: ``answer_delta`` for each piece, ``answer_reset`` when the
accept the pieces came from does not count (``handle.stream_answer`` reads them).

The pieces are emitted without a checkpoint: the sink commits them at the end of the event-loop tick they arrive in,
so a live reader sees each within a tick of the model writing it.
"""

from __future__ import annotations

from agents.engine.sink import TaskSink
from agents.events import AnswerDeltaPayload, AnswerResetPayload

__all__ = ["AnswerEvents"]

_REPAIRED = "the reviewer's reply was unreadable and was asked for again"


class AnswerEvents:
    """One review's stream of answer events: ``out`` is what the reflector is handed (``AnswerOut``)."""

    def __init__(self, sink: TaskSink) -> None:
        self._sink = sink
        self.streamed = False
        """Text was streamed since the last reset."""

    def out(self, piece: str | None) -> None:
        if piece is None:
            self.void(_REPAIRED)
            return
        self._sink.emit(AnswerDeltaPayload(text=piece))
        self.streamed = True

    def void(self, reason: str) -> None:
        """The streamed text does not count: an ``answer_reset`` if any was streamed."""
        if self.streamed:
            self._sink.emit(AnswerResetPayload(reason=reason))
            self.streamed = False
