"""Write tools for the crash matrix: each appends its tag to a file (visible across processes), then works a
while, so a kill can land mid-step. ``append_tag_keyed`` takes the step's idempotency key and, like an outside
system honouring an ``Idempotency-Key`` header, applies a key once."""

from __future__ import annotations

import fcntl
import re
import time
from pathlib import Path

from agents import tool
from support import wire


def _append(path: str, line: str, *, unless_present: str | None = None) -> None:
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # two runners may write at once: the check and the append are atomic
        f.seek(0)
        if unless_present is None or unless_present not in f.read().split():
            f.write(line + "\n")
            f.flush()


@tool(permission="write")
def append_tag(path: str, tag: str, seconds: float) -> str:
    """Append a tag to a file, then work for a while.

    Args:
        path: The file.
        tag: The tag.
        seconds: How long the work takes after the write.
    """
    _append(path, tag)
    time.sleep(seconds)
    return tag


@tool(permission="write", key_param="key")
def append_tag_keyed(path: str, tag: str, seconds: float, key: str = "") -> str:
    """Append a tag to a file once per idempotency key, then work for a while.

    Args:
        path: The file.
        tag: The tag.
        seconds: How long the work takes after the write.
    """
    _append(path, f"{tag} {key}", unless_present=key)
    time.sleep(seconds)
    return tag


TOOLS = [append_tag, append_tag_keyed]


def tags(path: str | Path) -> list[str]:
    """The tags written, in order (one per line; a keyed line's key is dropped)."""
    p = Path(path)
    return [line.split()[0] for line in p.read_text().splitlines() if line.strip()] if p.exists() else []


def plan(shape: str, path: str, seconds: float | str, tool_name: str = "append_tag") -> str:
    """``chain``: 1 → 2 → 3 → 4. ``fanout``: 1 → {2, 3, 4} → 5. ``seconds``: every step's work after its write,
    or one value per step, comma-separated ("0.3,0.3,0.3,3")."""
    deps = {"chain": [[], [1], [2], [3]], "fanout": [[], [1], [1], [1], [2, 3, 4]]}[shape]
    each = [float(v) for v in str(seconds).split(",")]
    each += [each[-1]] * (len(deps) - len(each))
    return wire.plan(*[wire.step(i + 1, tool_name, {"path": path, "tag": f"t{i + 1}", "seconds": each[i]}, deps=d)
                       for i, d in enumerate(deps)])


def task_text(shape: str, path: str, seconds: float | str, tool_name: str) -> str:
    """The task a crash-matrix driver submits: it names its plan, so any process can plan it again (a driver
    killed before its plan reached the store is resumed by a process that never saw it)."""
    return f"write the tags [{shape}|{path}|{seconds}|{tool_name}]"


def replanning_script(request) -> str:
    """Role replies for any ``task_text`` task: the planner reads the plan's parameters from the task."""
    if request.role != "planner":
        return {"router": wire.route(), "reflector": wire.reflection(answer="tags written")}[request.role]
    text = " ".join(str(m.get("content", "")) for m in request.messages)
    shape, path, seconds, tool_name = re.search(r"write the tags \[([^|\]]+)\|([^|\]]+)\|([^|\]]+)\|([^|\]]+)\]",
                                                text).groups()
    return plan(shape, path, seconds, tool_name)


def script(plan_json: str):
    """Role replies of a scripted task running ``plan_json``."""
    return lambda request: {"router": wire.route(), "planner": plan_json,
                            "reflector": wire.reflection(answer="tags written")}[request.role]
