"""``tetrarch cache list|clear`` on a store file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.cli.main import main
from agents.memory import PlanCacheStore
from planning.models import Plan


def _seed(path: Path) -> str:
    plan = Plan.model_validate({"steps": [{"step_id": 1, "description": "population of Paris",
                                           "tool_name": "lookup", "tool_input": {"city": "Paris"}}]})
    cache = PlanCacheStore(path)
    try:
        return cache.put("What is the population of Paris?", plan).template_id
    finally:
        cache.close()


def test_list_shows_each_template_and_clear_empties_the_cache(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "t.db"
    tid = _seed(store)
    assert main(["cache", "list", "--store", str(store)]) == 0
    line = capsys.readouterr().out
    assert tid[:12] in line and "what is the population of <name>" in line and "hits 0" in line
    assert main(["cache", "list", "--store", str(store), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["template_id"], row["tools"], row["sources"]) == (tid, ["lookup"], 1)
    assert main(["cache", "clear", "--store", str(store)]) == 0
    assert capsys.readouterr().out.strip() == "removed 1 plan template(s)"
    assert main(["cache", "list", "--store", str(store)]) == 0
    assert capsys.readouterr().out.strip() == "the plan cache is empty"


def test_a_missing_store_is_reported_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.db"
    assert main(["cache", "list", "--store", str(missing)]) == 2
    assert "no store at" in capsys.readouterr().err and not missing.exists()
