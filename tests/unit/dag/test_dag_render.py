"""Mermaid and DOT diagrams: exact snapshots (escaping, state colours, missing dependencies)."""

from __future__ import annotations

from types import SimpleNamespace

from dag import StepState, to_dot, to_mermaid
from planning.models import PlanStep

STEPS = [
    SimpleNamespace(step_id=2, description='Compare "Paris" <and> Rome\nby population & area #1', tool_name=None,
                    depends_on=[1, 7]),
    SimpleNamespace(step_id=1, description="Look up populations", tool_name="lookup", depends_on=[]),
]
STATES = {1: StepState.COMPLETED, 2: "failed", 9: "not-a-state"}

MERMAID = """\
flowchart TD
    s1["1. Look up populations<br/>tool: lookup"]
    s2["2. Compare #quot;Paris#quot; #lt;and#gt; Rome by population #38; area #35;1<br/>reasoning (LLM)"]
    s7["7. missing step"]
    s1 --> s2
    s7 --> s2
    classDef completed fill:#d3f9d8,stroke:#2b8a3e
    class s1 completed
    classDef failed fill:#ffe3e3,stroke:#c92a2a
    class s2 failed
    classDef missing fill:#ffffff,stroke:#c92a2a,stroke-dasharray:4 3
    class s7 missing"""

DOT = """\
digraph plan {
    rankdir=TB;
    node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica"];
    s1 [label="1. Look up populations\\ntool: lookup", fillcolor="#d3f9d8", color="#2b8a3e"];
    s2 [label="2. Compare \\"Paris\\" <and> Rome by population & area #1\\nreasoning (LLM)", \
fillcolor="#ffe3e3", color="#c92a2a"];
    s7 [label="7. missing step", style="rounded,dashed", color="#c92a2a"];
    s1 -> s2;
    s7 -> s2;
}"""


def test_mermaid_snapshot():
    assert to_mermaid(STEPS, STATES) == MERMAID


def test_dot_snapshot():
    assert to_dot(STEPS, STATES) == DOT


def test_without_states_nodes_are_uncoloured():
    steps = [PlanStep(step_id=1, description="a", tool_name="calc"),
             PlanStep(step_id=2, description="b", depends_on=[1]),
             PlanStep(step_id=3, description="c", tool_name="calc", depends_on=[1, 2])]
    assert to_mermaid(steps) == """\
flowchart TD
    s1["1. a<br/>tool: calc"]
    s2["2. b<br/>reasoning (LLM)"]
    s3["3. c<br/>tool: calc"]
    s1 --> s2
    s1 --> s3
    s2 --> s3"""
    dot = to_dot(steps)
    assert "fillcolor=\"#d" not in dot and dot.count(" -> ") == 3


def test_states_sharing_a_colour_class_are_grouped_and_long_text_is_cut():
    steps = [SimpleNamespace(step_id=i, description="x" * 100, tool_name="t", depends_on=[]) for i in (1, 2, 3)]
    out = to_mermaid(steps, {1: "running", 2: StepState.RUNNING, 3: "SKIPPED"})
    assert "    class s1,s2 running" in out and "    class s3 skipped" in out
    assert f'["1. {"x" * 79}…<br/>tool: t"]' in out
    dot = to_dot([SimpleNamespace(step_id=1, description='back\\slash "q"', tool_name='t"x', depends_on=[])])
    assert 's1 [label="1. back\\\\slash \\"q\\"\\ntool: t\\"x"];' in dot
