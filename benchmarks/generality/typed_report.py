"""The typed generality report: ``generality-typed.json`` (every number, every run) and ``generality-typed.md``.

Written by ``python -m benchmarks.generality --typed`` (or ``tetrarch bench --suite generality --typed``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.outputs import output_spec
from benchmarks.generality.model import GenTask
from benchmarks.generality.report import HALVES
from benchmarks.generality.typed import OUTPUT_TYPES, shape_of
from benchmarks.generality.typed_measure import TypedRecord, records_jsonable, summarize_typed

__all__ = ["JSON_KEYS", "STEM", "build_typed_doc", "render_typed", "write_typed"]

STEM = "generality-typed"
_HALF = {"dev": "dev", "heldout": "held-out"}
JSON_KEYS = """\
- `suite`: "generality-typed"; `label`; `generated_at` (UTC); `suite_size`: `tasks`, `dev`, `heldout`,
  `by_answer_shape` (tasks per answer shape) and `output_types` (answer shape → the output type it is given).
- `configs.<config>.<profile>.<half>` (config: `default`, `numeric` as in generality.json; profile: `hosted`, the
  terse reply form, or `small-local`, the JSON form under the output's schema; half: `dev`, `heldout`): `tasks`,
  `accepted`, `schema_shown` (every review call was asked for the output's schema), `valid` (`result.output`
  validated), `equal` (valid, shown the schema, and equal to the expected value), `text_accepted` (the same
  task's text answer was accepted), `lost_against_text` (text accepted, typed not equal), `gained_against_text`,
  the same counts `by_answer_shape` and `by_shape`, and `misses[]` (each task not equal: why).
- `unavailable`: configurations this build does not have. `records[]`: one entry per typed run."""


def _size(tasks: Sequence[GenTask]) -> dict[str, Any]:
    shapes = Counter(shape_of(t.expect) for t in tasks)
    types = {s: output_spec(OUTPUT_TYPES[s], importable=True).type_path for s in sorted(shapes)}
    return {"tasks": len(tasks), "dev": sum(t.split == "dev" for t in tasks),
            "heldout": sum(t.split == "heldout" for t in tasks), "by_answer_shape": dict(sorted(shapes.items())),
            "output_types": types}


def build_typed_doc(tasks: Sequence[GenTask], records: Sequence[TypedRecord], configs: Sequence[str],
                    available: Sequence[str], label: str) -> dict[str, Any]:
    halves = [h for h in HALVES if any(t.split == h for t in tasks)]
    profiles = list(dict.fromkeys(r.profile for r in records))
    doc = {name: {p: {h: summarize_typed([r for r in records if (r.config, r.profile, r.split) == (name, p, h)])
                      for h in halves} for p in profiles} for name in available}
    return {"suite": STEM, "label": label, "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "suite_size": _size(tasks), "configs": doc, "unavailable": [c for c in configs if c not in available],
            "records": records_jsonable(records)}


def _row(first: str, c: dict[str, int]) -> str:
    return (f"| {first} | {c['tasks']} | {c['accepted']} | {c['schema_shown']} | {c['valid']} | **{c['equal']}** | "
            f"{c['text_accepted']} | {c['lost_against_text']} |")


_HEAD = ["| {} | tasks | accepted | schema shown | valid | equal to expected | text accepted | lost vs text |",
         "|---|---|---|---|---|---|---|---|"]


def _section(name: str, profiles: dict[str, Any]) -> list[str]:
    out = [f"## Configuration `{name}`", ""]
    for profile, halves in profiles.items():
        out += [f"### Reply form `{profile}`", "", _HEAD[0].format("half"), _HEAD[1]]
        out += [_row(_HALF[h], s) for h, s in halves.items()]
        out += ["", "By answer shape (both halves):", "", _HEAD[0].format("answer shape"), _HEAD[1]]
        shapes = sorted({k for s in halves.values() for k in s["by_answer_shape"]})
        for shape in shapes:
            cells = [s["by_answer_shape"][shape] for s in halves.values() if shape in s["by_answer_shape"]]
            out.append(_row(f"`{shape}`", {k: sum(c[k] for c in cells) for k in cells[0]}))
        misses = [m for s in halves.values() for m in s["misses"]]
        if misses:
            out += ["", f"Not equal to the expected value ({len(misses)}; *text accepted* says whether the text "
                    "answer of the same task went through):", ""]
            out += [f"- `{m['task_id']}` ({m['output_type']}): {m['status']}, text accepted {m['text_accepted']}: "
                    f"{m['why'] or '-'}" for m in misses[:30]]
        out.append("")
    return out


def render_typed(doc: dict[str, Any]) -> str:
    size = doc["suite_size"]
    out = [f"# Generality suite, typed outputs — {doc['label']}", "",
           f"Generated {doc['generated_at']} by `python -m benchmarks.generality --typed` (`tetrarch bench --suite "
           f"generality --typed`). {size['tasks']} tasks ({size['dev']} dev, {size['heldout']} held-out), each "
           "run with `output_type` of its expected answer's shape (`benchmarks/generality/typed.py`, by shape, never "
           "by task): " + ", ".join(f"{k} → `{size['output_types'][k]}` ({n})"
                                    for k, n in size["by_answer_shape"].items()) + ".", "",
           "Every role is scripted as a correct model; the reviewer writes the expected value as JSON under the "
           "schema it is shown (the value itself in the JSON reply form, its JSON text on the terse answer line). "
           "*Equal*: `result.output` validated, equal to the expected value, and the schema was shown to every review "
           "call. *Text accepted*: the same task's text answer through the same configuration (the numeric "
           "configuration's own false vetoes of right plans show there too).", ""]
    for name in doc["unavailable"]:
        out += [f"Configuration `{name}` is not in this build: not measured.", ""]
    for name, profiles in doc["configs"].items():
        out += _section(name, profiles)
    return "\n".join(out + [f"## JSON keys (`{STEM}.json`)", "", JSON_KEYS, ""])


def write_typed(doc: dict[str, Any], out_dir: Path, stem: str = STEM) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    js.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    md.write_text(render_typed(doc))
    return js, md
