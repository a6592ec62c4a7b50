"""Every flow of the task state machine, in-process with scripted roles (no Ray)."""

from __future__ import annotations

import asyncio

import pytest
from support import tools as T
from support import wire
from support.local import run_task

from agents.config import RuntimeConfig
from agents.llm import FunctionLLM, ModelProfile, ScriptedLLM, Strategy

TWO_CITIES = wire.plan(
    wire.step(1, "lookup", {"city": "Paris"}),
    wire.step(2, "lookup", {"city": "Rome"}),
    wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]),
)


NUMERIC = RuntimeConfig(builtin_checks=("sound", "numeric"))
"""The opt-in numeric check set: its vetoes, second reviews and figures read by code (docs/checks.md)."""


def run(llm, task="Which is bigger, Paris or Rome, and by how much?", **kw):
    return asyncio.run(run_task(llm, task, **kw))


def types(sink):
    return [e.type for e in sink.events]


def test_accept_costs_three_llm_calls_and_records_every_step():
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES],
                       "reflector": [wire.reflection(answer="Rome, by 0.7 million")]})
    result, sink = run(llm)
    assert result.status == "accepted" and result.stopped_reason == "accepted"
    assert result.answer == "Rome, by 0.7 million"
    assert result.usage.total.llm_calls == 3
    assert {r: u.llm_calls for r, u in result.usage.by_role.items()} == {"router": 1, "planner": 1, "reflector": 1}
    assert [s.output for s in result.steps] == [2.1, 2.8, 0.7]
    assert all(s.status == "completed" and s.attempts == 1 for s in result.steps)
    assert result.timings.first_dispatch_s is not None and result.timings.wall_s > 0
    assert types(sink)[0] == "routed" and types(sink)[-1] == "task_finished"
    assert types(sink).count("plan_step") == 3 and types(sink).count("step_finished") == 3
    assert [e.seq for e in sink.events] == list(range(1, len(sink.events) + 1))
    llm.assert_complete()


def test_first_step_dispatched_before_the_last_plan_step_arrives():
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": TWO_CITIES,
                                 "reflector": wire.reflection()}[r.role], stream_chunk_size=16)
    _, sink = run(llm)
    seq = {(e.type, getattr(e.payload, "step_id", None) or getattr(getattr(e.payload, "step", None), "step_id", None)):
           e.seq for e in sink.events}
    assert seq[("step_started", 1)] < seq[("plan_step", 3)]


@pytest.mark.parametrize("route,status,reason", [
    (wire.route("direct", answer="4"), "accepted", "direct_answer"),
    (wire.route("clarify", answer="Which Paris?"), "clarify", "clarify"),
    (wire.route("refuse", reason="harmful"), "refused", "refused"),
    (wire.route("plan", confidence=0.3), "clarify", "clarify"),
])
def test_router_outcomes_stop_after_one_call(route, status, reason):
    # a question back needs a task that points at something it does not name (the model's route; agents/checks/numeric/referents.py)
    result, _ = run(ScriptedLLM({"router": [route]}), task="Which of them is bigger, and by how much?")
    assert (result.status, result.stopped_reason) == (status, reason)
    assert result.usage.total.llm_calls == 1
    if status == "clarify":
        assert result.question


def test_replan_once_then_accept_reuses_the_completed_step():
    T.reset("lookup-paris")
    second = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Berlin"}))
    llm = ScriptedLLM({"router": [wire.route()],
                       "planner": [wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                                             wire.step(2, "always_fails", {"x": 1})), second],
                       "reflector": [wire.reflection("replan", (2, 2, 3), answer=None, feedback="use Berlin"),
                                     wire.reflection(answer="Berlin")]})
    result, sink = run(llm, task="What are the populations of Paris and Berlin?")
    assert result.status == "accepted" and result.replans == 1
    assert T.count("lookup-paris") == 1, "the identical completed step must not run again"
    assert "replanned" in types(sink)
    assert [s.output for s in result.steps] == [2.1, 3.7]
    assert result.usage.by_role["planner"].llm_calls == 2


