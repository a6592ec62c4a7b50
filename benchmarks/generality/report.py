"""The generality report: ``generality.json`` (every number, every run) and ``generality.md`` (the tables).

The markdown documents the JSON's keys (``JSON_KEYS``), so a reader of either finds the other.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.generality.measure import RightRecord, WrongRecord, records_jsonable, summarize
from benchmarks.generality.model import SHAPES, WRONG_CLASSES, GenTask

__all__ = ["JSON_KEYS", "build_doc", "render_markdown", "write_report"]

HALVES = ("dev", "heldout")
_NAMES = {"dev": "dev", "heldout": "held-out"}
JSON_KEYS = """\
- `suite`: "generality"; `label`: what was measured (e.g. "before" the sound checks); `generated_at` (UTC).
- `suite_size`: `tasks`, `dev`, `heldout`, `by_shape`, `by_lang`, `wrong_variants` (per wrong class).
- `configs.<name>.<half>` (name: `default` = `RuntimeConfig()`, `numeric` = `builtin_checks=("sound",
  "numeric")`; half: `dev`, `heldout`):
  - `right`: `tasks`, `accepted`, `false_vetoes` (right answer not accepted), `rewrites` (plan changed by code or
    replanned), `second_reviews` (more than 3 LLM calls), `answers_changed` (final answer is not the reviewer's),
    `clean` (none of these), and the same counts `by_shape` and `by_lang`;
  - `wrong`: `all`, `by_class.<class>` and `by_shape.<shape>`, each `variants`, `caught` (the wrong answer did not
    come out accepted), `rate` (caught / variants; null without variants), `caught_right_clean` (caught on a task
    whose right answer went through untouched: a catch that tells right from wrong);
  - `interventions`: the most common reasons code gave when a right answer did not go through (`reason`, `count`).
- `unavailable`: configurations this build does not have (skipped, not measured).
- `records.right[]` / `records.wrong[]`: one entry per run (task id, shape, lang, split, config, and the flags
  above; `feedback` is the first replan's reason)."""


def _size(tasks: Sequence[GenTask]) -> dict[str, Any]:
    return {"tasks": len(tasks), "dev": sum(t.split == "dev" for t in tasks),
            "heldout": sum(t.split == "heldout" for t in tasks),
            "by_shape": dict(Counter(t.shape for t in tasks)), "by_lang": dict(Counter(t.lang for t in tasks)),
            "wrong_variants": dict(Counter(c for t in tasks for c, _ in t.wrong))}


def build_doc(tasks: Sequence[GenTask], rights: Sequence[RightRecord], wrongs: Sequence[WrongRecord],
              configs: Sequence[str], available: Sequence[str], label: str) -> dict[str, Any]:
    run = [h for h in HALVES if any(t.split == h for t in tasks)]  # a run of one half reports that half only
    halves = {name: {half: summarize([r for r in rights if r.config == name and r.split == half],
                                     [w for w in wrongs if w.config == name and w.split == half])
                     for half in run} for name in available}
    return {"suite": "generality", "label": label, "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "suite_size": _size(tasks), "configs": halves,
            "unavailable": [c for c in configs if c not in available], "records": records_jsonable(rights, wrongs)}


def _cell(c: dict[str, int]) -> str:
    return f"{c['accepted']}/{c['tasks']} · {c['false_vetoes']} · {c['rewrites']} · {c['second_reviews']}"


def _header(first: str, halves: Sequence[str]) -> list[str]:
    return [f"| {first} | " + " | ".join(_NAMES[h] for h in halves) + " |", "|---" * (len(halves) + 1) + "|"]


def _right_table(cfg: dict[str, Any], key: str, names: Sequence[str]) -> list[str]:
    lines = _header(key, list(cfg))
    for name in names:
        cells = [_cell(cfg[h]["right"][f"by_{key}"][name]) if name in cfg[h]["right"][f"by_{key}"] else "-"
                 for h in cfg]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _rate(c: dict[str, Any]) -> str:
    if not c["variants"]:
        return "-"
    through = c["caught_right_clean"]
    return f"{c['caught']}/{c['variants']} ({100 * c['rate']:.0f}%; {through} with the right answer through)"


def _config_section(name: str, cfg: dict[str, Any]) -> list[str]:
    out = [f"## Configuration `{name}`", "", "Right answers (each should be accepted after 3 LLM calls, unchanged):",
           "", "| half | tasks | accepted | false vetoes | rewrites | second reviews | answers changed |",
           "|---|---|---|---|---|---|---|"]
    for h in cfg:
        r = cfg[h]["right"]
        out.append(f"| {h} | {r['tasks']} | {r['accepted']} | {r['false_vetoes']} | {r['rewrites']} | "
                   f"{r['second_reviews']} | {r['answers_changed']} |")
    out += ["", "By shape and by language (accepted/tasks · false vetoes · rewrites · second reviews):", ""]
    out += _right_table(cfg, "shape", SHAPES) + [""] + _right_table(cfg, "lang", ("en", "fr", "de", "es"))
    out += ["", "Wrong answers accepted by a fooled reviewer, caught by code (caught/variants; of those, how many on a "
            "task whose right answer went through untouched — a catch that tells right from wrong):", ""]
    out += _header("class", list(cfg))
    for cls in (*WRONG_CLASSES, "all"):
        cells = [_rate(cfg[h]["wrong"]["all"] if cls == "all" else cfg[h]["wrong"]["by_class"][cls]) for h in cfg]
        out.append(f"| {cls} | " + " | ".join(cells) + " |")
    reasons = cfg["dev"]["interventions"] if "dev" in cfg else []
    if reasons:
        out += ["", "Why code stopped right answers (dev half only; the held-out half is not read for tuning):", ""]
        out += [f"- {r['count']} x {r['reason']}" for r in reasons]
    return out + [""]


def render_markdown(doc: dict[str, Any]) -> str:
    size = doc["suite_size"]
    out = [f"# Generality suite — {doc['label']}", "",
           f"Generated {doc['generated_at']} by `tetrarch bench --suite generality` (docs/generality.md). "
           f"{size['tasks']} tasks ({size['dev']} dev, {size['heldout']} held-out), "
           f"{len(size['by_shape'])} tool-output shapes, {len(size['by_lang'])} languages; wrong variants: "
           + ", ".join(f"{k} {v}" for k, v in size["wrong_variants"].items()) + ".", "",
           "Every role is scripted as a correct model (router: plan; planner: the right plan; reviewer: accept "
           "5/5/5 with the answer), so whatever else happens is code's doing.", ""]
    for name in doc["unavailable"]:
        out += [f"Configuration `{name}` is not in this build: not measured.", ""]
    for name, cfg in doc["configs"].items():
        out += _config_section(name, cfg)
    return "\n".join(out + ["## JSON keys (`generality.json`)", "", JSON_KEYS, ""])


def write_report(doc: dict[str, Any], out_dir: Path, stem: str = "generality") -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    js.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    md.write_text(render_markdown(doc))
    return js, md
