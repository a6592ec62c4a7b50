"""The trace page as a user sees it: opened in headless Chromium (Debian's package, installed by
scripts/install_chromium.sh from `make test`), for a finished, an escalated and a failed task."""

from __future__ import annotations

import os
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support import wire
from support.cdp import require_chromium
from support.traced import run_stored

from agents.llm import FunctionLLM
from agents.trace.cli import main as trace_main

pytestmark = pytest.mark.browser

@pytest.fixture(autouse=True, scope="module")
def _needs_chromium() -> None:
    require_chromium()  # at run time: the fast tier collects this module while CI still installs Chromium


PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                 wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))
REFLECTIONS = {
    "accepted": (PLAN, wire.reflection(answer="Rome, by 0.7 million")),
    "escalated": (PLAN, wire.reflection("escalate", scores=(2, 2, 2), answer=None, feedback="Which year?")),
    "failed": ("no plan here", wire.reflection()),
}


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.classes: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        d = dict(attrs)
        if d.get("class"):
            self.classes.append(d["class"] or "")
        if d.get("id"):
            self.ids.add(d["id"] or "")


def _chromium(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([require_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("pages")
    db = out / "tasks.db"
    pages = {}
    for name, (planner, reflector) in REFLECTIONS.items():
        llm = FunctionLLM(lambda r, p=planner, f=reflector: {"router": wire.route(), "planner": p,
                                                             "reflector": f}[r.role])
        task_id, result, _ = run_stored(db, llm, "Which is bigger, Paris or Rome, and by how much?")
        assert result.status == name
        pages[name] = out / f"{name}.html"
        assert trace_main([task_id, "--store", str(db), "--html", str(pages[name])]) == 0
    return pages


def test_console_errors_are_detected():
    """Control: the console check below would notice a broken page."""
    page = Path(os.environ.get("TMPDIR", "/tmp")) / f"tetrarch-broken-{os.getpid()}.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    try:
        assert "CONSOLE" in _chromium("--dump-dom", page.as_uri()).stderr
    finally:
        page.unlink()


@pytest.mark.parametrize("name", list(REFLECTIONS))
def test_trace_page_renders_in_chromium(pages, name, tmp_path):
    page = pages[name]
    dom = _chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "CONSOLE" not in dom.stderr, dom.stderr
    found = _Elements()
    found.feed(dom.stdout)
    assert {"steps", "usage"} <= found.ids
    if name == "failed":
        assert "dag" not in found.ids and "No plan." in dom.stdout
    else:
        assert {"dag", "gantt"} <= found.ids
        assert found.classes.count("dag-node") == 3
        assert found.classes.count("gantt-bar") == 6  # three steps and three LLM calls
    shot = tmp_path / f"{name}.png"
    run = _chromium(f"--screenshot={shot}", "--window-size=1280,1400", page.as_uri())
    assert run.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", run.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a blank 1280x1400 page is ~8 KB; this one ~80 KB