def test_retry_step_reruns_it_with_the_modification_then_accepts():
    llm = ScriptedLLM({"router": [wire.route()],
                       "planner": [wire.plan(wire.step(1, "lookup", {"city": "Pariss"}))],
                       "executor": ['{"city": "Paris"}'],
                       "reflector": [wire.reflection("retry_step", (2, 1, 3), answer=None, retry_step=1,
                                                     modification="the city is Paris"),
                                     wire.reflection(answer="2.1 million")]})
    result, _ = run(llm, task="How many people live in Paris?")
    assert result.status == "accepted"
    assert result.steps[0].output == 2.1 and result.steps[0].attempts == 2
    llm.assert_complete()


def test_always_wrong_escalates_after_the_replan_cap():
    bad = wire.reflection("replan", (2, 2, 2), answer=None, feedback="still wrong")
    cfg = RuntimeConfig(max_replans=2)
    plans = [wire.plan(wire.step(1, "lookup", {"city": city})) for city in ("Paris", "Rome", "Berlin")]
    llm = ScriptedLLM({"router": [wire.route()], "planner": plans, "reflector": [bad] * 3})
    result, sink = run(llm, config=cfg)
    assert result.status == "escalated" and result.stopped_reason == "max_replans"
    assert result.replans == 2 and result.question
    assert "escalated" in types(sink)
    llm.assert_complete()


def test_a_replan_that_repeats_the_rejected_plan_stops_without_another_review():
    # Same calls, same results: the reviewer would read the same prompt again (and a temperature-0 model write
    # the same plan again after it), so the task stops at once and says why.
    bad = wire.reflection("replan", (1, 2, 2), answer="about 2.1", feedback="")
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan, plan], "reflector": [bad]})
    result, sink = run(llm, config=RuntimeConfig(max_replans=2))
    assert result.status == "escalated" and result.stopped_reason == "loop_detected"
    assert result.replans == 1 and result.answer == "about 2.1"
    assert result.question.startswith("The planner could not find another plan after this feedback: The results do "
                                      "not answer the task; make a better plan. Rephrase")
    assert result.usage.by_role["reflector"].llm_calls == 1 and result.usage.by_role["planner"].llm_calls == 2
    llm.assert_complete()


def test_retry_cap_escalates():
    retry = wire.reflection("retry_step", (2, 2, 2), answer=None, retry_step=1, modification="")
    llm = ScriptedLLM({"router": [wire.route()], "planner": [wire.plan(wire.step(1, "lookup", {"city": "Paris"}))],
                       "reflector": [retry] * 3})
    result, _ = run(llm, config=RuntimeConfig(max_step_retries=2))
    assert result.status == "escalated" and result.stopped_reason == "max_step_retries"


@pytest.mark.parametrize("bad_plan,fragment", [
    ("this is not json at all", "no \"steps\" array"),
    (wire.plan(wire.step(1, "lookup", {"city": "a"}, deps=[2]), wire.step(2, "lookup", {"city": "b"}, deps=[1])),
     "cycle"),
    (wire.plan(wire.step(1, "teleport", {"to": "Mars"})), "teleport"),
])
def test_invalid_plans_fail_after_exactly_one_repair_round(bad_plan, fragment):
    llm = ScriptedLLM({"router": [wire.route()], "planner": [bad_plan, bad_plan]})
    result, _ = run(llm)
    assert result.status == "failed" and result.stopped_reason in ("invalid_plan", "invalid_llm_output")
    assert fragment.lower() in result.error.lower()
    assert result.usage.by_role["planner"].llm_calls == 2
    llm.assert_complete()


def test_invalid_router_output_is_repaired_once():
    llm = ScriptedLLM({"router": ["{oops", wire.route("direct", answer="4")]})
    result, _ = run(llm)
    assert result.status == "accepted" and result.answer == "4"
    assert result.usage.by_role["router"].llm_calls == 2


def test_garbage_from_the_reflector_fails_with_a_clear_error():
    llm = ScriptedLLM({"router": [wire.route()], "planner": [wire.plan(wire.step(1, "lookup", {"city": "Rome"}))],
                       "reflector": ["nope", "still nope"]})
    result, _ = run(llm)
    assert result.status == "failed" and result.stopped_reason == "invalid_llm_output"
    assert "reflector" in result.error


