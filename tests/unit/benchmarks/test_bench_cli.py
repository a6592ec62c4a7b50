"""`tetrarch bench` argument parsing: an unknown --llm is an error, local and openai:MODEL are accepted."""

from __future__ import annotations

import pytest

from benchmarks.cli import _parser


@pytest.mark.parametrize("value", ["sim", "local", "openai:gpt-4o-mini"])
def test_known_llms_parse(value: str) -> None:
    assert _parser().parse_args(["--llm", value]).llm == value


@pytest.mark.parametrize("value", ["locl", "openai:", "gpt-4o"])
def test_an_unknown_llm_is_an_error_naming_the_choices(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["--llm", value])
    assert "use sim, local, or openai:MODEL" in capsys.readouterr().err


def test_tool_scale_defaults_to_one() -> None:
    assert _parser().parse_args([]).tool_scale == 1.0
    assert _parser().parse_args(["--tool-scale", "3"]).tool_scale == 3.0


def test_system_picks_what_runs_and_defaults_to_all_three() -> None:
    assert _parser().parse_args([]).systems is None
    assert _parser().parse_args(["--system", "tetrarch", "--system", "react"]).systems == ["tetrarch", "react"]
    with pytest.raises(SystemExit):
        _parser().parse_args(["--system", "langgraph"])
