"""Parse a plan while it streams, whichever form the model writes: the JSON wire form or the terse form.

Each step is returned the moment it is complete (its JSON object closes, or its line ends), so the executor
can start it before the planner has finished writing the rest of the plan.

    >>> p = StreamingPlanParser()
    >>> p.feed('```json\\n{"steps": [{"step_id": 1, "tool_name": "search", "tool_input": {"q": "a}"}}')
    [PlanStep(step_id=1, description='search q=a}', tool_name='search', tool_input={'q': 'a}'}, depends_on=[])]
    >>> p.feed(', {"step_id": 2, "depends_on": [1]}]}\\n```'), p.close()
    ([PlanStep(step_id=2, description='', tool_name=None, tool_input={}, depends_on=[1])], [])
    >>> t = StreamingPlanParser()
    >>> [s.tool_input for s in t.feed('Plan:\\n1. search(q="a")\\n2. calc')]
    [{'q': 'a'}]

The form is decided line by line before the first step: a line that starts like ``1. name(`` makes it terse, a
``{`` or ``[`` on any other line makes it JSON; prose and fence lines before that are skipped. The chosen
parser then sees the text from the start of the deciding line. One pass in total either way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from planning.errors import LLMOutputError
from planning.models import PlanStep
from planning.stream_json import JsonPlanParser
from planning.terse import TersePlanParser

__all__ = ["JsonPlanParser", "StreamingPlanParser", "TersePlanParser"]

_TERSE_HEAD = re.compile(r"\d+\s*\.\s*[A-Za-z_][A-Za-z0-9_.\-]*\s*\(")
# Every prefix of a terse head: while the line so far is one of these, it may still become a step line.
_TERSE_PREFIX = re.compile(r"(?:\d+(?:\s*(?:\.(?:\s*(?:[A-Za-z_][A-Za-z0-9_.\-]*\s*)?)?)?)?)?")


class StreamingPlanParser:
    """Feed text chunks; get each PlanStep once, in order, as soon as it is complete (JSON or terse)."""

    def __init__(self, params: Mapping[str, Sequence[str]] | None = None) -> None:
        """``params``: tool → parameter names in order, so terse lines may give arguments by position."""
        self._params = params
        self._target: JsonPlanParser | TersePlanParser | None = None
        self._line: list[str] = []
        self._maybe_terse = True
        self._closed = False

    @property
    def steps(self) -> list[PlanStep]:
        return [] if self._target is None else self._target.steps

    @property
    def answer(self) -> str | None:
        """The answer's shape a terse plan wrote after its steps (``TersePlanParser.answer``); None in
        JSON."""
        return self._target.answer if isinstance(self._target, TersePlanParser) else None

    @property
    def form(self) -> str | None:
        """``"json"``, ``"terse"``, or None while undecided."""
        if self._target is None:
            return None
        return "terse" if isinstance(self._target, TersePlanParser) else "json"

    def feed(self, chunk: str) -> list[PlanStep]:
        if self._closed:
            raise LLMOutputError("the plan stream was already closed")
        if self._target is not None:
            return self._target.feed(chunk)
        pieces = chunk.split("\n")
        for k, piece in enumerate(pieces):
            self._line.append(piece)
            target = self._decide(piece)
            if target is not None:
                self._target = target
                rest = "\n".join(pieces[k + 1:])
                return target.feed("".join(self._line) + ("\n" + rest if k + 1 < len(pieces) else ""))
            if k + 1 < len(pieces):  # the line ended undecided: prose or a fence, skipped
                self._line, self._maybe_terse = [], True
        return []

    def _decide(self, piece: str) -> JsonPlanParser | TersePlanParser | None:
        if self._maybe_terse:
            head = "".join(self._line).lstrip()
            if _TERSE_HEAD.match(head):
                return TersePlanParser(self._params)
            self._maybe_terse = _TERSE_PREFIX.fullmatch(head) is not None
            if self._maybe_terse:
                return None
            piece = head  # the whole line so far, not only this chunk, may hold the bracket
        if "{" in piece or "[" in piece:
            return JsonPlanParser()
        return None

    def close(self) -> list[PlanStep]:
        """End of stream. Raises LLMOutputError when no plan (JSON ``steps`` array or step lines) was seen."""
        if self._target is not None:
            self._closed = True
            return self._target.close()
        self._closed = True
        raise LLMOutputError('Your output has no "steps" array and no numbered step lines. Return the plan in the '
                             'form you were asked for: one JSON object {"steps": [{"step_id": 1, ...}]}, or one '
                             "line a step: 1. tool(param=value, ...).", raw="".join(self._line))