def test_confirmation_required_tool_escalates_before_running():
    T.reset("delete-r1")
    llm = ScriptedLLM({"router": [wire.route()],
                       "planner": [wire.plan(wire.step(1, "lookup", {"city": "Rome"}),
                                             wire.step(2, "delete_record", {"record_id": "r1"}))]})
    result, sink = run(llm)
    assert result.status == "escalated" and result.stopped_reason == "needs_confirmation"
    assert "delete_record" in result.question and "approve" in result.question
    assert T.count("delete-r1") == 0
    assert result.steps[0].status == "completed"


def test_token_budget_stops_the_task():
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES]})
    result, _ = run(llm, config=RuntimeConfig(token_budget=50))
    assert result.status == "failed" and result.stopped_reason == "token_budget"
    assert "token_budget" in result.error


def test_llm_call_cap_is_enforced():
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES]})
    result, _ = run(llm, config=RuntimeConfig(max_llm_calls=1))
    assert result.stopped_reason == "max_llm_calls"


@pytest.mark.parametrize("cap", ["max_llm_calls", "token_budget"])
def test_caps_hold_under_endless_retries_and_repairs(cap):
    """A reflector that always asks to retry with a change (each retry costs an executor repair call) and a
    planner that always replans: the caps stop the task, the retry and replan caps set high enough not to."""
    retry = wire.reflection("retry_step", (2, 2, 2), answer=None, retry_step=1, modification="try Paris again")
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": wire.plan(wire.step(1, "lookup", {"city": "Paris"})),
                                 "executor": '{"city": "Paris"}', "reflector": retry}[r.role])
    limit = {"max_llm_calls": 9} if cap == "max_llm_calls" else {"token_budget": 8000}
    cfg = RuntimeConfig(max_step_retries=1000, max_replans=1000, loop_window=1000, max_consecutive_errors=1000,
                        **limit)
    result, _ = run(llm, config=cfg)
    assert result.status == "failed" and result.stopped_reason == cap
    total = result.usage.total
    if cap == "max_llm_calls":
        assert total.llm_calls <= 9
    else:
        # The budget is checked before every call; at most the one call in flight can cross it.
        assert total.input_tokens + total.output_tokens < 8000 + 2000
    assert result.usage.by_role["executor"].llm_calls >= 1, "the retries' repair calls were counted"


def test_step_timeout_becomes_a_step_failure_the_reflector_sees():
    llm = ScriptedLLM({"router": [wire.route()],
                       "planner": [wire.plan(wire.step(1, "sleepy", {"seconds": 5, "label": "x"}))],
                       "reflector": [wire.reflection("escalate", (1, 1, 1), answer=None, feedback="timed out")]})
    result, sink = run(llm, config=RuntimeConfig(step_timeout_s=0.3))
    assert result.steps[0].status == "failed" and "step_timeout_s" in result.steps[0].error
    assert result.status == "escalated"
    failed = [e for e in sink.events if e.type == "step_failed"]
    assert failed[0].payload.error_kind == "timeout"


def test_loop_detection_stops_repeated_identical_failures():
    plan = wire.plan(wire.step(1, "always_fails", {"x": 1}))
    retry = wire.reflection("retry_step", (1, 1, 1), answer=None, retry_step=1)
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan], "reflector": [retry] * 3})
    result, _ = run(llm, config=RuntimeConfig(loop_window=3, max_step_retries=5))
    assert result.stopped_reason == "loop_detected"
    assert "same arguments" in result.error


def test_a_failed_step_skips_its_dependents_and_the_reflector_decides():
    plan = wire.plan(wire.step(1, "always_fails", {"x": 1}), wire.step(2, "subtract", {"a": "$step_1_result", "b": 1},
                                                                       deps=[1]),
                     wire.step(3, "lookup", {"city": "Paris"}))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [plan],
                       "reflector": [wire.reflection("escalate", (2, 2, 2), answer=None, feedback="step 1 broke")]})
    result, _ = run(llm)
    assert [s.status for s in result.steps] == ["failed", "skipped", "completed"]
    assert result.stopped_reason == "escalated_by_reflector"


def test_reasoning_steps_call_the_executor_llm_once():
    plan = wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                     wire.step(2, None, {}, deps=[1], description="Say whether Paris is big"))
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": plan, "executor": "yes, 2.1 million",
                                 "reflector": wire.reflection()}[r.role])
    result, _ = run(llm, task="Is Paris a big city?")
    assert result.steps[1].output == "yes, 2.1 million"
    assert result.usage.by_role["executor"].llm_calls == 1
    assert result.usage.total.llm_calls == 4


