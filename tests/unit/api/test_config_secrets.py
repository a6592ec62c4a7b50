"""The PostgreSQL password in ``RuntimeConfig.store_url`` never shows: not in ``repr``, not in the JSON dump (which
every task row records), not in a validation error; the store still connects with the real URL."""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from agents.config import RuntimeConfig

URL = "postgresql://bob:hunter2@db.example:5432/tasks"


def test_repr_str_and_json_dump_hide_the_password():
    config = RuntimeConfig(store_url=URL)
    for shown in (repr(config), str(config), config.model_dump_json(), str(config.model_dump(mode="json"))):
        assert "hunter2" not in shown
        assert "postgresql://bob:***@db.example:5432/tasks" in shown


def test_the_store_and_a_pickled_copy_keep_the_real_url():
    config = RuntimeConfig(store_url=URL)
    assert config.store_url == URL and config.store_location() == URL
    back = pickle.loads(pickle.dumps(config))  # what Ray ships to the Supervisor actor
    assert back.store_url == URL and back == config
    assert config.model_copy(update={"max_steps": 3}).store_url == URL


def test_a_url_without_a_password_is_shown_as_it_is():
    assert "postgresql://bob@db:5432/x" in repr(RuntimeConfig(store_url="postgresql://bob@db:5432/x"))


def test_a_rejected_url_does_not_echo_the_password():
    with pytest.raises(ValidationError) as caught:
        RuntimeConfig(store_url="mysql://bob:hunter2@db/x")
    assert "hunter2" not in str(caught.value)
    assert "not a PostgreSQL URL" in str(caught.value)
