"""The access token, its cookie, the CSRF check and the Host check, on pages and on the API."""

from __future__ import annotations

import httpx
import pytest

from kairox.web import SecurityConfig
from kairox.web.security import CONTENT_SECURITY_POLICY

PORT = 8999  # the port the conftest's SecurityConfig uses
BASE = f"http://127.0.0.1:{PORT}"


async def test_no_token_is_401_on_api_pages_static_and_schema(anon: httpx.AsyncClient) -> None:
    for path in ("/api/info", "/", "/memory", "/static/common.js", "/api/openapi.json"):
        response = await anon.get(path)
        assert response.status_code == 401, path
        assert "access token" in response.json()["error"]


async def test_wrong_token_is_401_in_every_place(
    anon: httpx.AsyncClient, security: SecurityConfig
) -> None:
    wrong = security.token[:-2] + "xx"
    assert (await anon.get("/api/info", params={"token": wrong})).status_code == 401
    bad_bearer = {"Authorization": f"Bearer {wrong}"}
    assert (await anon.get("/api/info", headers=bad_bearer)).status_code == 401
    anon.cookies.set(security.token_cookie, wrong)
    assert (await anon.get("/api/info")).status_code == 401


async def test_bearer_is_accepted_and_a_query_token_only_on_the_page_load(
    anon: httpx.AsyncClient, security: SecurityConfig
) -> None:
    bearer = {"Authorization": f"Bearer {security.token}"}
    assert (await anon.get("/api/info", headers=bearer)).status_code == 200
    # ?token= in an /api URL would leak into logs and history: it is not accepted there.
    for path in ("/api/info", "/api/sessions", "/api/events"):
        refused = await anon.get(path, params={"token": security.token})
        assert refused.status_code == 401, path
    assert anon.cookies.get(security.token_cookie) is None
    page = await anon.get("/", params={"token": security.token})
    assert page.status_code == 303  # the page load that sets the cookie
    assert (await anon.get("/api/info")).status_code == 200


async def test_first_visit_moves_the_token_into_cookies_and_out_of_the_url(
    anon: httpx.AsyncClient, security: SecurityConfig
) -> None:
    response = await anon.get("/memory", params={"token": security.token, "x": "1"})
    assert response.status_code == 303
    assert response.headers["location"] == "/memory?x=1"
    cookies = response.headers.get_list("set-cookie")
    token_cookie = next(c for c in cookies if c.startswith(security.token_cookie + "="))
    assert "HttpOnly" in token_cookie and "SameSite=Strict" in token_cookie
    csrf_cookie = next(c for c in cookies if c.startswith(security.csrf_cookie + "="))
    assert "HttpOnly" not in csrf_cookie and security.csrf in csrf_cookie

    # The cookie alone now authenticates pages and API reads.
    page = await anon.get("/memory")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert (await anon.get("/api/info")).status_code == 200


async def test_redirect_never_leaves_the_site(
    anon: httpx.AsyncClient, security: SecurityConfig
) -> None:
    url = httpx.URL(BASE).copy_with(path="//evil.example/x", params={"token": security.token})
    assert url.path == "//evil.example/x"
    response = await anon.get(url)
    assert response.status_code == 303
    assert response.headers["location"] == "/evil.example/x"


async def _browser(anon: httpx.AsyncClient, security: SecurityConfig) -> httpx.AsyncClient:
    await anon.get("/", params={"token": security.token})
    assert security.token_cookie in anon.cookies
    return anon


async def test_state_change_with_cookie_needs_the_csrf_header(
    anon: httpx.AsyncClient, security: SecurityConfig
) -> None:
    browser = await _browser(anon, security)
    body = {"name": "s"}
    missing = await browser.post("/api/sessions", json=body)
    assert missing.status_code == 403 and "X-CSRF-Token" in missing.json()["error"]
    wrong = await browser.post("/api/sessions", json=body, headers={"X-CSRF-Token": "nope"})
    assert wrong.status_code == 403
    # The cookie value alone is not enough either: it must be the server's value.
    fake = {"X-CSRF-Token": "a" * len(security.csrf)}
    assert (await browser.post("/api/sessions", json=body, headers=fake)).status_code == 403
    ok = await browser.post("/api/sessions", json=body, headers={"X-CSRF-Token": security.csrf})
    assert ok.status_code == 201
    deleted = await browser.delete("/api/memories/mem_x", headers={"X-CSRF-Token": security.csrf})
    assert deleted.status_code == 404  # past the CSRF check, into the route


async def test_query_token_does_not_authenticate_a_write(
    anon: httpx.AsyncClient, security: SecurityConfig
) -> None:
    response = await anon.post(
        "/api/sessions", params={"token": security.token}, json={"name": "s"}
    )
    assert response.status_code == 401


async def test_bearer_requests_need_no_csrf_but_a_foreign_origin_is_refused(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.post("/api/sessions", json={"name": "s"})).status_code == 201
    foreign = await client.post(
        "/api/sessions", json={"name": "t"}, headers={"Origin": "http://evil.example"}
    )
    assert foreign.status_code == 403
    same = await client.post(
        "/api/sessions", json={"name": "t"}, headers={"Origin": f"http://localhost:{PORT}"}
    )
    assert same.status_code == 201


@pytest.mark.parametrize(
    "host", ["evil.example", f"evil.example:{PORT}", "127.0.0.1:1", "localhost", ""]
)
async def test_host_header_must_be_this_server(
    transport: httpx.ASGITransport, security: SecurityConfig, host: str
) -> None:
    headers = {"Authorization": f"Bearer {security.token}", "Host": host}
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as c:
        response = await c.get("/api/info", headers=headers)
    assert response.status_code == 400
    assert "not allowed" in response.json()["error"]


@pytest.mark.parametrize("host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"LOCALHOST:{PORT}"])
async def test_loopback_hosts_are_accepted(
    transport: httpx.ASGITransport, security: SecurityConfig, host: str
) -> None:
    headers = {"Authorization": f"Bearer {security.token}", "Host": host}
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as c:
        assert (await c.get("/api/info", headers=headers)).status_code == 200


def test_a_remote_host_is_allowed_only_when_configured() -> None:
    plain = SecurityConfig(port=80)
    remote = SecurityConfig(port=80, extra_hosts=("192.168.1.5",))
    assert "192.168.1.5:80" not in plain.allowed_hosts
    assert "192.168.1.5:80" in remote.allowed_hosts
    assert plain.token != remote.token and len(plain.token) >= 40
    assert plain.token_cookie == "kairox_token_80"


async def test_every_response_carries_the_security_headers(
    client: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    for response in (await client.get("/api/info"), await client.get("/"), await anon.get("/")):
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
