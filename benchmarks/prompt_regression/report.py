"""The results JSON of a run: what was measured, on which model, prompts, config and commit."""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.llm.profile import ModelProfile
from agents.config import RuntimeConfig
from benchmarks.prompt_regression.case_files import ROLES, Case
from benchmarks.prompt_regression.scoring import CaseResult
from benchmarks.prompt_regression.summary import summarize
from prompts import load_prompt

__all__ = ["PROMPTS_USED", "build_report", "prompt_info"]

PROMPTS_USED = ("router", "planner", "reflector", "repair")


def _git() -> dict[str, Any]:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10, check=False,
                              cwd=Path(__file__).parent).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                    text=True, timeout=10, check=False, cwd=Path(__file__).parent).stdout.strip())
        return {"commit": head or None, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def prompt_info(profile: ModelProfile) -> dict[str, dict[str, str]]:
    out = {}
    for name in PROMPTS_USED:
        t = load_prompt(name, profile.prompt(name))
        out[name] = {"template_id": t.template_id, "fingerprint": t.fingerprint}
    return out


def build_report(results: Sequence[CaseResult], cases: Mapping[str, Sequence[Case]], *, model: Mapping[str, Any],
                 config: RuntimeConfig, profile: ModelProfile, wall_s: float, started_at: str, command: str,
                 complete: bool = True) -> dict[str, Any]:
    roles = [r for r in ROLES if cases.get(r)]
    return {
        "kind": "prompt-regression",
        "generated_at": started_at,
        "complete": complete,
        "command": command,
        "wall_s": round(wall_s, 1),
        "model": dict(model),
        "prompts": prompt_info(profile),
        "config": {"context_token_budget": config.context_token_budget, "stream_plan": config.stream_plan,
                   "max_steps": config.max_steps, "router_min_confidence": config.router_min_confidence,
                   "accept_min_score": config.accept_min_score,
                   "accept_min_correctness": config.accept_min_correctness,
                   "prompt_versions": dict(profile.prompts)},
        "host": {"python": platform.python_version(), "machine": platform.machine(), **_git()},
        "cases_run": {r: len([x for x in results if x.role == r]) for r in roles},
        "cases_in_set": {r: len(cases[r]) for r in roles},
        "summary": {r: summarize(r, results) for r in roles},
        "cases": [r.as_dict() for r in results],
    }
