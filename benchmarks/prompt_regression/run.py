"""Run the prompt regression set against a local model and write the results.

    python -m benchmarks.prompt_regression.run [--model qwen2.5-coder-1.5b] [--role planner] [--limit N]
        [--case ID] [--prompt planner=v10] [--out benchmarks/results]
    python -m benchmarks.prompt_regression.run --rerender benchmarks/results/prompt-regression-MODEL.json

The embedded llama.cpp server is started once (``agents.llm.local.start_local_llm``, the client the
Orchestrator uses with ``llm=None``) and stopped at the end, also on Ctrl-C, SIGTERM or an error. Every case
goes through the real role class — ``Router``, ``Planner``, ``Reflector`` — built the way
``agents.cluster.actor_set.create_actors`` builds them for the demo: the built-in tools (``builtin_tools(workspace)``:
calculator, doc_search, run_python, read_file, write_file, list_files), their catalogue text and JSON
Schemas, and the demo's ``RuntimeConfig``; the prompt versions and reply forms are the embedded model's profile's
(``agents.llm.SMALL_LOCAL``) unless pinned with ``--prompt``. Nothing runs a tool: reflector cases carry recorded
step results.

Metrics (each case passes or fails; a model reply that stays invalid after the repair round is a failure):

- router: the route production acts on — the model's route after ``effective_route`` (low confidence
  becomes ``clarify``) — equals the expected route; the model's raw route is reported beside it;
- planner: valid plan rate — the Planner yields ``PlanCompleted``, i.e. its streamed output parsed and
  validated against the real tool schemas, possibly after its one repair round (counted). Structural
  expectations (tools used, at least N steps, independent first steps) are reported separately;
- reflector: agreement — ``planning.policy.decide`` (the code that has the last word in production, with
  fresh retry/replan counters) accepts exactly when the case expects acceptance. The raw action's agreement,
  whether the action is one the case lists as fitting, and whether an accepted answer states the expected
  figures are reported beside it.

Results: ``<out>/prompt-regression-<model>.md`` and ``.json`` (``.partial.*`` when interrupted).
"""

from __future__ import annotations

import sys

from benchmarks.prompt_regression.case_files import (
    CASES_DIR,
    MIN_CASES,  # noqa: F401 - tests/unit/prompts/test_regression_cases.py checks the case counts with it
    ROLES,
    CaseError,
    PlannerCase,
    ReflectorCase,
    RouterCase,
    load_cases,
)

# _parse_pins, _select and _write are re-exported for tests/unit/prompts/test_regression_cases.py.
from benchmarks.prompt_regression.cli import (  # noqa: F401
    _parse_pins,
    _select,
    _write,
    main,
    model_info,
    rerender,
)
from benchmarks.prompt_regression.markdown import render_markdown
from benchmarks.prompt_regression.report import build_report, prompt_info
from benchmarks.prompt_regression.runners import (
    build_roles,
    demo_config,
    regression_tools,
    run_cases,
    run_planner_case,
    run_reflector_case,
    run_router_case,
)
from benchmarks.prompt_regression.scoring import CaseResult, score_planner, score_reflector, score_router
from benchmarks.prompt_regression.summary import PLANNER_TARGET, summarize

__all__ = [
    "CASES_DIR",
    "PLANNER_TARGET",
    "ROLES",
    "CaseError",
    "CaseResult",
    "PlannerCase",
    "ReflectorCase",
    "RouterCase",
    "build_report",
    "build_roles",
    "demo_config",
    "load_cases",
    "main",
    "model_info",
    "prompt_info",
    "regression_tools",
    "render_markdown",
    "rerender",
    "run_cases",
    "run_planner_case",
    "run_reflector_case",
    "run_router_case",
    "score_planner",
    "score_reflector",
    "score_router",
    "summarize",
]


if __name__ == "__main__":
    sys.exit(main())
