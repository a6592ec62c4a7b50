"""Task costs from the user's price table: read from a file, computed per call's model, unknown when unpriced."""

from __future__ import annotations

import json
import pickle

import pytest
from support import wire
from support.traced import run_stored

from agents.errors import ConfigError
from agents.llm import FunctionLLM
from agents.store import Store
from agents.config.price_file import load_prices
from agents.config.prices import PriceTable
from agents.ui.reader import TaskReader

PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}))


def _stored_task(tmp_path):
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": PLAN,
                                 "reflector": wire.reflection(answer="Rome")}[r.role])
    db = tmp_path / "t.db"
    task_id, result, _ = run_stored(db, llm, "Which is bigger, Paris or Rome?")
    return db, task_id, result


def test_cost_is_each_calls_tokens_at_its_models_price(tmp_path):
    db, task_id, result = _stored_task(tmp_path)
    calls = Store(db).llm_calls(task_id)
    models = {c["model"] for c in calls}
    table = PriceTable(prices={m: (2.0, 8.0) for m in models})
    [row] = TaskReader(Store(db), prices=table).rows()
    usage = result.usage.total
    assert row.cost_usd == pytest.approx((usage.input_tokens * 2.0 + usage.output_tokens * 8.0) / 1e6)
    assert row.cost_usd > 0


def test_no_table_no_cost_and_an_unpriced_model_is_unknown_not_zero(tmp_path):
    db, _, _ = _stored_task(tmp_path)
    assert TaskReader(Store(db)).rows()[0].cost_usd is None
    assert TaskReader(Store(db), prices=PriceTable(prices={"other-model": (1, 1)})).rows()[0].cost_usd is None
    assert TaskReader(Store(db), prices=PriceTable(prices={"*": (0.0, 0.0)})).rows()[0].cost_usd == 0.0


def test_a_price_file_is_read_and_a_bad_one_says_what_to_write(tmp_path):
    good = tmp_path / "prices.json"
    good.write_text(json.dumps({"gpt-4.1-mini": [0.40, 1.60], "*": [0, 0]}))
    assert load_prices(good).price("gpt-4.1-mini") == (0.40, 1.60)
    assert load_prices(good).price("anything") == (0, 0)
    for text, words in [("not json", "cannot read"), ('{"m": "cheap"}', "must map each model"),
                        ('{"m": [1, -1]}', "negative")]:
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        with pytest.raises(ConfigError, match=words) as info:
            load_prices(bad)
        again = pickle.loads(pickle.dumps(info.value))
        assert type(again) is ConfigError and str(again) == str(info.value)
    with pytest.raises(ConfigError, match="cannot read"):
        load_prices(tmp_path / "missing.json")
