"""Run the suite's right answers and wrong variants through the engine and count what code did.

The counting is pure (``right_record``, ``wrong_record``, ``summarize``) so it is tested on synthetic outcomes;
``measure`` is the loop that produces the outcomes with ``scripted.run_scripted``.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.tools import Tool
from benchmarks.generality.model import WRONG_CLASSES, GenTask
from benchmarks.generality.scripted import RunOutcome, Script, config_for, run_scripted

__all__ = ["RightRecord", "WrongRecord", "measure", "records_jsonable", "right_record", "summarize", "wrong_record"]


@dataclass(frozen=True, slots=True)
class RightRecord:
    """A right answer's run: did it go through untouched?"""

    task_id: str
    shape: str
    lang: str
    kind: str
    split: str
    config: str
    status: str
    false_veto: bool
    """Not accepted (escalated, failed, clarify, refused) although plan and answer were right."""
    rewrite: bool
    """The plan was changed by code or sent back (a replan), although it was right."""
    second_review: bool
    """More than router + planner + reviewer: 3 LLM calls."""
    answer_changed: bool
    """The task's final answer is not the one the reviewer gave."""
    llm_calls: int
    feedback: str = ""

    @property
    def clean(self) -> bool:
        return not (self.false_veto or self.rewrite or self.second_review or self.answer_changed)


@dataclass(frozen=True, slots=True)
class WrongRecord:
    """A wrong answer the reviewer accepted: did code catch it?"""

    task_id: str
    shape: str
    lang: str
    split: str
    config: str
    wrong_class: str
    caught: bool
    """The wrong answer did not come out as an accepted answer."""
    how: str
    """``vetoed`` (the task was not accepted), ``answer_changed`` (accepted with another answer) or ``""``."""
    right_clean: bool = True
    """The same task's right answer went through untouched: a catch then tells right from wrong, rather than
    refusing the task whatever its answer."""


def right_record(task: GenTask, config: str, out: RunOutcome) -> RightRecord:
    return RightRecord(task.id, task.shape, task.lang, task.kind, task.split, config, out.status,
                       false_veto=out.status != "accepted", rewrite=out.plan_changed or out.replans > 0,
                       second_review=out.llm_calls > 3, answer_changed=out.answer != task.answer,
                       llm_calls=out.llm_calls, feedback=out.feedback)


def wrong_record(task: GenTask, config: str, wrong_class: str, wrong_answer: str, out: RunOutcome,
                 right_clean: bool = True) -> WrongRecord:
    if out.status != "accepted":
        how = "vetoed"
    elif out.answer != wrong_answer:
        how = "answer_changed"
    else:
        how = ""
    return WrongRecord(task.id, task.shape, task.lang, task.split, config, wrong_class, caught=bool(how), how=how,
                       right_clean=right_clean)


def _right_counts(records: Sequence[RightRecord]) -> dict[str, int]:
    return {"tasks": len(records), "accepted": sum(r.status == "accepted" for r in records),
            "false_vetoes": sum(r.false_veto for r in records), "rewrites": sum(r.rewrite for r in records),
            "second_reviews": sum(r.second_review for r in records),
            "answers_changed": sum(r.answer_changed for r in records), "clean": sum(r.clean for r in records)}


def _group(records: Iterable[Any], key: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for r in records:
        out.setdefault(getattr(r, key), []).append(r)
    return dict(sorted(out.items()))


def _catch(records: Sequence[WrongRecord]) -> dict[str, Any]:
    caught = sum(r.caught for r in records)
    return {"variants": len(records), "caught": caught, "rate": round(caught / len(records), 3) if records else None,
            "caught_right_clean": sum(r.caught and r.right_clean for r in records)}


def _reason(record: RightRecord) -> str:
    """The gist of why a right answer did not go through: the replan's feedback without its fixed lead-in."""
    text = record.feedback.partition("cannot be accepted:")[2] or record.feedback
    return text.strip()[:110] or f"{record.status} ({record.llm_calls} LLM calls)"


def summarize(rights: Sequence[RightRecord], wrongs: Sequence[WrongRecord]) -> dict[str, Any]:
    """The report's numbers for one configuration and one half: right answers overall, by shape and by
    language; wrong answers caught by class (every class, also those with no variant: ``rate`` None)."""
    by_class = _group(wrongs, "wrong_class")
    vetoes = Counter(_reason(r) for r in rights if not r.clean)
    return {
        "right": {**_right_counts(rights),
                  "by_shape": {k: _right_counts(v) for k, v in _group(rights, "shape").items()},
                  "by_lang": {k: _right_counts(v) for k, v in _group(rights, "lang").items()}},
        "wrong": {"all": _catch(wrongs), "by_class": {c: _catch(by_class.get(c, [])) for c in WRONG_CLASSES},
                  "by_shape": {k: _catch(v) for k, v in _group(wrongs, "shape").items()}},
        "interventions": [{"reason": k, "count": n} for k, n in vetoes.most_common(12)],
    }


def measure(tasks: Sequence[GenTask], configs: Sequence[str], tools: Sequence[Tool],
            progress: Callable[[str], None] = print) -> tuple[list[RightRecord], list[WrongRecord], list[str]]:
    """Every task's right answer and wrong variants under each configuration: (rights, wrongs, the
    configurations this build has)."""
    rights: list[RightRecord] = []
    wrongs: list[WrongRecord] = []
    available = []
    # The runs' store is scratch: a directory per call, removed with what it holds (each run left one behind).
    with tempfile.TemporaryDirectory(prefix="tetrarch-generality-") as scratch:
        store = Path(scratch) / "bench.db"
        for name in configs:
            config = config_for(name, store)
            if config is None:
                progress(f"  configuration {name!r} is not in this build: skipped")
                continue
            available.append(name)
            for i, task in enumerate(tasks):
                out = run_scripted(Script(task.question, task.plan, task.answer), tools, config)
                rights.append(right_record(task, name, out))
                for cls, answer in task.wrong:
                    wrong_out = run_scripted(Script(task.question, task.plan, answer), tools, config)
                    wrongs.append(wrong_record(task, name, cls, answer, wrong_out, rights[-1].clean))
                if (i + 1) % 50 == 0:
                    progress(f"  {name}: {i + 1}/{len(tasks)} tasks")
    return rights, wrongs, available


def records_jsonable(rights: Sequence[RightRecord], wrongs: Sequence[WrongRecord]) -> dict[str, list[dict]]:
    return {"right": [asdict(r) for r in rights], "wrong": [asdict(w) for w in wrongs]}
