"""The live view shows the answer growing as the reviewer writes it (``answer_delta`` events), in headless
Chromium."""

from __future__ import annotations

import asyncio
import json

import pytest
from support import wire
from support.background import BackgroundCore
from support.cdp import Browser, require_chromium

from agents.llm import FunctionLLM
from agents.store import Store
from agents.ui import UIServer

pytestmark = pytest.mark.browser

@pytest.fixture(autouse=True, scope="module")
def _needs_chromium() -> None:
    require_chromium()  # at run time: the fast tier collects this module while CI still installs Chromium


PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}), wire.step(2, "lookup", {"city": "Rome"}),
                 wire.step(3, "subtract", {"a": "$step_2_result", "b": "$step_1_result"}, deps=[1, 2]))
ANSWER = "Rome is bigger than Paris, by 0.7 million people."


async def _reply(request) -> str:
    if request.role == "router":
        await asyncio.sleep(2.0)  # the page is open before the review starts
    return {"router": wire.route(), "planner": PLAN, "reflector": f"accept 5 5 5\nanswer: {ANSWER}"}[request.role]


def test_the_task_page_shows_the_answer_growing(tmp_path):
    llm = FunctionLLM(_reply, stream_chunk_size=6, chunk_delay_s=0.15)
    with BackgroundCore(tmp_path / "t.db", llm) as core, UIServer(Store(tmp_path / "t.db")) as ui, \
            Browser() as browser:
        page = browser.page(ui.url + "/")
        page.wait_for("document.getElementById('conn').textContent === 'live'")
        task_id = core.submit("Which is bigger, Paris or Rome, and by how much?")
        page = browser.page(f"{ui.url}/tasks/{task_id}")
        page.wait_for("!!document.getElementById('answer')")
        page.eval("window.__seen = []; new MutationObserver(() => window.__seen.push("
                  "document.getElementById('answer').textContent)).observe(document.getElementById('answer'), "
                  "{childList: true, characterData: true, subtree: true}); true")
        page.wait_for("document.getElementById('status').textContent === 'accepted'", timeout=60)
        seen = json.loads(page.eval("JSON.stringify(window.__seen)"))
        final = page.eval("document.getElementById('answer').textContent")
    assert final == ANSWER
    growing = [text.removesuffix(" …") for text in seen if text.endswith(" …")]
    assert len(set(growing)) >= 3, seen
    assert all(ANSWER.startswith(text) for text in growing), seen
