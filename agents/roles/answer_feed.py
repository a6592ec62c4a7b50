"""The answer, read out of the reviewer's reply while the reply streams: once the reply has said it accepts (the terse
form's first line ``accept 5 5 5``; in JSON, ``"action": "accept"``, which the schema puts before ``"answer"``),
each piece of the answer's text is handed on as it arrives (``agents.engine.answer_events`` makes events of it).

Only text that cannot change is handed on: trailing whitespace waits for what follows it (the parser strips it), a
step reference (``{$step_3_result}``) waits for its closing brace and is sent filled, as ``filled_answer`` fills it,
and a JSON escape waits for its last character. A JSON reply whose answer is a JSON value (a typed output:
``agents.roles.typed_review``) streams that value's text as ``answer_text`` spells it, a number once it has ended.

    >>> sent = []
    >>> feed = AnswerFeed(sent.append)
    >>> for reply in ("accept 5 5 5\\nans", "accept 5 5 5\\nanswer: Paris is ", "accept 5 5 5\\nanswer: Paris is larger."):
    ...     feed.feed(reply)
    >>> sent
    ['Paris is', ' larger.']
    >>> accepted_answer('{"scores": {"completeness": 5}, "overall_pass": true, "action": "accept", "answer": "Yes, 4\\\\u00b0')
    'Yes, 4°'
    >>> accepted_answer('{"action": "accept", "answer": {"bigger":"Rome","by":0.70')
    '{"bigger": "Rome", "by": '
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from planning.terse_reflection import find_verdict_line

__all__ = ["AnswerFeed", "AnswerOut", "accepted_answer", "answer_text"]

AnswerOut = Callable[[str | None], None]
"""Where the answer goes as it streams: a piece of text, or None: the text sent so far is void (the reply was
replaced by its repair round)."""

_ACCEPT_LINE = re.compile(r"[*`_\s]*accept\s+\d", re.IGNORECASE)
_ANSWER_LINE = re.compile(r"\s*answer\s*:\s?", re.IGNORECASE)
_JSON_ACTION = re.compile(r'"action"\s*:\s*"(\w+)"')
_JSON_ANSWER = re.compile(r'"answer"\s*:\s*')
_SPELLED = {"{": "{", "[": "[", "}": "}", "]": "]", ",": ", ", ":": ": "}
"""JSON's punctuation as ``json.dumps`` spells it (``answer_text``)."""
_SCALAR = re.compile(r"-?[0-9.eE+-]+|[a-z]+")
_OPEN_REFERENCE = re.compile(r"(?:\{|\{\$[A-Za-z0-9_.]*\}?|\$\{?[A-Za-z0-9_.]*\}?)(?:\.[A-Za-z0-9_]*)*$")
"""A reference (``dag.refs``: ``{$step_3_result}``, ``${step_3_result}``, ``$step_3_result``, a field path after
it) that what follows may still lengthen, at the end of the text."""


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
    if start is None or start.end() == len(reply) or reply[start.end()] == "n":  # not known yet, or null
        return None
    if reply[start.end()] == '"':
        return _string_prefix(reply, start.end())[0]
    return _value_text(reply, start.end())


def _string_prefix(reply: str, start: int) -> tuple[str | None, int, bool]:
    """The JSON string opening at ``reply[start]`` as far as it is written: its text (None for a malformed
    escape), where it ends, and whether it is closed. An escape counts once its last character is written."""
    raw, i = [], start + 1
    while i < len(reply) and reply[i] != '"':
        width = (6 if reply[i + 1:i + 2] == "u" else 2) if reply[i] == "\\" else 1
        if i + width > len(reply):
            break  # the escape is not complete yet
        raw.append(reply[i:i + width])
        i += width
    try:
        closed = reply[i:i + 1] == '"'
        return json.loads('"' + "".join(raw) + '"'), i + closed, closed
    except ValueError:
        return None, i, False  # a malformed escape: the parser refuses the reply, its repair round streams again


def _value_text(reply: str, start: int) -> str:
    """The JSON value (not a string) opening at ``reply[start]``, spelled as ``answer_text`` spells the whole value
    (the reply's answer is its text: ``agents.roles.typed_review``), as far as the reply settles it: a string
    up to its last complete escape, a number or a literal once what follows ends it."""
    out, depth, i = [], 0, start
    while i < len(reply):
        c = reply[i]
        if c in _SPELLED:
            out.append(_SPELLED[c])
            depth += {"{": 1, "[": 1, "}": -1, "]": -1}.get(c, 0)
            i += 1
        elif c == '"':
            text, i, closed = _string_prefix(reply, i)
            if text is None:
                break
            spelled = answer_text(text)
            out.append(spelled if closed else spelled[:-1])
            if not closed:
                break
        elif c.isspace():
            i += 1
            continue
        else:
            token = _SCALAR.match(reply, i)
            if token is None or token.end() == len(reply):  # what follows may still lengthen it
                break
            try:
                out.append(answer_text(json.loads(token.group())))
            except ValueError:
                break
            i = token.end()
        if depth <= 0:
            break
    return "".join(out)


def answer_text(value: Any) -> str:
    """A JSON answer's text: how ``agents.roles.typed_review`` writes a reply's answer that is a JSON value."""
    return json.dumps(value)


def _settled(answer: str) -> str:
    """The part of ``answer`` that what follows cannot change: up to a step reference that may still be being
    written (``{$step_3``, ``$step_3_result`` before the character that ends it), without trailing space."""
    held = _OPEN_REFERENCE.search(answer)
    if held is not None:
        answer = answer[:held.start()]
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
