"""Task builders shared by the numeric shapes: difference, ratio, total, signed change and comparison.

A shape supplies the items (each: how the question names it, its value, how its tool wrote it, and the call that
fetches it) and a ``Frame`` (the metric's noun and how a computed figure is written in the task's language);
the builder writes the question, the right plan and answer, and the wrong answers of every class that applies.
When every item's tool returns a number (or a record with a numeric field) the right plan ends with a calculator
step over ``$step_N_result`` references; otherwise the plan only fetches and the reviewer does the arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.generality.locale import number
from benchmarks.generality.model import Expect, GenTask, WrongClass, call, plan
from benchmarks.generality.phrases import ANSWERS, QUESTIONS, ROSE_FELL

__all__ = ["Frame", "Item", "change", "compare", "difference", "off", "off_count", "ratio", "smaller", "total"]

_DRIFT = 1.37
"""An unsupported figure is the right one scaled by this: no output supports it, and it is not a near miss."""


@dataclass(frozen=True, slots=True)
class Item:
    """One fetched quantity: ``label`` as the question names it, ``value``, ``shown`` as the tool wrote it, and
    the call fetching it. ``field``: the record field holding the figure; ``numeric``: the output is a number
    (or has ``field``), so a calculator step can use it."""

    label: str
    value: float
    shown: str
    tool: str
    args: dict[str, Any]
    field: str | None = None
    numeric: bool = True

    def ref(self, step_id: int) -> str:
        return f"{{$step_{step_id}_result{'.' + self.field if self.field else ''}}}"


@dataclass(frozen=True, slots=True)
class Frame:
    """The shape and language of a task: the metric's noun in that language, and how a computed figure is
    written (``fmt`` gets a magnitude; signs are added by the builders)."""

    shape: str
    lang: str
    metric: str
    fmt: Callable[[float], str]
    index: int = 0
    extra: dict[str, str] = field(default_factory=dict)

    def task_id(self, kind: str) -> str:
        return f"{self.shape}-{self.lang}-{self.index}-{kind}"


def off(value: float) -> float:
    """A figure no output supports (the right one, drifted)."""
    return value * _DRIFT if value else 7.0


def off_count(value: int) -> int:
    """A whole number no output supports: the right one drifted, and at least two away (small counts)."""
    return max(round(value * _DRIFT), value + 2)


def _plan(items: Sequence[Item], expression: str | None) -> dict[str, Any]:
    steps = [call(i, it.tool, **it.args) for i, it in enumerate(items, start=1)]
    if expression is not None and all(it.numeric for it in items):
        refs = {f"r{i}": it.ref(i) for i, it in enumerate(items, start=1)}
        steps.append(call(len(items) + 1, "calculator", tuple(range(1, len(items) + 1)),
                          expression=expression.format(**refs)))
    return plan(*steps)


def _task(frame: Frame, kind: str, items: Sequence[Item], slots: dict[str, str], expression: str | None,
          wrong: dict[WrongClass, dict[str, str]], expect: Expect) -> GenTask:
    base = {"metric": frame.metric, **{k: it.label for k, it in zip("abc", items)},
            **{f"v{k}": it.shown for k, it in zip("abc", items)}}
    template = ANSWERS[kind][frame.lang]
    return GenTask(
        id=frame.task_id(kind), shape=frame.shape, lang=frame.lang, kind=kind,
        question=QUESTIONS[kind][frame.lang].format(**base), tools=tuple(sorted({it.tool for it in items})),
        plan=_plan(items, expression), answer=template.format(**{**base, **slots}),
        wrong=tuple((cls, template.format(**{**base, **slots, **over})) for cls, over in wrong.items()),
        expect=expect)


def difference(frame: Frame, a: Item, b: Item) -> GenTask:
    """Which has more, and by how much: the winner named first, the gap as a magnitude."""
    gap = abs(a.value - b.value)
    win, lose = (a, b) if a.value >= b.value else (b, a)
    slots = {"win": win.label, "x": frame.fmt(gap), "va": win.shown, "vb": lose.shown}
    return _task(frame, "difference", [a, b], slots, "{r1} - {r2}",
                 {"wrong_entity": {"win": lose.label},
                  "unsupported_figure": {"x": frame.fmt(off(gap))}},
                 Expect(number=gap, names=(win.label,), rivals=(lose.label,)))


def ratio(frame: Frame, a: Item, b: Item) -> GenTask:
    """a over b, two decimals; the inverted ratio is the classic slip."""
    value = a.value / b.value
    slots = {"x": number(value, frame.lang, 2)}
    return _task(frame, "ratio", [a, b], slots, "{r1} / {r2}",
                 {"ratio_inverted": {"x": number(b.value / a.value, frame.lang, 2), "va": b.shown, "vb": a.shown},
                  "unsupported_figure": {"x": number(off(value), frame.lang, 2)}},
                 Expect(number=value, tolerance=0.02))


def smaller(frame: Frame, a: Item, b: Item) -> GenTask:
    """How many times smaller b is than a (a over b, with a the larger): the question names the smaller first in
    its wording, and dividing the way it is read is the slip."""
    big, small = (a, b) if a.value >= b.value else (b, a)
    value = big.value / small.value
    return _task(frame, "smaller", [big, small], {"x": number(value, frame.lang, 2)}, "{r1} / {r2}",
                 {"ratio_inverted": {"x": number(small.value / big.value, frame.lang, 2), "va": small.shown,
                                     "vb": big.shown},
                  "unsupported_figure": {"x": number(off(value), frame.lang, 2)}},
                 Expect(number=value, tolerance=0.02))


def total(frame: Frame, a: Item, b: Item, c: Item) -> GenTask:
    """The sum of three; leaving one out is the slip."""
    value = a.value + b.value + c.value
    slots = {"x": frame.fmt(value), "parts": " + ".join(it.shown for it in (a, b, c))}
    return _task(frame, "total", [a, b, c], slots, "{r1} + {r2} + {r3}",
                 {"item_left_out": {"x": frame.fmt(a.value + b.value), "parts": f"{a.shown} + {b.shown}"},
                  "unsupported_figure": {"x": frame.fmt(off(value))}},
                 Expect(number=value))


def change(frame: Frame, a: Item, b: Item) -> GenTask:
    """The signed change from a to b ("-35 ms: it fell"); the sign the other way round is the slip."""
    delta = b.value - a.value
    up, down = ROSE_FELL[frame.lang]

    def signed(x: float) -> str:
        return ("+" if x >= 0 else "-") + frame.fmt(abs(x))

    slots = {"x": signed(delta), "moved": up if delta >= 0 else down}
    return _task(frame, "change", [a, b], slots, "{r2} - {r1}",
                 {"wrong_sign": {"x": signed(-delta), "moved": down if delta >= 0 else up},
                  "unsupported_figure": {"x": signed(off(delta))}},
                 Expect(number=abs(delta), sign=1 if delta >= 0 else -1))


def compare(frame: Frame, a: Item, b: Item) -> GenTask:
    """Which is higher: only a name is asked for (no computing step)."""
    win, lose = (a, b) if a.value >= b.value else (b, a)
    slots = {"win": win.label, "lose": lose.label, "va": win.shown, "vb": lose.shown}
    return _task(frame, "compare", [a, b], slots, None,
                 {"wrong_entity": {"win": lose.label, "lose": win.label, "va": lose.shown, "vb": win.shown},
                  "unsupported_figure": {"va": frame.fmt(off(win.value))}},
                 Expect(names=(win.label,), rivals=(lose.label,)))
