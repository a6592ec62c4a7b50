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



def test_bench_all_writes_the_system_measures_throughput_default_rows_and_cancel(tmp_path, monkeypatch):
    """``make bench`` (``bench --all``) writes every report the issues' targets are read from, the default
    configuration's throughput and the cancel latency included, after the system microbenchmarks (which replace
    system.json: the others merge into it)."""
    import benchmarks.report as report
    import benchmarks.runner as runner
    import benchmarks.system.run as system_run

    calls: list[list[str]] = []
    monkeypatch.setattr(system_run, "main", lambda argv: calls.append(list(argv)) or 0)
    monkeypatch.setattr(runner, "run_suite", lambda suite, **kw: suite)
    monkeypatch.setattr(report, "write_report", lambda run, out, **kw: {"systems": {}})
    monkeypatch.setattr(report, "ratio_lines", lambda summary: [])
    from benchmarks.cli import main

    assert main(["--all", "--no-plan-cache", "--out", str(tmp_path)]) == 0
    assert [argv[2:] for argv in calls] == [[], ["--only", "throughput"], ["--only", "default"], ["--only", "cancel"]]
