"""The pinned catalogue: every entry is fully pinned and self-consistent."""

from __future__ import annotations

import re

import pytest

from agents.llm.local.catalog import (
    CATALOG,
    DEFAULT_MODEL,
    FAST_MODEL,
    SMOKE_MODEL,
    PartLayout,
    get_model,
)
from agents.llm.local.errors import UnknownModelError

HEX64 = re.compile(r"^[0-9a-f]{64}$")


def test_the_three_models_with_the_default_first():
    assert list(CATALOG) == [DEFAULT_MODEL, FAST_MODEL, SMOKE_MODEL]
    assert get_model(None).name == "qwen2.5-coder-1.5b"


@pytest.mark.parametrize("name", list(CATALOG))
def test_every_part_is_pinned_by_version_and_hash(name):
    model = CATALOG[name]
    assert HEX64.match(model.sha256) and model.size > 0
    assert len({p.requirement for p in model.parts}) == len(model.parts)
    for part in model.parts:
        package, _, version = part.requirement.partition("==")
        assert package and re.fullmatch(r"\d+(\.\d+)+", version), part.requirement
        assert HEX64.match(part.wheel_sha256)


@pytest.mark.parametrize("name", list(CATALOG))
def test_split_models_name_their_parts_in_join_order(name):
    model = CATALOG[name]
    if model.layout is PartLayout.SINGLE_GGUF:
        assert len(model.parts) == 1 and model.parts[0].member.endswith(".gguf")
        return
    for index, part in enumerate(model.parts, start=1):
        assert part.package.endswith(f"part{index}")
        assert part.member.endswith(f"/data/part{index:02d}.bin")


def test_measured_sizes_and_part_counts():
    assert (len(CATALOG[DEFAULT_MODEL].parts), CATALOG[DEFAULT_MODEL].size) == (22, 1_117_320_768)
    assert (len(CATALOG[FAST_MODEL].parts), CATALOG[FAST_MODEL].size) == (6, 491_400_064)
    assert (len(CATALOG[SMOKE_MODEL].parts), CATALOG[SMOKE_MODEL].size) == (1, 98_362_432)


def test_unknown_name():
    with pytest.raises(UnknownModelError, match="choose one of: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b"):
        get_model("llama-70b")
