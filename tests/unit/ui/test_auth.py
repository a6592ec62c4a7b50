"""Who may reach the web view and the MCP server: loopback freely, anything else only with a token."""

from __future__ import annotations

import pickle
import urllib.error
import urllib.request

import pytest

from agents.store import Store
from agents.ui import UIServer
from agents.ui.auth import MissingTokenError, ShortTokenError, is_loopback, require_token

TOKEN = "a-test-token-of-some-length"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_needs_no_token(host):
    assert is_loopback(host)
    assert require_token(host, None) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "example.org", ""])
def test_any_other_host_refuses_to_start_without_a_token(host):
    assert not is_loopback(host)
    with pytest.raises(MissingTokenError, match="needs a bearer token"):
        require_token(host, None)
    assert require_token(host, TOKEN) == TOKEN


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_a_short_token_is_refused_everywhere_and_called_short(host):
    with pytest.raises(ShortTokenError) as err:
        require_token(host, "short")
    assert str(err.value).startswith("the token is too short (5 characters): use one of at least 16 characters")
    assert "lets others in" not in str(err.value) and "refusing to listen" not in str(err.value)


@pytest.mark.parametrize("err", [MissingTokenError("0.0.0.0"), ShortTokenError(5)])
def test_the_errors_survive_pickling_with_their_message(err):
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err) and back.__dict__ == err.__dict__
    assert "--token" in str(err)


def test_the_ui_server_refuses_a_public_bind_without_a_token(tmp_path):
    with pytest.raises(MissingTokenError):
        UIServer(Store(tmp_path / "t.db"), host="0.0.0.0")


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_with_a_token_every_request_must_carry_it(tmp_path):
    with UIServer(Store(tmp_path / "t.db"), token=TOKEN) as ui:
        status, headers, body = _get(ui.url + "/api/tasks")
        assert status == 401 and "Bearer" in headers["www-authenticate"] and b"token" in body
        assert _get(ui.url + "/api/tasks", {"Authorization": "Bearer wrong-token-wrong-token"})[0] == 401
        assert _get(ui.url + "/api/tasks", {"Authorization": f"Bearer {TOKEN}"})[:3:2] == (200, b"[]")
        # A browser opens the link once with ?token=, then its cookie carries the token (EventSource sends no
        # headers).
        status, headers, _ = _get(ui.url + f"/?token={TOKEN}")
        assert status == 200 and headers["set-cookie"].startswith(f"tetrarch_token={TOKEN};")
        assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
        assert _get(ui.url + "/api/tasks", {"Cookie": f"tetrarch_token={TOKEN}"})[0] == 200
        assert _get(ui.url + "/static/app.css")[0] == 401


def test_a_browser_trades_the_token_in_its_link_for_a_cookie_and_a_clean_address(tmp_path):
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    with UIServer(Store(tmp_path / "t.db"), token=TOKEN) as ui:
        opener = urllib.request.build_opener(NoRedirect)
        req = urllib.request.Request(ui.url + f"/tasks/abc?token={TOKEN}&x=1", headers={"Accept": "text/html"})
        with pytest.raises(urllib.error.HTTPError) as err:
            opener.open(req, timeout=10)
        assert err.value.code == 303 and err.value.headers["location"] == "/tasks/abc?x=1"
        assert err.value.headers["set-cookie"].startswith(f"tetrarch_token={TOKEN};")


def test_without_a_token_only_loopback_host_names_are_served(tmp_path):
    """A page on 127.0.0.1 could be reached by a site that rebinds its DNS name to 127.0.0.1: the Host header
    gives that away."""
    with UIServer(Store(tmp_path / "t.db")) as ui:
        assert _get(ui.url + "/api/tasks")[0] == 200
        assert _get(ui.url + "/api/tasks", {"Host": f"localhost:{ui.port}"})[0] == 200
        assert _get(ui.url + "/api/tasks", {"Host": "attacker.example:80"})[0] == 421