HOW_MANY_MORE = "How many more people live in the larger of Paris and Rome?"


def _reviewed(plans, answers):
    """The task run with these plans and reviewer answers (each an accept): the result, the reflected events'
    payloads, the sink and the model."""
    llm = ScriptedLLM({"router": [wire.route()], "planner": list(plans),
                       "reflector": [wire.reflection(answer=a) for a in answers]})
    result, sink = run(llm, task=HOW_MANY_MORE, config=NUMERIC)
    return result, [e.payload for e in sink.events if e.type == "reflected"], sink, llm


def test_an_accept_that_contradicts_the_results_is_replanned_not_answered():
    """The demo's failure (issue 20): the plan subtracts in plan order, a "how many more" comes out negative and
    the reviewer accepts it anyway. Code sees the sign: the accept becomes a replan saying what to fix."""
    wrong_way = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                          wire.step(3, "subtract", {"a": "$step_1_result", "b": "$step_2_result"}, deps=[1, 2]))
    result, reflected, sink, _ = _reviewed([wrong_way, TWO_CITIES],
                                           ["0.7 million more people live in Paris", "Rome, by 0.7 million"])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert [r.decision for r in reflected] == ["replan", "accept"]
    assert "Checked by code" in reflected[0].reason and "-0.7" in reflected[0].reason
    replanned = next(e.payload for e in sink.events if e.type == "replanned")
    assert "larger value minus the smaller" in replanned.feedback


def test_by_default_code_vetoes_no_wrong_way_difference_and_the_reviewers_verdict_stands():
    """The sound set: "how many more" computed negative is a heuristic about English wording (a signed change is
    right as it is), so code neither vetoes nor reviews again; the reviewer's verdict counts (3 LLM calls)."""
    wrong_way = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                          wire.step(3, "subtract", {"a": "$step_1_result", "b": "$step_2_result"}, deps=[1, 2]))
    llm = ScriptedLLM({"router": [wire.route()], "planner": [wrong_way],
                       "reflector": [wire.reflection(answer="Rome, by 0.7 million")]})
    result, sink = run(llm, task=HOW_MANY_MORE)
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert [e.payload.decision for e in sink.events if e.type == "reflected"] == ["accept"]
    assert len(llm.calls) == 3 and llm.remaining() == {}


def test_a_wrong_answer_over_sound_results_is_reviewed_again_not_replanned():
    """dev arithmetic-11: the calculator computed 7,440,000, the reviewer wrote "744,000 more" and two replans ran
    the same plan again until it wrote 7.44 million. The results hold, so the reviewer is asked once more and
    told what code found; the plan is not run again."""
    result, reflected, sink, llm = _reviewed([TWO_CITIES], ["Rome, by 12.5 million", "Rome, by 0.7 million"])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert [r.decision for r in reflected] == ["review_again", "accept"]
    assert "12,500,000" in reflected[0].reason and "asked again" in reflected[0].reason
    assert not [e for e in sink.events if e.type == "replanned"]
    second_review = [c for c in llm.calls if c.role == "reflector"][1]
    told = " ".join(m["content"] for m in second_review.messages)
    assert "Your previous answer to these results was refused" in told and "12,500,000" in told


def test_a_low_score_on_an_answer_stating_the_computed_figure_is_asked_about_again_as_a_note():
    """probe tasks: the reviewer wrote "about 127.3%" over a computed 127.28 and scored it completeness 1; the
    replan reran the plan. Code found nothing wrong, so the reviewer is asked once more, told so as a note."""
    llm = ScriptedLLM({"router": [wire.route()], "planner": [TWO_CITIES],
                       "reflector": [wire.reflection(answer="Rome, by 0.7 million", scores=(2, 4, 5)),
                                     wire.reflection(answer="Rome, by 0.7 million")]})
    result, sink = run(llm, task=HOW_MANY_MORE, config=NUMERIC)
    reflected = [e.payload for e in sink.events if e.type == "reflected"]
    assert result.status == "accepted" and [r.decision for r in reflected] == ["review_again", "accept"]
    assert not [e for e in sink.events if e.type == "replanned"]
    told = " ".join(m["content"] for m in [c for c in llm.calls if c.role == "reflector"][1].messages)
    assert "was not accepted: It was scored too low to accept (completeness 2/5" in told
    assert "CONTRADICTION: Your previous" not in told


