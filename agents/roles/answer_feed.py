"""The answer, read out of the reviewer's reply while the reply streams: once the reply has said it accepts (the terse
form's first line ``accept 5 5 5``; in JSON, ``"action": "accept"``, which the schema puts before ``"answer"``),
each piece of the answer's text is handed on as it arrives (``agents.engine.answer_events`` makes events of it).

Only text that cannot change is handed on: trailing whitespace waits for what follows it (the parser strips it), a
step reference (``{$step_3_result}``) waits for its closing brace and is sent filled, as ``filled_answer`` fills it,
and a JSON escape waits for its last character.

    >>> sent = []
    >>> feed = AnswerFeed(sent.append)
    >>> for reply in ("accept 5 5 5\\nans", "accept 5 5 5\\nanswer: Paris is ", "accept 5 5 5\\nanswer: Paris is larger."):
    ...     feed.feed(reply)
    >>> sent
    ['Paris is', ' larger.']
    >>> accepted_answer('{"scores": {"completeness": 5}, "overall_pass": true, "action": "accept", "answer": "Yes, 4\\\\u00b0')
    'Yes, 4°'
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from planning.terse_reflection import find_verdict_line

__all__ = ["AnswerFeed", "AnswerOut", "accepted_answer"]

AnswerOut = Callable[[str | None], None]
"""Where the answer goes as it streams: a piece of text, or None: the text sent so far is void (the reply was
replaced by its repair round)."""

_ACCEPT_LINE = re.compile(r"[*`_\s]*accept\s+\d", re.IGNORECASE)
_ANSWER_LINE = re.compile(r"\s*answer\s*:\s?", re.IGNORECASE)
_JSON_ACTION = re.compile(r'"action"\s*:\s*"(\w+)"')
_JSON_ANSWER = re.compile(r'"answer"\s*:\s*"')


def accepted_answer(reply: str) -> str | None:
    """The answer written so far by a reply that has accepted, or None (not accepted, or not known yet)."""
    head = reply.lstrip()
    if head.startswith(("{", "```")):
        return _json_answer(reply)
    return _terse_answer(reply)


def _terse_answer(reply: str) -> str | None:
    lines = reply.split("\n")
    verdict = find_verdict_line("\n".join(lines[:-1]))  # the verdict is known once its line has ended
    if verdict is None or not _ACCEPT_LINE.match(lines[verdict]):
        return None
    for i in range(verdict + 1, len(lines)):
        m = _ANSWER_LINE.match(lines[i])
        if m is not None:
            return "\n".join([lines[i][m.end():], *lines[i + 1:]]).lstrip()
    return None


def _json_answer(reply: str) -> str | None:
    action = _JSON_ACTION.search(reply)
    if action is None or action.group(1) != "accept":
        return None
    start = _JSON_ANSWER.search(reply, action.end())
    if start is None:
        return None
    raw, i = [], start.end()
    while i < len(reply):
        c = reply[i]
        if c == '"':
            break
        if c == "\\":
            width = 6 if reply[i + 1:i + 2] == "u" else 2
            if i + width > len(reply):
                break  # the escape is not complete yet
            raw.append(reply[i:i + width])
            i += width
            continue
        raw.append(c)
        i += 1
    try:
        return json.loads('"' + "".join(raw) + '"')
    except ValueError:
        return None  # a malformed escape: the parser refuses the reply, its repair round streams again


def _settled(answer: str) -> str:
    """The part of ``answer`` that what follows cannot change: up to an unclosed ``{`` that may open a step
    reference (``{$step_3_result}``, ``${step_3_result}``), without trailing space. Any other brace is the answer's
    own: a typed answer's JSON (``{"bigger": "Ro``, a tool call's arguments as they stream) goes on at once."""
    brace = answer.rfind("{")
    tail = answer[brace + 1:]
    if brace >= 0 and "}" not in tail and (not tail or tail.startswith("$") or answer[brace - 1:brace] == "$"):
        answer = answer[:brace]
    return answer.rstrip()


class AnswerFeed:
    """Fed the reply so far after each streamed piece; sends on what the answer gained. ``fill``: the step
    references written in full, as ``agents.roles.reflector.filled_answer`` fills them."""

    def __init__(self, out: AnswerOut, fill: Callable[[str], str] = lambda text: text) -> None:
        self._out, self._fill = out, fill
        self._reply = ""
        self._sent = ""

    def feed(self, reply: str) -> None:
        if not reply.startswith(self._reply):  # another reply: the repair round's
            self.void()
        self._reply = reply
        answer = accepted_answer(reply)
        if answer is None:
            return
        text = self._fill(_settled(answer))
        if len(text) > len(self._sent) and text.startswith(self._sent):
            self._out(text[len(self._sent):])
            self._sent = text

    def void(self) -> None:
        if self._sent:
            self._out(None)
        self._sent = ""
