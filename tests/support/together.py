"""Run one callable on several threads at once and collect what each returned or raised (races on open)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def on_threads(make: Callable[[], T], n: int = 4, timeout_s: float = 60) -> tuple[list[T], list[Exception]]:
    """(the values, the exceptions) of ``make()`` called on ``n`` threads started together."""
    values: list[T] = []
    errors: list[Exception] = []

    def one() -> None:
        try:
            values.append(make())
        except Exception as exc:  # noqa: BLE001 - returned for the caller to assert on
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout_s)
    return values, errors