def test_a_second_wrong_answer_over_the_same_results_is_replanned():
    rome_first = wire.plan(wire.step(1, "lookup", {"city": "Rome"}), wire.step(2, "lookup", {"city": "Paris"}),
                           wire.step(3, "subtract", {"a": "$step_1_result", "b": "$step_2_result"}, deps=[1, 2]))
    result, reflected, _, _ = _reviewed([TWO_CITIES, rome_first], ["Rome, by 12.5 million", "Rome, by 13.5 million",
                                                                   "Rome, by 0.7 million"])
    assert result.status == "accepted" and result.answer == "Rome, by 0.7 million"
    assert [r.decision for r in reflected] == ["review_again", "replan", "accept"]


def test_arguments_still_invalid_after_repair_go_back_to_the_planner_once_without_a_reflector_call():
    """Fail fast (issue 20): not three identical retries judged by the reflector, but one replan carrying the
    tool's error; a second rejection is then the reflector's to judge."""
    # The text only exists at run time (a reference inside a template), so plan validation cannot catch it.
    bad = wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                    wire.step(2, "subtract", {"a": "about {$step_1_result} million", "b": 1.0}, deps=[1]))
    good = wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                     wire.step(2, "subtract", {"a": "$step_1_result", "b": 1.0}, deps=[1]))
    calls: list[str] = []

    def script(request):
        calls.append(request.role)
        if request.role == "executor":
            return '{"a": "still not a number", "b": 1.0}'  # the repair round fails too
        return {"router": wire.route(), "reflector": wire.reflection(answer="1.1"),
                "planner": bad if calls.count("planner") == 1 else good}[request.role]

    result, sink = run(FunctionLLM(script), task="What is 2.1 minus 1?")
    assert result.status == "accepted" and result.steps[-1].output == 1.1
    assert calls == ["router", "planner", "executor", "planner", "reflector"]
    replanned = next(e.payload for e in sink.events if e.type == "replanned")
    assert replanned.feedback.startswith("The tools rejected these calls' arguments") and "step 2:" in replanned.feedback
    assert result.replans == 1


def test_a_figure_read_through_a_reasoning_step_that_answered_a_name():
    # A small planner searches both cities once, then asks two reasoning steps for "the city" each, and gives
    # their answers (names, no figure) to the calculator: the engine hands the executor the search the reasoning
    # steps read (Strategy.READ_THROUGH), and each figure comes from the hit of the name they answered (FIGURE_FIT).
    from agents import tool
    from agents.tools.builtins import calculator

    @tool
    def search(query: str) -> list[dict]:
        """Search the reference passages.

        Args:
            query: what to look up.

        Returns:
            passages (text with figures, best first)
        """
        return [{"doc_id": "paris", "title": "Paris", "text": "Paris: Population: about 2.10 million in 2023."},
                {"doc_id": "rome", "title": "Rome", "text": "Rome: Population: about 2.75 million in 2023."}]

    names = {"2": "Paris", "3": "Rome"}

    def model(request):
        match request.role:
            case "router":
                return wire.route()
            case "planner":
                return wire.plan(
                    wire.step(1, "search", {"query": "population of Paris and Rome"}),
                    wire.step(2, None, deps=[1], description="the first city"),
                    wire.step(3, None, deps=[1], description="the second city"),
                    wire.step(4, "calculator", {"expression": "max({$step_2_result}, {$step_3_result}) - "
                                                              "min({$step_2_result}, {$step_3_result})"}, deps=[2, 3]))
            case "executor":
                return names[request.metadata["step_id"]]  # no model call reads the figures
            case _:
                return wire.reflection(answer="Rome, by 650,000")

    reads = ModelProfile(strategies=frozenset({Strategy.READ_THROUGH, Strategy.FIGURE_FIT}))
    result, _ = run(FunctionLLM(model, profile=reads), task="How many more people live in Rome than in Paris?",
                    tools=[search, calculator], config=NUMERIC)
    assert result.status == "accepted"
    assert [s.output for s in result.steps][1:] == ["Paris", "Rome", 650000]
