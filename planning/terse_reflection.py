"""The reflector's terse reply form, translated into the wire ``Reflection`` (the policy still decides).

The JSON reply spends ~60 tokens on score keys and nulls before the answer starts. The terse form::

    accept 5 5 5
    answer: Paris is larger, by 0.7 million (2.1 vs 1.4).

    retry 4 2 4 step 3: write the entity as 'Dalwynbre'
    replan 2 2 4: look the capital up before its population
    escalate 3 3 3: which fiscal year does the task mean?

First line: the action (``accept``, ``retry``, ``replan``, ``escalate``; ``retry_step`` is read as ``retry``),
the completeness, correctness and format scores (1-5), for ``retry`` the step (``step N``), then optionally
``:`` and the feedback (for ``retry``: the change to make). Then ``answer:`` and the answer for the user, which
may run over several lines (required with ``accept``, unless the reviewer was shown an answer to confirm).
``overall_pass`` is true exactly for ``accept``.

    >>> r = parse_terse_reflection("retry 4 2 4 step 3: use 'Dalwynbre'")
    >>> r.action, r.retry_details.step_id, r.retry_details.modification, r.overall_pass
    ('retry_step', 3, "use 'Dalwynbre'", False)
"""

from __future__ import annotations

import re

import pydantic

from planning.errors import AnswerMissingError, LLMOutputError
from planning.lenient import describe_validation_error
from planning.models import Reflection, ReflectionAction

__all__ = ["find_verdict_line", "parse_terse_reflection", "render_terse_reflection"]

_ACTIONS: dict[str, ReflectionAction] = {"accept": "accept", "retry": "retry_step", "retry_step": "retry_step",
                                         "replan": "replan", "escalate": "escalate"}
# What makes a line a verdict: an action word followed by a score. Markdown emphasis around it is tolerated.
_VERDICT_START = re.compile(r"[*`_\s]*(accept|retry_step|retry|replan|escalate)\s+\d", re.IGNORECASE)
_VERDICT = re.compile(r"[*`_\s]*(?P<action>accept|retry_step|retry|replan|escalate)\s+(?P<scores>\d+\s+\d+\s+\d+)"
                      r"(?:\s+step\s+(?P<step>\d+))?\s*[*`_]*\s*(?::\s*(?P<text>.*))?", re.IGNORECASE)
_ANSWER = re.compile(r"\s*answer\s*:\s?", re.IGNORECASE)
_FORM = ("Reply with a first line like 'accept 5 5 5', 'retry 4 2 4 step 3: <the change>', "
         "'replan 2 2 4: <what to do differently>' or 'escalate 3 3 3: <question>', then 'answer: <answer>'.")


def find_verdict_line(text: str) -> int | None:
    """Index of the first line that starts like a terse verdict, or None (then the reply is JSON or junk)."""
    for i, line in enumerate(text.splitlines()):
        if _VERDICT_START.match(line):
            return i
    return None


def parse_terse_reflection(text: str, *, answer_given: bool = False) -> Reflection:
    """A terse reply as the wire ``Reflection``; every malformed reply raises ``LLMOutputError`` saying how to
    write it (the message goes back to the model for its one repair round). ``answer_given``: the reviewer was
    shown an answer to confirm (the plan's draft), so an accept without an ``answer:`` line confirms it (its
    ``answer`` is then None, for the caller to fill)."""
    lines = text.splitlines()
    start = find_verdict_line(text)
    if start is None:
        raise LLMOutputError(f"Your reply has no verdict line. {_FORM}", raw=text)
    m = _VERDICT.fullmatch(lines[start].rstrip())
    if m is None:
        raise LLMOutputError(f"Your verdict line {lines[start].strip()!r} is malformed. {_FORM}", raw=text)
    action = _ACTIONS[m.group("action").lower()]
    completeness, correctness, fmt = (int(s) for s in m.group("scores").split())
    feedback = (m.group("text") or "").strip()
    step = m.group("step")
    if action == "retry_step" and step is None:
        raise LLMOutputError(f"'retry' needs the step to run again: retry 4 2 4 step 3: <the change>. {_FORM}",
                             raw=text)
    if action != "retry_step" and step is not None:
        raise LLMOutputError(f"only 'retry' names a step; {m.group('action')} does not. {_FORM}", raw=text)
    answer = _answer(lines[start + 1:])
    if action == "accept" and not answer and not answer_given:
        raise AnswerMissingError(f"'accept' needs the answer for the user on a line 'answer: ...'. {_FORM}", raw=text)
    data = {"scores": {"completeness": completeness, "correctness": correctness, "format": fmt},
            "overall_pass": action == "accept", "action": action, "feedback": feedback, "answer": answer,
            "retry_details": {"step_id": int(step), "modification": feedback} if step is not None else None}
    try:
        return Reflection.model_validate(data)
    except pydantic.ValidationError as exc:
        raise LLMOutputError(f"Your verdict does not fit: {describe_validation_error(exc)} (scores are 1-5). "
                             f"{_FORM}", raw=text) from None


def _answer(lines: list[str]) -> str | None:
    for i, line in enumerate(lines):
        m = _ANSWER.match(line)
        if m is not None:
            rest = [line[m.end():], *lines[i + 1:]]
            while rest and rest[-1].strip() in ("", "```"):
                rest.pop()
            return "\n".join(rest).strip() or None
    return None


def render_terse_reflection(reflection: Reflection) -> str:
    """The terse reply a correct reflector writes for ``reflection`` (prompt examples, the simulated model);
    ``parse_terse_reflection`` reads it back to an equal Reflection when ``overall_pass`` matches the action."""
    s = reflection.scores
    head = f"{'retry' if reflection.action == 'retry_step' else reflection.action} " \
           f"{s.completeness} {s.correctness} {s.format}"
    if reflection.retry_details is not None:
        head += f" step {reflection.retry_details.step_id}"
    text = reflection.retry_details.modification if reflection.retry_details is not None else reflection.feedback
    if text:
        head += ": " + " ".join(text.split())
    return head + (f"\nanswer: {reflection.answer}" if reflection.answer else "")
