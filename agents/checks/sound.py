"""The default built-in set, "sound": a veto only where it is sound for any task, everything else a note.

A veto (``Severity.CONTRADICTION``) turns a reviewer's accept into a second review or a replan, so it must hold for
every user's task, tools and language: when it fires, the answer is wrong. The two such rules here:

- **An unfilled step reference in the answer.** Precondition: the answer contains ``$step_N_result`` (the plan's
  reference syntax, ``dag.refs``) and neither the task nor any step's output contains such text. The answer then
  shows the user a placeholder for a value it never filled in, whatever the task was (a tool that returns such text
  itself, a template engine say, may be quoted). References to steps that completed never get here: the reviewer
  role fills them with those steps' outputs (``agents.roles.reflector.filled_answer``).
- **A false equation in the answer** (``agents.checks.equations``). Precondition: the answer writes "A op B = C"
  with numbers on both sides, standing alone (nothing arithmetic before A or after C), the same unit on each
  (or a non-percent unit on C alone), and no reading of the three numbers, within the rounding their written
  digits allow and with C's sign dropped, makes it true; and neither the task nor any step's output writes the
  same equation (a quoted source). Arithmetic is the same in every task and language: the answer states
  something false.

One hint asks the reviewer once more, and its second verdict counts whatever it says (``omitted_final``): an
accepted answer that writes figures but not the one the plan's final result holds.

The notes are facts the reviewer may weigh and reject, worded as observations, never as "use this number":

- a step that did not complete (its figures cannot be in the answer);
- a step whose output gives the assistant orders (``agents.checks.injection``);
- a name the task lists beside others that no step's arguments or outputs mention (``agents.checks.coverage``:
  capitalised words, so a German noun may be taken for a name; the reviewer judges);
- the order of what look-ups of one tool returned, where each states one date, record, figure or year that code
  reads without ambiguity (``agents.checks.order``: "#1 (Acme Q3) is larger than #2 (Borealis Q3)"), or the
  number of items each returned when each is a list;
- how many items a step's list holds, counted by code (``agents.checks.order.size_notes``);
- the plan's final result: the one tool step that combines two or more steps' outputs and that no step uses (a
  reviewer writing "A is larger" from the looked-up figures left out the difference the plan computed);
- a computation with one step's value on both sides of '-' or '/' (``cancelling_notes``): its result is the same
  whatever the data;
- a false equation in a step's output (a reasoning step that did arithmetic in words): the step is wrong, but an
  answer need not rest on it;
- arithmetic on figures from nowhere: a step that uses no step and computes with two or more numbers that neither
  the task nor any other step's output states (``planning.blind_calls``; a small planner asked about it once still
  divided two populations it had written from memory, and its reviewer, shown nothing, accepted the ratio). Unit
  constants fit the precondition too ("24 * 60"), so it is a note the reviewer may reject, never a veto.

    >>> results = [Result(1, "lookup", "population of Paris", "2.1 million"), Result(2, "lookup", "Rome", None,
    ...            failed=True)]
    >>> [f.text for f in answer_faults("Rome is larger by $step_3_result.", results, task="Paris or Rome?")]
    ['The answer contains $step_3_result, a reference to a step result that was never filled in: write the value itself.']
    >>> [f.severity.value for f in result_notes("Compare Paris and Rome.", results)]
    ['note']
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.checks.coverage import missing_names
from agents.checks.equations import false_equations
from agents.checks.facts import Fact, Result, Severity, text_of
from agents.checks.injection import injection_notes
from agents.checks.numbers import Number, numbers_in, read_numbers, states
from agents.checks.order import order_notes, size_notes
from dag.refs import find_reference, strings_in
from planning.blind_calls import MIN_INVENTED_FIGURES, cancelling_operator, unwritten_figures

__all__ = ["answer_faults", "cancelling_notes", "equation_notes", "failed_note", "final_figure", "final_note",
           "final_result", "name_notes", "omitted_final", "result_notes", "unstated_figures_note"]

_SHORT_OUTPUT = 60
"""A final result longer than this (a report, a list of rows) is not repeated in a note: the step shows it."""


def result_notes(task: str, results: Sequence[Result], *, names: bool = True) -> list[Fact]:
    """The default set's facts about the results: notes only. ``names``: also the names no step mentions (the
    numeric set says those itself, as contradictions)."""
    facts = name_notes(task, results) if names else []
    return [*facts, *injection_notes(results), *failed_note(results), *order_notes(results), *size_notes(results),
            *final_note(results), *cancelling_notes(results), *unstated_figures_note(task, results),
            *equation_notes(results)]


def answer_faults(answer: str | None, results: Sequence[Result], *, task: str = "") -> tuple[Fact, ...]:
    """The default set's vetoes of a proposed answer (each sound for any task; see the module's docstring)."""
    if not answer:
        return ()
    sources = [task, *(text_of(r.output) for r in results if not r.failed and r.output is not None)]
    faults = [Fact(Severity.CONTRADICTION, (
        f"The answer writes {e.describe()}: correct the arithmetic, or compute it with a tool."))
        for e in false_equations(answer) if not any(e.text in source for source in sources)]
    found = find_reference(answer)
    if found is not None and not any(find_reference(source) for source in sources):
        faults.append(Fact(Severity.CONTRADICTION, (
            f"The answer contains {found}, a reference to a step result that was never filled in: write "
            "the value itself.")))
    return tuple(faults)


def cancelling_notes(results: Sequence[Result]) -> list[Fact]:
    """Completed tool steps whose text argument computes with one step's value on both sides of '-' or '/'
    (``planning.blind_calls.cancelling_operator``), as an observation: their result is the same whatever the
    data (a plan that compares two things but looked up one). The planner is asked about such a call once; a
    plan that keeps it runs, and its reviewer should know.

        >>> difference = {"expression": "{$step_1_result} - {$step_1_result}"}
        >>> notes = cancelling_notes([Result(1, "revenue", "Q2", "5,65 M€"),
        ...                           Result(2, "calculator", "", 0, depends_on=(1,), inputs=difference)])
        >>> notes[0].text[:72]
        'Step 2 computes {$step_1_result} - {$step_1_result}: one value on both s'
    """
    notes = []
    for r in results:
        if r.failed or r.tool_name is None:
            continue
        for value in strings_in(r.inputs):
            operator = cancelling_operator(value)
            if operator is not None:
                notes.append(Fact(Severity.NOTE, (
                    f"Step {r.step_id} computes {value}: one value on both sides of '{operator}', so its result is "
                    "the same whatever the data, and an answer cannot rest on it.")))
                break
    return notes


def equation_notes(results: Sequence[Result]) -> list[Fact]:
    """Steps whose output writes a false equation (``agents.checks.equations``), as an observation.

        >>> equation_notes([Result(3, None, "the difference", "1520.4 - 3310.75 = 2790.35")])[0].text
        'Step 3 writes 1520.4 - 3310.75 = 2790.35, but 1520.4 - 3310.75 is -1790.35.'
    """
    return [Fact(Severity.NOTE, f"Step {r.step_id} writes {e.describe()}.") for r in results
            if not r.failed and isinstance(r.output, str) for e in false_equations(r.output)[:1]]


def failed_note(results: Sequence[Result]) -> list[Fact]:
    """The steps that did not complete: an answer must not use figures they would have produced."""
    failed = [r.step_id for r in results if r.failed]
    if not failed:
        return []
    return [Fact(Severity.NOTE, f"Steps {', '.join(map(str, failed))} did not complete: an answer must not use "
                                "figures they would have produced.")]


def name_notes(task: str, results: Sequence[Result]) -> list[Fact]:
    """Names the task lists beside others that no step looked up and no output mentions, as observations."""
    looked_at = [text for r in results for text in (r.about, r.description, r.arguments,
                                                    "" if r.failed else text_of(r.output))]
    return [Fact(Severity.NOTE, f"The task names {name}; no step's arguments or results mention it.")
            for name in missing_names(task, looked_at)]


def final_result(results: Sequence[Result]) -> Result | None:
    """The plan's final result: the single completed tool step that combines the outputs of two or more steps
    and that no other step uses, when its output is short (a report or a list of rows is not one figure)."""
    used = {d for r in results for d in r.depends_on}
    finals = [r for r in results if not r.failed and r.tool_name and len(r.depends_on) >= 2 and r.step_id not in used
              and r.output is not None and len(text_of(r.output)) <= _SHORT_OUTPUT]
    return finals[0] if len(finals) == 1 else None


def final_note(results: Sequence[Result]) -> list[Fact]:
    """The plan's final result (``final_result``) as an observation. Code says only what the plan did; the
    reviewer decides whether the task asks for it.

        >>> final_note([Result(1, "rate", "", "3.1%"), Result(2, "rate", "", "2.8%"),
        ...             Result(3, "calculator", "", 0.3, depends_on=(1, 2))])[0].text
        "Step 3 (calculator) computed 0.3 from steps 1 and 2, and no step uses it: it is the plan's final result."
    """
    final = final_result(results)
    if final is None:
        return []
    sources = ", ".join(map(str, final.depends_on[:-1])) + f" and {final.depends_on[-1]}"
    figure = text_of(final.output)
    return [Fact(Severity.NOTE, f"Step {final.step_id} ({final.tool_name}) computed {figure} from steps {sources}, "
                                "and no step uses it: it is the plan's final result.")]


def final_figure(results: Sequence[Result]) -> tuple[Result, Number] | None:
    """The plan's final result (``final_result``) and its figure, when its output states exactly one."""
    final = final_result(results)
    if final is None:
        return None
    figures = read_numbers(final.output)
    return (final, figures[0]) if len(figures) == 1 else None


