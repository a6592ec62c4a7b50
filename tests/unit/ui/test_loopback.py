"""The one loopback rule: which binds need no token, which Host / Origin headers are answered, and the MCP SDK's
rebinding check set to exactly the same rule."""

from __future__ import annotations

import asyncio
import pickle

import pytest
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request

from agents.cli.mcp_serve import transport_security
from agents.ui.listen import ListenError, check_listen
from agents.ui.loopback import HostRule, host_rule, is_loopback, url_host

TOKEN = "a-test-token-of-some-length"
BINDS = ["127.0.0.1", "127.0.0.2", "127.255.0.9", "localhost", "Localhost", "LOCALHOST", "::1", "[::1]",
         "0:0:0:0:0:0:0:1"]


@pytest.mark.parametrize("bind", BINDS)
def test_every_loopback_spelling_is_loopback(bind):
    assert is_loopback(bind)


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "10.0.0.1", "example.org", "localhost.evil.example",
                                  "127.0.0.1.nip.io", "127.1", "2130706433", ""])
def test_anything_else_is_not(bind):
    """Spellings that may reach elsewhere, or that only some resolvers read as loopback, need a token."""
    assert not is_loopback(bind)


@pytest.mark.parametrize(("bind", "written"), [("Localhost", "localhost"), ("::1", "[::1]"), ("[::1]", "[::1]"),
                                               ("0:0:0:0:0:0:0:1", "[::1]"), ("127.0.0.2", "127.0.0.2"),
                                               ("0.0.0.0", "0.0.0.0"), ("My-Host.example", "my-host.example")])
def test_a_host_is_written_as_a_url_writes_it(bind, written):
    assert url_host(bind) == written


@pytest.mark.parametrize("bind", BINDS)
def test_without_a_token_the_loopback_names_and_the_bind_itself_are_answered(bind):
    rule = host_rule(bind, None)
    own = url_host(bind)
    for name in ("127.0.0.1", "localhost", "[::1]", own):
        assert rule.host_ok(f"{name}:8765") and rule.host_ok(name)
        assert rule.origin_ok(f"http://{name}:8765") and rule.origin_ok(f"https://{name}")
    assert rule.origin_ok(None) and rule.origin_ok("")
    for host in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example", "localhost.evil.example:80", "",
                 None):
        assert not rule.host_ok(host), host
    for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example", "file://", "http://localhost.x"):
        assert not rule.origin_ok(origin), origin


def test_with_a_token_any_name_is_answered():
    rule = host_rule("0.0.0.0", TOKEN)
    assert rule == HostRule(None) and rule.refusal("evil.example", "http://evil.example") is None
    assert host_rule("127.0.0.1", TOKEN).names is None


def _sdk_allows(settings, host: str | None, origin: str | None) -> bool:
    headers = [(b"content-type", b"application/json")]
    headers += [(b"host", host.encode())] if host is not None else []
    headers += [(b"origin", origin.encode())] if origin is not None else []
    request = Request({"type": "http", "method": "POST", "path": "/mcp", "headers": headers})
    refused = asyncio.run(TransportSecurityMiddleware(settings).validate_request(request, is_post=True))
    return refused is None


HOSTS = [None, "", "127.0.0.1:8765", "127.0.0.2:8765", "127.0.0.3:8765", "localhost", "localhost:1", "Localhost:80",
         "[::1]:8765", "evil.example", "evil.example:8765", "127.0.0.1.evil.example", "localhost.evil.example:80"]
ORIGINS = [None, "http://127.0.0.1:8765", "http://127.0.0.2:3000", "https://localhost", "http://[::1]:9",
           "http://evil.example", "null", "http://localhost.evil.example", "http://127.0.0.1.nip.io"]


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2", "Localhost", "::1"])
@pytest.mark.parametrize("token", [None, TOKEN])
def test_the_mcp_sdks_rebinding_check_enforces_exactly_the_rule(bind, token):
    rule = host_rule(bind, token)
    settings = transport_security(rule)
    assert settings.enable_dns_rebinding_protection is (token is None)
    for host in HOSTS:
        for origin in ORIGINS:
            ours = rule.refusal(host, origin) is None
            assert _sdk_allows(settings, host, origin) == ours, (host, origin, ours)


def test_an_address_is_checked_before_a_server_starts():
    check_listen("127.0.0.1", 0)
    with pytest.raises(ListenError, match="port 70000 is out of range: use a port from 0 to 65535"):
        check_listen("127.0.0.1", 70000)
    with pytest.raises(ListenError, match="is not an address of this machine"):
        check_listen("192.0.2.1", 0)  # TEST-NET-1: never this machine's
    with pytest.raises(ListenError, match="cannot listen on 'no-such-host.invalid'"):
        check_listen("no-such-host.invalid", 0)
    err = ListenError("port 1 is in use")
    assert type(pickle.loads(pickle.dumps(err))) is ListenError
