"""The markdown page of a run (``prompt-regression-<model>.md``), one function per section, from the report JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.prompt_regression.case_files import ROLES, ROUTES
from benchmarks.prompt_regression.summary import PLANNER_TARGET, _pct

__all__ = ["render_markdown"]


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _headline(report: Mapping[str, Any]) -> list[str]:
    """Title, how the run was made, and each role's metric against its target."""
    m = report["model"]
    summ = report["summary"]
    lines = [f"# Prompt regression — {m.get('name', '?')}", ""]
    if not report.get("complete", True):
        lines += ["> **Incomplete run** (interrupted): only the cases listed below were measured.", ""]
    lines += [(f"Generated {report['generated_at']} by `{report['command']}`; wall time {report['wall_s']:.0f} s "
              f"({report['wall_s'] / 60:.1f} min)."), ""]
    lines += ["| role | metric | result | target |", "|---|---|---|---|"]
    if "router" in summ:
        s = summ["router"]
        lines.append(f"| router | accuracy (route acted on) | **{_pct(s['passed'], s['total'])}** (model's raw route "
                     f"{_pct(s['raw_correct'], s['total'])}; {s['invalid_output']} invalid replies) | — |")
    if "planner" in summ:
        s = summ["planner"]
        lines.append(f"| planner | valid plans | **{_pct(s['valid'], s['total'])}** ({s['repaired_valid']} of them needed the "
                     f"repair round; {s['structure_ok']}/{s['valid']} valid plans meet the structural expectations) "
                     f"| ≥ {PLANNER_TARGET:.0%} {'✓' if s['meets_target'] else '✗'} |")
    if "reflector" in summ:
        s = summ["reflector"]
        lines.append(f"| reflector | agreement (policy decision) | **{_pct(s['passed'], s['total'])}** (raw action "
                     f"{_pct(s['raw_agree'], s['total'])}; {s['false_accepts']} false accepts, {s['false_rejects']} "
                     f"correct results not accepted{_refused(s)}) | — |")
    lines += [""]
    for role in ROLES:
        if role in summ:
            lines.append(f"- {summ[role]['headline']}")
    lines += [""]
    return lines


def _refused(s: Mapping[str, Any]) -> str:
    """How many of the model's accepts code refused (reports written before the check have no count)."""
    refused = s.get("refused_by_code")
    if not refused:
        return ""
    return f"; code refused the model's accept of {refused['wrong']} wrong and {refused['right']} correct results"


def _model_and_prompts(report: Mapping[str, Any]) -> list[str]:
    m = report["model"]
    lines = ["## Model and prompts", "",
             (f"- model: `{m.get('name')}` — {m.get('title', '')}, {m.get('quantization', '')}, "
             f"server n_ctx {m.get('n_ctx')}, {m.get('n_threads', '?')} threads"),
             (f"- weights: `{m.get('path', '')}`, {m.get('size', 0):,} bytes, sha256 `{m.get('sha256') or 'unknown'}` "
             f"({m.get('sha256_source', '')})"),
             (f"- server: llama-cpp-python {m.get('llama_cpp_python', '?')}, structured output "
             f"`{m.get('structured_output', '?')}`, temperature 0"),
             (f"- host: Python {report['host']['python']} on {report['host']['machine']}; tetrarch commit "
             f"`{report['host'].get('commit')}`{' + uncommitted changes' if report['host'].get('dirty') else ''}"),
             (f"- config: the demo's RuntimeConfig (context_token_budget {report['config']['context_token_budget']}, "
             f"streamed plans {report['config']['stream_plan']}, router_min_confidence "
             f"{report['config']['router_min_confidence']}, accept needs every score ≥ "
             f"{report['config']['accept_min_score']}); tools: the built-ins + workspace tools"), "",
             "| prompt | fingerprint (sha256 of the template file) |", "|---|---|"]
    for p in report["prompts"].values():
        lines.append(f"| `{p['template_id']}` | `{p['fingerprint']}` |")
    lines += [""]
    return lines


def _per_role(report: Mapping[str, Any]) -> list[str]:
    """Latency and tokens per role."""
    summ = report["summary"]
    lines = ["## Per role", "",
             ("Latency is per case (all LLM calls of the role, including a repair round). The server reports no usage "
             "for streamed replies, so the planner's tokens are counted with tiktoken (an estimate for this "
             "tokenizer); router and reflector tokens are the server's counts."), ""]
    lines += ["| role | cases | median / p90 / max latency | LLM calls | input / output tokens (total) | needed repair |",
              "|---|---|---|---|---|---|"]
    for role in ROLES:
        if role in summ:
            s = summ[role]
            lines.append(f"| {role} | {s['total']} | {s['median_latency_s']} / {s['p90_latency_s']} / "
                         f"{s['max_latency_s']} s | {s['llm_calls']} | {s['input_tokens']:,} / {s['output_tokens']:,} | "
                         f"{s['repaired']} |")
    lines += [""]
    return lines