def omitted_final(answer: str | None, results: Sequence[Result]) -> str | None:
    """Why the reviewer is asked once more about an answer it accepted, or None: the plan's final result
    (``final_result``) is one figure, and the answer writes figures but not that one, in any rounding or sign.
    Not a veto: the second verdict counts whatever it says, so a reviewer that judges the figure beside the point
    (a task asking only which is larger, an answer in other units) keeps its answer for one more call. On the 1.5B
    reviewer this is the commonest wrong accept over a right plan: the looked-up figures restated instead of the
    ratio or difference the plan computed. Worded as measured on the dev half's tasks whose right plan computes
    (docs/checks.md): told to "keep what it says and add" the figure, it kept the names and added it; told the
    task might ask no figure, it kept every answer; told only to state the figure, it dropped the names.

        >>> results = [Result(1, "visitors", "", 298112), Result(2, "visitors", "", 451210),
        ...            Result(3, "calculator", "", 0.660694576805, depends_on=(1, 2))]
        >>> omitted_final("0.66", results) is None, omitted_final("Tate Modern has 451,210.", results) is None
        (True, False)
    """
    found = final_figure(results)
    if not answer or found is None or not read_numbers(answer):
        return None
    final, number = found
    if any(states(answer, value) for value, _ in number.readings):
        return None
    figure = text_of(final.output)
    return (f"it does not state {figure}, the figure step {final.step_id} ({final.tool_name}) computed as the "
            f"plan's final result. Write the answer again: keep what it says and add {figure}, rounded as the task "
            "asks.")


