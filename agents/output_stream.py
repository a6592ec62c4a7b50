"""``handle.stream_output()`` / ``astream_output()``: with ``output_type=``, the answer as validated partial values of
that type while the reviewer writes it, read off ``stream_answer()``'s pieces (then the answer's JSON text).

As the text grows, it is validated with pydantic's partial validation (``TypeAdapter.validate_json(text,
experimental_allow_partial=True)``), and each value that validates and differs from the last one yielded is
yielded. What that gives depends on the type:

- ``list[...]``, ``dict[...]``, a ``TypedDict`` whose keys are not all required: they grow item by item (an item
  that is not complete or does not validate yet is left out, as pydantic's partial validation leaves the last one);
- a pydantic model, a dataclass, a ``TypedDict`` with required keys: pydantic validates them only whole, so one
  appears once every required field is written (a field with a default shows the default until written), and
  again when a later field is written;
- a JSON text that is not an object or an array (``int``, ``str``, ``float``): nothing until the end.

Strings and numbers only ever appear whole (a number still being written is left out, since ``12`` may become
``123``). The last value yielded for an accepted task equals ``result.output``. When the answer's text is void
(``AnswerReset``: a check vetoed the accept, or the task ended without accepting), an ``OutputReset`` says the
values yielded since the previous one are void; a new stream may follow.

    >>> from agents.answer_stream import AnswerReset
    >>> list(output_values(['["Ro', 'me", "Par', 'is"]'], list[str]))
    [[], ['Rome'], ['Rome', 'Paris']]
    >>> list(output_values(['[1', '2, ', AnswerReset("vetoed"), '[3]'], list[int]))
    [[], [12], OutputReset(reason='vetoed'), [3]]
    >>> list(output_values(['4', '2'], int))
    [42]
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, assert_never

from pydantic import TypeAdapter, ValidationError

from agents.answer_stream import AnswerPiece, AnswerReset, StreamsAnswer
from agents.outputs import OutputSpec, OutputTypeError, output_spec, output_type_of, validate_output

__all__ = ["NoOutputTypeError", "OutputReset", "StreamsOutput", "aoutput_values", "output_values"]


@dataclass(frozen=True, slots=True)
class OutputReset:
    """The values yielded since the previous reset are void (``reason`` says why); a new stream may follow."""

    reason: str = ""


class NoOutputTypeError(OutputTypeError):
    """``stream_output()`` on a handle that does not know the task's output type."""


_NOTHING: Any = object()
_OPEN_NUMBER = re.compile(r"-?[0-9][0-9.eE+-]*$|-$")
"""A number at the end of the text, which what follows may still lengthen."""


class _Values:
    """The answer's text since the last reset, and the last value yielded from it."""

    def __init__(self, output_type: Any) -> None:
        self._spec = output_spec(output_type, importable=False)
        exact = output_type_of(self._spec) if isinstance(output_type, OutputSpec) else output_type  # not by name
        self._adapter: TypeAdapter[Any] = TypeAdapter(exact)
        self._text, self._last = "", _NOTHING

    def on(self, piece: AnswerPiece) -> list[Any]:
        match piece:
            case AnswerReset(reason=reason):
                voided, self._text, self._last = self._last is not _NOTHING, "", _NOTHING
                return [OutputReset(reason)] if voided else []
            case str():
                self._text += piece
                if not self._text.lstrip().startswith(("{", "[")):
                    return []  # a scalar: partial text of it is no value of it
                return self._changed(self._partial())
            case _:
                assert_never(piece)

    def _partial(self) -> Any:
        text = _OPEN_NUMBER.sub("", self._text)
        try:
            return self._adapter.validate_json(text, experimental_allow_partial=True)
        except ValidationError:  # not enough written yet (a model's required field is still missing)
            return _NOTHING

    def end(self) -> list[Any]:
        """The whole answer of an accepted task (its text, when the stream ends unvoided), validated: the value
        ``result.output`` holds. ``OutputInvalid`` if it does not validate (the type is not the task's)."""
        if not self._text.strip():
            return []
        return self._changed(validate_output(self._spec, self._text))

    def _changed(self, value: Any) -> list[Any]:
        if value is _NOTHING or (self._last is not _NOTHING and value == self._last):
            return []
        self._last = value
        return [value]


def output_values(pieces: Iterable[AnswerPiece], output_type: Any) -> Iterator[Any]:
    """The validated values (and ``OutputReset``s) that the answer's ``pieces`` make, as ``stream_output`` yields.
    A type pydantic cannot validate raises ``OutputTypeError`` here, before the first piece is read."""
    return _read(pieces, _Values(output_type))


def aoutput_values(pieces: AsyncIterator[AnswerPiece], output_type: Any) -> AsyncIterator[Any]:
    return _aread(pieces, _Values(output_type))


def _read(pieces: Iterable[AnswerPiece], values: _Values) -> Iterator[Any]:
    for piece in pieces:
        yield from values.on(piece)
    yield from values.end()


async def _aread(pieces: AsyncIterator[AnswerPiece], values: _Values) -> AsyncIterator[Any]:
    async for piece in pieces:
        for value in values.on(piece):
            yield value
    for value in values.end():
        yield value


class _Handle(Protocol):
    _output_type: Any

    def stream_answer(self, after_seq: int = 0) -> Iterator[AnswerPiece]: ...

    def astream_answer(self, after_seq: int = 0) -> AsyncIterator[AnswerPiece]: ...


def _type_of(handle: _Handle, output_type: Any) -> Any:
    found = output_type if output_type is not None else handle._output_type
    if found is None:
        raise NoOutputTypeError(
            "stream_output() needs the task's output type, and this handle has none: submit the task with "
            "output_type=... (orch.submit(task, output_type=CityDiff)), or, for a handle from orch.handle(), "
            "resume() or respond(), pass it here: handle.stream_output(output_type=CityDiff); stream_answer() "
            "streams the answer's text without a type")
    return found


class StreamsOutput(StreamsAnswer):
    """``TaskHandle``'s answer stream, and its typed values (``output_type``: the one the task was submitted with)."""

    _output_type: Any = None

    def stream_output(self, after_seq: int = 0, *, output_type: Any = None) -> Iterator[Any]:
        """The answer as validated partial values of the task's output type while the reviewer writes it, and an
        ``OutputReset`` when those so far are void (module ``agents.output_stream``); the last one is
        ``result.output``. ``output_type``: for a handle that does not know it (``orch.handle(task_id)``)."""
        return output_values(self.stream_answer(after_seq), _type_of(self, output_type))

    def astream_output(self, after_seq: int = 0, *, output_type: Any = None) -> AsyncIterator[Any]:
        """``stream_output()`` for ``async for``."""
        return aoutput_values(self.astream_answer(after_seq), _type_of(self, output_type))
