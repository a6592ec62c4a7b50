"""The command line of the prompt regression run (``python -m benchmarks.prompt_regression.run``: ``run.py``
calls ``main``): pick the cases, run them on the embedded local model, write the JSON and the markdown."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from agents.llm.profile import SMALL_LOCAL, ModelProfile
from agents.config import RuntimeConfig
from agents.tools.registry import ToolRegistry
from benchmarks.prompt_regression.case_files import ROLES, Case, load_cases
from benchmarks.prompt_regression.markdown import render_markdown
from benchmarks.prompt_regression.report import build_report
from benchmarks.prompt_regression.runners import (
    TooManyTransportErrors,
    build_roles,
    demo_config,
    regression_tools,
    run_cases,
)
from benchmarks.prompt_regression.scoring import CaseResult
from benchmarks.prompt_regression.summary import summarize
from prompts import load_prompt

__all__ = ["DEFAULT_OUT", "main", "model_info", "rerender"]

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "results"


def model_info(name: str) -> dict[str, Any]:
    """Catalogue facts and the weights' sha256 (checked against the catalogue pin; cheap when the pull's
    verification stamp matches, else the file is hashed)."""
    from agents.llm.local import get_model, model_path
    from agents.llm.local.provision import _verified

    model = get_model(name)
    path = model_path(model.name)
    verified = _verified(path, model)
    try:
        llama_version: str | None = package_version("llama_cpp_python")
    except PackageNotFoundError:  # start_local_llm will say how to install it
        llama_version = None
    return {"name": model.name, "title": model.title, "quantization": model.quantization, "n_ctx": model.n_ctx,
            "path": str(path), "size": path.stat().st_size, "sha256": model.sha256 if verified else None,
            "sha256_source": "verified against the catalogue pin" if verified else "MISMATCH with the catalogue pin",
            "llama_cpp_python": llama_version}


def _parse_pins(values: Sequence[str]) -> dict[str, str]:
    pins = {}
    for v in values:
        role, sep, version = v.partition("=")
        if not sep or not role or not version:
            raise SystemExit(f"--prompt takes ROLE=VERSION (e.g. planner=v10), got {v!r}")
        load_prompt(role, version)  # fails early, naming the versions that exist
        pins[role] = version
    return pins


def _select(cases: Mapping[str, list[Case]], ids: Sequence[str], limit: int | None) -> dict[str, list[Case]]:
    out = {}
    for role, cs in cases.items():
        chosen = [c for c in cs if not ids or c.id in ids]
        out[role] = chosen[:limit] if limit else chosen
    unknown = set(ids) - {c.id for cs in cases.values() for c in cs}
    if unknown:
        raise SystemExit(f"unknown case id(s): {', '.join(sorted(unknown))}")
    return out


def _write(report: Mapping[str, Any], out_dir: Path, stem: str) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    jpath, mpath = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    jpath.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    mpath.write_text(render_markdown(report), encoding="utf-8")
    return jpath, mpath


def rerender(json_path: Path) -> Path:
    """Recompute the summaries and the markdown of a results JSON from its recorded cases (no model): for a
    change of the report's wording, never of what was measured."""
    report = json.loads(Path(json_path).read_text(encoding="utf-8"))
    results = [CaseResult(**c) for c in report["cases"]]
    report["summary"] = {r: summarize(r, results) for r in ROLES if r in report["summary"]}
    Path(json_path).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    md = Path(json_path).with_suffix(".md")
    md.write_text(render_markdown(report), encoding="utf-8")
    return md