def unstated_figures_note(task: str, results: Sequence[Result]) -> list[Fact]:
    """Steps that use no step and compute with two or more figures that neither the task nor any other step's
    output states, as an observation (see the module's docstring: constants fit it too).

        >>> note = unstated_figures_note("Which team is larger, A or B?", [
        ...     Result(1, "calculator", "", 1200, inputs={"expression": "max(1200, 900)"}),
        ...     Result(2, "calculator", "", 900, inputs={"expression": "min(1200, 900)"})])
        >>> note[0].text[:65]
        'Steps 1 and 2 compute with 1200 and 900, figures that neither the'
    """
    task_figures = set(numbers_in(task))
    # Two passes: such steps' own outputs ("max(1200, 900)" -> 1200) state the invented figures again, so only
    # the other steps' outputs count as where a figure can come from.
    suspects = {r.step_id: values for r in results if (values := _literal_arithmetic(r, task_figures))}
    if not suspects:
        return []
    stated = task_figures | {v for r in results if not r.failed and r.step_id not in suspects
                             for v in numbers_in(r.output)}
    invented: dict[int, list[str]] = {}
    for step_id, values in suspects.items():
        figures = [f for value in values for f in unwritten_figures(value, stated)]
        if len(set(figures)) >= MIN_INVENTED_FIGURES:
            invented[step_id] = figures
    if not invented:
        return []
    steps = list(invented)
    figures = list(dict.fromkeys(f for found in invented.values() for f in found))[:4]
    which = f"Step {steps[0]} computes" if len(steps) == 1 else (
        f"Steps {', '.join(map(str, steps[:-1]))} and {steps[-1]} compute")
    return [Fact(Severity.NOTE, (
        f"{which} with {', '.join(figures[:-1])} and {figures[-1]}, figures that neither the task nor any step's "
        "result states: unless they are constants (units), no tool looked them up, and an answer cannot rest on "
        "them."))]


def _literal_arithmetic(result: Result, task_figures: set[float]) -> list[str]:
    """The text arguments of a tool step that uses no step and computes with two or more figures the task does
    not state."""
    if result.tool_name is None or result.depends_on:
        return []
    # unwritten_figures lists each figure once
    return [value for value in strings_in(result.inputs)
            if len(unwritten_figures(value, task_figures)) >= MIN_INVENTED_FIGURES]
