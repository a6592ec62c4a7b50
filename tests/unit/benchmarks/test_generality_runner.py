"""The generality runner's counting: what makes a right answer's run a false veto, a rewrite or a second review,
when a wrong answer counts as caught, the report's tables, and the end-to-end scoring (no Ray, no model)."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents.llm import FunctionLLM
from agents.react import ReActAgent
from agents.tools import tool
from benchmarks.cli import _parser
from benchmarks.cli import main as bench_main
from benchmarks.generality.e2e import run_systems, tally
from benchmarks.generality.measure import measure, right_record, summarize, wrong_record
from benchmarks.generality.model import Expect, GenTask, call, plan
from benchmarks.generality.report import JSON_KEYS, build_doc, render_markdown, write_report
from benchmarks.generality.scripted import RunOutcome, Script, run_scripted


@tool
def roster(team: str) -> list:
    """Members of a team.

    Args:
        team: The team's name.
    """
    return {"core": ["Ada", "Grace"], "web": ["Linus"]}[team]


TINY = GenTask(id="tiny-en-0-list", shape="name_lists", lang="en", kind="list", question="Who is on the core team?",
               tools=("roster",), plan=plan(call(1, "roster", team="core")), answer="Ada and Grace.",
               wrong=(("item_left_out", "Ada."),), expect=Expect(names=("Ada", "Grace")))


def outcome(status="accepted", calls=3, replans=0, changed=False, answer="Ada and Grace."):
    return RunOutcome(status=status, llm_calls=calls, replans=replans, plan_changed=changed, answer=answer)


def test_a_right_answer_through_untouched_is_clean():
    r = right_record(TINY, "default", outcome())
    assert r.clean and not (r.false_veto or r.rewrite or r.second_review or r.answer_changed)


@pytest.mark.parametrize("out,flag", [
    (outcome(status="escalated", calls=5, replans=1), "false_veto"),
    (outcome(replans=1, calls=5), "rewrite"),
    (outcome(changed=True), "rewrite"),
    (outcome(calls=4), "second_review"),
    (outcome(answer="Ada, Grace"), "answer_changed"),
])
def test_each_intervention_on_a_right_answer_is_counted(out, flag):
    r = right_record(TINY, "default", out)
    assert getattr(r, flag) and not r.clean


def test_a_wrong_answer_is_caught_when_vetoed_or_changed_and_missed_when_it_comes_out_accepted():
    assert wrong_record(TINY, "default", "item_left_out", "Ada.", outcome(status="escalated")).how == "vetoed"
    assert wrong_record(TINY, "default", "item_left_out", "Ada.", outcome(answer="Ada and Grace.")).how == \
        "answer_changed"
    missed = wrong_record(TINY, "default", "item_left_out", "Ada.", outcome(answer="Ada."))
    assert not missed.caught and missed.how == ""


def test_summarize_counts_by_shape_language_and_class():
    rights = [right_record(TINY, "default", outcome()), right_record(TINY, "default", outcome(status="failed"))]
    wrongs = [wrong_record(TINY, "default", "item_left_out", "Ada.", outcome(status="escalated"), right_clean=False),
              wrong_record(TINY, "default", "item_left_out", "Ada.", outcome(answer="Ada."))]
    s = summarize(rights, wrongs)
    r = s["right"]
    assert (r["tasks"], r["accepted"], r["false_vetoes"], r["clean"]) == (2, 1, 1, 1)
    assert s["right"]["by_shape"]["name_lists"]["false_vetoes"] == 1 and s["right"]["by_lang"]["en"]["tasks"] == 2
    assert s["wrong"]["by_class"]["item_left_out"] == {"variants": 2, "caught": 1, "rate": 0.5, "caught_right_clean": 0}
    assert s["wrong"]["by_class"]["wrong_sign"]["rate"] is None
    assert s["interventions"][0]["count"] == 1


def test_a_right_plan_and_answer_run_through_the_engine_with_three_llm_calls():
    out = run_scripted(Script(TINY.question, TINY.plan, TINY.answer), [roster])
    assert out.status == "accepted" and out.llm_calls == 3 and out.replans == 0 and not out.plan_changed
    assert out.answer == TINY.answer
    assert right_record(TINY, "default", out).clean


def test_measure_runs_the_right_answer_and_every_variant_per_configuration(tmp_path):
    rights, wrongs, available = measure([TINY], ["default", "numeric"], [roster], progress=lambda s: None)
    assert "default" in available
    assert len(rights) == len(available) and len(wrongs) == len(available) * len(TINY.wrong)
    doc = build_doc([TINY], rights, wrongs, ["default", "numeric"], available, "unit")
    md = render_markdown(doc)
    half = {"dev": "dev", "heldout": "held-out"}[TINY.split]
    assert f"| class | {half} |" in md and "item_left_out" in md and JSON_KEYS in md  # only the half that ran
    assert list(doc["configs"]["default"]) == [TINY.split]
    js, mdp = write_report(doc, tmp_path, "g")
    assert json.loads(js.read_text())["configs"].keys() == set(available) and mdp.exists()


def _react_llm(answers: dict[str, str]) -> FunctionLLM:
    def reply(request):
        task = next(m["content"] for m in request.messages if m["role"] == "user")
        answer = next(a for q, a in answers.items() if q in task)
        return json.dumps({"thought": "read it", "action": None, "final_answer": answer})

    return FunctionLLM(reply)


def test_end_to_end_scoring_counts_right_accepted_wrong_and_other():
    wrong = GenTask(id="tiny-en-1-list", shape="name_lists", lang="en", kind="list",
                    question="Who is on the web team?", tools=("roster",), plan=plan(call(1, "roster", team="web")),
                    answer="Linus.", wrong=(), expect=Expect(names=("Linus",)))
    llm = _react_llm({"core team": "Ada and Grace.", "web team": "Grace."})
    agent = ReActAgent(llm, [roster])

    def broken(question: str):
        raise RuntimeError("server down")

    seen: list[int] = []
    records = run_systems([TINY, wrong], {"react": lambda q: asyncio.run(agent.run(q)), "broken": broken},
                          progress=lambda s: None, on_record=lambda rs: seen.append(len(rs)))
    assert seen == [1, 2, 3, 4]
    by = {(r.task_id, r.system): r.verdict for r in records}
    assert by == {("tiny-en-0-list", "react"): "right", ("tiny-en-1-list", "react"): "accepted_wrong",
                  ("tiny-en-0-list", "broken"): "other", ("tiny-en-1-list", "broken"): "other"}
    t = tally(records)
    assert (t["react"]["right"], t["react"]["accepted_wrong"], t["react"]["other"]) == (1, 1, 0)
    assert t["broken"]["other"] == 2 and t["react"]["right_share"] == 0.5


def test_bench_accepts_the_generality_suite_but_only_on_its_own():
    assert _parser().parse_args(["--suite", "generality"]).suite == ["generality"]
    with pytest.raises(SystemExit, match="on its own"):
        bench_main(["--suite", "generality", "--suite", "parallel"])
    with pytest.raises(SystemExit, match="scripted roles"):
        bench_main(["--suite", "generality", "--llm", "openai:x"])