def _parser() -> argparse.ArgumentParser:
    from agents.llm.local import DEFAULT_MODEL

    p = argparse.ArgumentParser(prog="python -m benchmarks.prompt_regression.run",
                                description="Run the prompt regression set against a local model.")
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"local model name (default {DEFAULT_MODEL})")
    p.add_argument("--role", action="append", choices=ROLES, help="only this role (repeatable); default: all")
    p.add_argument("--limit", type=int, default=None, help="at most N cases per role")
    p.add_argument("--case", action="append", default=[], help="only this case id (repeatable)")
    p.add_argument("--prompt", action="append", default=[], metavar="ROLE=VERSION",
                   help="pin a prompt version, e.g. planner=v10 (default: the embedded model's, SMALL_LOCAL)")
    p.add_argument("--checks", action="append", default=None, metavar="SET",
                   help="a built-in check set (RuntimeConfig.builtin_checks; repeatable, e.g. --checks sound "
                        "--checks numeric); default: what the demo's configuration runs")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory (default benchmarks/results)")
    p.add_argument("--n-threads", type=int, default=2, help="llama.cpp threads (default 2, as the Orchestrator)")
    p.add_argument("--rerender", type=Path, metavar="RESULTS.json",
                   help="only rewrite the summary and .md of an earlier run from its JSON (no model)")
    return p


def _run_on_local_model(args: argparse.Namespace, info: dict[str, Any], registry: ToolRegistry, config: RuntimeConfig,
                        cases: Mapping[str, Sequence[Case]], profile: ModelProfile
                        ) -> tuple[list[CaseResult], bool, float]:
    """Start the embedded server, run every case, and stop the server also on Ctrl-C, SIGTERM or a server that
    stopped answering. Returns what was measured (all of it only when the run completed) and the wall time."""
    from agents.llm.local import start_local_llm

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, on_term)
    results: list[CaseResult] = []
    complete = False
    t0 = time.perf_counter()
    server = None
    try:
        llm, server = start_local_llm(args.model, n_threads=args.n_threads)
        llm.profile = profile  # the embedded model's, with the versions --prompt pins
        info.update(n_threads=args.n_threads, structured_output=getattr(llm, "mode", "json_object_schema"))
        print(f"server up at {server.base_url} after {time.perf_counter() - t0:.1f}s", flush=True)
        asyncio.run(run_cases(build_roles(llm, registry, config), cases, progress=lambda s: print(s, flush=True),
                              sink=results))
        complete = True
    except KeyboardInterrupt:
        print("interrupted: writing what was measured as .partial", flush=True)
    except TooManyTransportErrors as exc:
        print(f"aborted: {exc}", flush=True)
    finally:
        if server is not None:
            server.stop()
        signal.signal(signal.SIGTERM, previous)
    wall = time.perf_counter() - t0
    return results, complete, wall


def main(argv: Sequence[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.rerender:
        print(f"wrote {rerender(args.rerender)}")
        return 0
    if args.limit is not None and args.limit < 1:
        p.error("--limit must be >= 1")

    config = demo_config()
    profile = SMALL_LOCAL.with_prompts(**_parse_pins(args.prompt))
    if args.checks is not None:
        sets = RuntimeConfig(builtin_checks=tuple(args.checks)).builtin_checks  # validated: a clear error if unknown
        config = config.model_copy(update={"builtin_checks": sets})
    roles = tuple(args.role) if args.role else ROLES
    workspace = Path(tempfile.mkdtemp(prefix="tetrarch-regression-ws-"))
    registry = regression_tools(workspace)
    cases = _select({r: load_cases(r, tool_schemas=registry.schemas()) for r in roles}, args.case, args.limit)
    info = model_info(args.model)
    command = "python -m benchmarks.prompt_regression.run " + " ".join(sys.argv[1:] if argv is None else argv)
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"prompt regression: {', '.join(f'{r} {len(cases[r])}' for r in roles)} cases on {args.model}", flush=True)

    results, complete, wall = _run_on_local_model(args, info, registry, config, cases, profile)
    report = build_report(results, cases, model=info, config=config, profile=profile, wall_s=wall, started_at=started_at,
                          command=command, complete=complete)
    sets = "" if args.checks is None else "-checks-" + "-".join(config.builtin_checks)
    stem = f"prompt-regression-{args.model}{sets}" + ("" if complete else ".partial")
    jpath, mpath = _write(report, args.out, stem)
    for role in roles:
        if role in report["summary"]:
            print(report["summary"][role]["headline"], flush=True)
    print(f"wall {wall:.0f}s; wrote {mpath} and {jpath}", flush=True)
    return 0 if complete else 1
