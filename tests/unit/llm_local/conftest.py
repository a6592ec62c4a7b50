"""Fixtures of the local-model tests (helpers live in llm_local_fakes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_local_fakes import FakeIndex, split_model, wheels_for

from agents.llm.local.catalog import LocalModel


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def chunks() -> list[bytes]:
    # Distinct, non-repeating content per part: any reordering changes the bytes and the hash.
    return [bytes([i]) * 1000 + f"part-{i}".encode() for i in (1, 2, 3)]


@pytest.fixture
def split(chunks: list[bytes], tmp_path: Path) -> tuple[LocalModel, FakeIndex]:
    model = split_model("fake-split", chunks)
    return model, FakeIndex(wheels_for(model, chunks, tmp_path / "index"))
