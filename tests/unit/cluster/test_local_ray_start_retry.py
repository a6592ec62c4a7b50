"""A private local Ray whose node misses its start-up window (a raylet helper that imports slowly on a busy
machine) is started once more; any other failure, a second late start, or a cluster joined by address is not
retried."""

from __future__ import annotations

from typing import Any

import pytest

from agents.cluster import driver

LATE = Exception("The current node timed out during startup. This could happen because some of the raylet "
                 "failed to startup or the GCS has become overloaded.")


class FakeRay:
    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = failures
        self.inits: list[str] = []
        self.shutdowns = 0

    def init(self, address: str, **kwargs: Any) -> None:
        self.inits.append(address)
        if self.failures:
            raise self.failures.pop(0)

    def shutdown(self) -> None:
        self.shutdowns += 1


def _start(monkeypatch: pytest.MonkeyPatch, failures: list[BaseException], address: str | None = None) -> FakeRay:
    fake = FakeRay(failures)
    monkeypatch.setattr(driver, "ray", fake)
    driver._init_ray(address, {"namespace": "t"})
    return fake


def test_a_late_local_start_is_tried_once_more(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _start(monkeypatch, [LATE])
    assert fake.inits == ["local", "local"] and fake.shutdowns == 1


def test_a_second_late_start_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(Exception, match="timed out during startup"):
        _start(monkeypatch, [LATE, LATE])


@pytest.mark.parametrize("failure", [Exception("something else"), ValueError("bad runtime_env")])
def test_other_failures_are_not_retried(monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    fake = FakeRay([failure])
    monkeypatch.setattr(driver, "ray", fake)
    with pytest.raises(type(failure)):
        driver._init_ray(None, {})
    assert fake.inits == ["local"]


def test_a_cluster_joined_by_address_is_not_restarted(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRay([LATE])
    monkeypatch.setattr(driver, "ray", fake)
    with pytest.raises(Exception, match="timed out"):
        driver._init_ray("ray://head:10001", {})
    assert fake.inits == ["ray://head:10001"]