def _role_details(report: Mapping[str, Any]) -> list[str]:
    """Router confusion matrix, and the planner's and reflector's secondary measures."""
    summ = report["summary"]
    lines: list[str] = []
    if "router" in summ:
        s = summ["router"]
        got_cols = list(ROUTES) + ["invalid"]
        lines += ["### Router confusion (rows: expected, columns: routed)", "",
                  "| expected | " + " | ".join(got_cols) + " | correct |",
                  "|---|" + "---|" * (len(got_cols) + 1)]
        for exp, row in s["confusion"].items():
            lines.append(f"| {exp} | " + " | ".join(str(row.get(c, 0)) for c in got_cols)
                         + f" | {_pct(s['by_expected'][exp]['correct'], s['by_expected'][exp]['total'])} |")
        lines += [""]
    if "planner" in summ:
        s = summ["planner"]
        lines += ["### Planner", "",
                  (f"- valid on the first round: {s['valid_first_round']}/{s['total']}; after the repair round: "
                  f"{s['valid']}/{s['total']}"),
                  f"- failures by reason: {s['failure_reasons'] or 'none'}",
                  (f"- structural expectations met (expected tools used, minimum steps, independent first steps): "
                  f"{s['structure_ok']}/{s['valid']} valid plans"),
                  f"- median time to the first streamed step: {s['median_first_step_s']} s", ""]
    if "reflector" in summ:
        s = summ["reflector"]
        lines += ["### Reflector", "",
                  (f"- correct results accepted: {s['accept_cases']['agree']}/{s['accept_cases']['total']}; wrong, "
                  f"failed or incomplete results not accepted: {s['not_accept_cases']['agree']}/"
                  f"{s['not_accept_cases']['total']}"),
                  f"- decisions after the policy: {s['decisions']}",
                  (f"- the model's action is one the case lists as fitting (not-accept cases): "
                  f"{s['action_fits']['fits']}/{s['action_fits']['total']}"),
                  (f"- accepted answers that state the expected figures: {s['answers_state_figures']['ok']}/"
                  f"{s['answers_state_figures']['total']}"), ""]
    return lines


def _failures(report: Mapping[str, Any]) -> list[str]:
    failures = [c for c in report["cases"] if not c["passed"]]
    lines = ["## Failures", ""]
    if failures:
        lines += ["| role | case | expected | got | reason |", "|---|---|---|---|---|"]
        for c in failures:
            lines.append(f"| {c['role']} | {c['case_id']} | {_cell(c['expected'])} | {_cell(c['got'])} | "
                         f"{_cell(c['reason'])} |")
    else:
        lines.append("None.")
    lines += [""]
    return lines


def _remarks(report: Mapping[str, Any]) -> list[str]:
    """Cases that passed the metric but missed a secondary expectation."""
    notes = []
    for c in report["cases"]:
        d = c["details"]
        if c["role"] == "planner" and c["passed"] and d.get("structure_problems"):
            notes.append(f"| planner | {c['case_id']} | valid, but {_cell('; '.join(d['structure_problems']))} |")
        if c["role"] == "planner" and c["repaired"] and c["passed"]:
            notes.append(f"| planner | {c['case_id']} | valid after the repair round; first round: "
                         f"{_cell(d.get('first_round_error', ''))} |")
        if c["role"] == "reflector" and c["passed"] and d.get("missing_mentions"):
            notes.append(f"| reflector | {c['case_id']} | accepted, but the answer does not state "
                         f"{_cell(', '.join(d['missing_mentions']))}: {_cell(d.get('answer', ''))} |")
    if notes:
        return ["## Passed with remarks", "", "| role | case | remark |", "|---|---|---|", *notes, ""]
    return []


def _all_cases(report: Mapping[str, Any]) -> list[str]:
    lines = ["## All cases", "", "| role | case | pass | expected | got | latency | tokens in/out | repaired |",
             "|---|---|---|---|---|---|---|---|"]
    for c in report["cases"]:
        lines.append(f"| {c['role']} | {c['case_id']} | {'✓' if c['passed'] else '✗'} | {_cell(c['expected'])} | "
                     f"{_cell(c['got'])} | {c['latency_s']:.1f} s | {c['input_tokens']}/{c['output_tokens']} | "
                     f"{'yes' if c['repaired'] else ''} |")
    lines += ["", ("Cases: `benchmarks/prompt_regression/cases/*.jsonl`; per-case details (plans, scores, answers) in the "
              "JSON file beside this one."), ""]
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    lines = [*_headline(report), *_model_and_prompts(report), *_per_role(report), *_role_details(report),
             *_failures(report), *_remarks(report), *_all_cases(report)]
    return "\n".join(lines)
