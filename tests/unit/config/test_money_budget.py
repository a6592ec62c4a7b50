"""Budgets in money, the pure part: the price table (one model for the config and the live view), the config's
``prices`` and ``max_cost_usd``, and ``CostBudget``'s arithmetic over random call sequences and prices."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from support.tiers import examples

from agents import RuntimeConfig
from agents.config.prices import CostBudget, PriceTable, usd
from agents.errors import BudgetExceeded, ConfigError, CostBudgetExceeded, UnpricedModelError


def test_prices_inline_from_a_file_or_a_table_are_one_model(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"gpt-4.1-mini": [0.40, 1.60], "*": [0, 0]}))
    inline = RuntimeConfig(prices={"gpt-4.1-mini": [0.40, 1.60], "*": [0, 0]}).prices
    assert inline == RuntimeConfig(prices=path).prices == RuntimeConfig(prices=str(path)).prices
    assert RuntimeConfig(prices=inline).prices is inline
    assert isinstance(inline, PriceTable) and inline.price("gpt-4.1-mini") == (0.40, 1.60)
    # The recorded config is the file's own format, and validates back into the same table.
    dumped = RuntimeConfig(prices=inline, max_cost_usd=0.5).model_dump(mode="json")
    assert dumped["prices"] == {"gpt-4.1-mini": [0.40, 1.60], "*": [0.0, 0.0]}
    assert RuntimeConfig.model_validate(dumped).prices == inline
    assert hash(RuntimeConfig(prices=inline)) == hash(RuntimeConfig(prices=dict(inline.prices)))
    assert RuntimeConfig().prices is None and RuntimeConfig().max_cost_usd is None


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"max_cost_usd": 0.5}, "max_cost_usd=0.5 needs prices"),
    ({"prices": {"m": [1, 1]}, "max_cost_usd": 0}, "greater than 0"),
    ({"prices": {"m": [1, 1]}, "max_cost_usd": True}, "a bool is not a number"),
    ({"prices": {"m": "cheap"}}, "prices['m'] must be [input, output] USD per million tokens"),
    ({"prices": {"m": [1, -1]}}, "negative price"),
    ({"prices": {"m": [float("nan"), 1]}}, "finite"),
    ({"prices": [["m", 1, 1]]}, "must map each model name"),
])
def test_a_wrong_money_setting_says_what_to_write(kwargs, says):
    with pytest.raises(ValidationError, match=says.replace("[", r"\[").replace("(", r"\(")):
        RuntimeConfig(**kwargs)


def test_a_missing_price_file_is_a_config_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the price table .*missing.json"):
        RuntimeConfig(prices=tmp_path / "missing.json")


def test_a_dated_snapshot_is_priced_as_its_model_unless_listed_and_star_prices_the_rest():
    table = PriceTable(prices={"gpt-4.1-mini": (0.4, 1.6), "claude-sonnet-4": (3, 15),
                               "gpt-4o-2024-05-13": (5, 15)})
    assert table.price("gpt-4.1-mini-2025-04-14") == (0.4, 1.6)
    assert table.price("claude-sonnet-4-20250514") == (3, 15)
    assert table.price("gpt-4o-2024-05-13") == (5, 15)  # a snapshot priced on its own wins
    assert table.price("gpt-4o") is None and table.price("gpt-4.1") is None  # never a prefix's price
    assert PriceTable(prices={"*": (1, 2)}).price("anything") == (1, 2)


def test_costs_of_records_are_the_calls_at_their_models_prices():
    table = PriceTable(prices={"a": (1.0, 2.0), "b": (10.0, 0.0)})
    records = [{"model": "a", "usage": {"input_tokens": 1000, "output_tokens": 500}},
               {"model": "b", "usage": {"input_tokens": 100, "output_tokens": 9}}]
    assert table.records_cost(records) == pytest.approx((1000 * 1 + 500 * 2 + 100 * 10) / 1e6)
    assert table.records_cost([*records, {"model": "c", "usage": {}}]) is None
    assert table.unpriced([*records, {"model": "c"}]) == "c" and table.unpriced(records) is None


def test_a_call_is_admitted_only_if_its_prompt_fits_beside_the_spend():
    budget = CostBudget(PriceTable(prices={"m": (2.0, 8.0)}), max_cost_usd=0.01, spent_usd=0.006)
    assert budget.admit("router", "m", 2000) == pytest.approx(0.004)  # lands exactly on the cap: allowed
    with pytest.raises(CostBudgetExceeded) as info:
        budget.admit("planner", "m", 1000, spent_here=0.0035)
    exc = info.value
    assert isinstance(exc, BudgetExceeded) and exc.cap == "max_cost_usd"
    assert (exc.role, exc.model, exc.prompt_tokens) == ("planner", "m", 1000)
    assert exc.next_call_usd == pytest.approx(0.002) and exc.spent_usd == pytest.approx(0.0095)
    for words in ("planner's next model call (m, 1000 prompt tokens)", "about $0.002",
                  "$0.0095 the task has spent", "max_cost_usd of $0.01", "raise RuntimeConfig.max_cost_usd",
                  "submit the task again"):
        assert words in str(exc)
    with pytest.raises(UnpricedModelError, match="model 'gpt-x', which RuntimeConfig.prices does not price"):
        budget.admit("executor", "gpt-x", 10)


@pytest.mark.parametrize("error", [
    CostBudgetExceeded("executor", "m", 1200, 0.0012, 0.4991, 0.5).with_spend("spend"),
    CostBudgetExceeded("", "", 0, None, 0.6, 0.5), UnpricedModelError("gpt-x", "router"),
    UnpricedModelError("")])
def test_the_money_errors_pickle_intact(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error) and back.__dict__ == error.__dict__


def test_usd_shows_small_amounts_exactly():
    assert (usd(0.0), usd(0.000123), usd(0.5), usd(12.0)) == ("$0", "$0.000123", "$0.5", "$12")


_CALLS = st.lists(st.tuples(st.integers(0, 20_000), st.integers(0, 4_000)), min_size=1, max_size=40)
_PRICE = st.floats(0.0, 100.0, allow_nan=False)


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(calls=_CALLS, price_in=_PRICE, price_out=_PRICE, cap=st.floats(1e-6, 2.0), spent=st.floats(0.0, 1.0))
def test_no_admitted_call_passes_the_cap_and_the_first_refused_one_would_have(calls, price_in, price_out, cap,
                                                                             spent):
    """A run makes calls in order while they are admitted: every call it makes fit when it started (spend so
    far + its prompt at the input price <= cap), and the call it refused would have passed the cap."""
    table = PriceTable(prices={"m": (price_in, price_out)})
    budget = CostBudget(table, max_cost_usd=cap, spent_usd=spent)
    here = 0.0
    for prompt, written in calls:
        estimate = prompt * price_in / 1e6
        try:
            assert budget.admit("executor", "m", prompt, spent_here=here) == pytest.approx(estimate)
        except CostBudgetExceeded as exc:
            assert spent + here + estimate > cap
            assert exc.spent_usd == pytest.approx(spent + here)
            assert exc.next_call_usd == pytest.approx(estimate)
            return
        assert spent + here + estimate <= cap * (1 + 1e-12)
        here += table.call_cost("m", prompt, written)
