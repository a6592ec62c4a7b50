"""The reflected XSS of issue 60 replayed in a real browser (headless Chromium): a link to
``/tasks/<svg onload=...>`` whose script would approve every waiting write. With a task waiting for the
confirmation of a delete, the link is opened: no script of the link runs, and the task still waits.

The HTTP-level replays of every attack are tests/unit/ui/test_attacks.py.
"""

from __future__ import annotations

import json
import time
from urllib.parse import quote

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


PLAN = wire.plan(wire.step(1, "lookup", {"city": "Paris"}),
                 wire.step(2, "delete_record", {"record_id": "r-$step_1_result"}, deps=[1]))
# What the attacker's page links to: the markup goes in the path (one segment, no slash), the script it runs in
# the fragment, which the browser never sends. It approves the waiting write, then marks the page as taken.
MARKUP = "<svg onload=eval(decodeURIComponent(location.hash.slice(1)))>"
SCRIPT = ("fetch('/api/tasks/{task_id}/respond', {{method: 'POST', headers: {{'content-type': 'application/json'}},"
          " body: JSON.stringify({{text: 'approve', by: 'attacker'}})}}); window.__taken = true;")


def _answers(store: Store, task_id: str) -> list[str]:
    return [e.payload.answer for e in store.events(task_id) if e.type == "escalated" and e.payload.answer]


def test_a_link_with_markup_in_the_task_id_runs_no_script_and_approves_nothing(tmp_path):
    llm = FunctionLLM(lambda r: {"router": wire.route(), "planner": PLAN,
                                 "reflector": wire.reflection(answer="deleted")}[r.role])
    with BackgroundCore(tmp_path / "t.db", llm) as core, \
            UIServer(Store(tmp_path / "t.db"), responder=core.respond_async) as ui, Browser() as browser:
        task_id = core.submit("delete the record named after Paris's population")
        assert core.result(task_id).status == "escalated"
        link = f"{ui.url}/tasks/{quote(MARKUP, safe='')}#{quote(SCRIPT.format(task_id=task_id), safe='')}"

        page = browser.page(link)
        page.wait_for("document.readyState === 'complete'")
        time.sleep(1.0)  # time for the script, had it run, to send its answer and for the task to go on
        store = Store(tmp_path / "t.db")
        assert page.eval("window.__taken === undefined") is True, "the link's script ran in the page"
        assert _answers(store, task_id) == [] and store.get_task(task_id).status == "escalated"

        # The id is on the page as text, the markup as characters, and no element came of it.
        assert page.wait_for("document.getElementById('task-id').textContent") == MARKUP
        assert page.eval("document.querySelectorAll('svg').length") == 0
        # The page's own scripts still run and reach the API: only the link's did not.
        status = page.eval("fetch('/api/tasks').then(r => r.json()).then(rows => rows[0].status)")
        assert status == "escalated"
        headers = json.loads(page.eval(
            "fetch(location.href).then(r => JSON.stringify(Object.fromEntries(r.headers.entries())))"))
        assert "script-src 'self'" in headers["content-security-policy"]
