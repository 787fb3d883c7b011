"""The error edge: KairoxError -> one JSON line with a 4xx; anything else -> a generic 500."""

from __future__ import annotations

import httpx
import pytest

from kairox.app import AppFacade
from kairox.core.errors import (
    ConfigError,
    ContextOverflow,
    InvalidInput,
    MemoryDecisionError,
    ModelError,
    NotFound,
    SessionBusy,
)
from kairox.core.records import MemoryRecord
from kairox.web import SecurityConfig, WebContext, create_app
from kairox.web.app import status_for


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotFound("memory", "m"), 404),
        (MemoryDecisionError("m", "rejected", "approve"), 409),
        (SessionBusy("s", "pid 1"), 409),
        (InvalidInput("bad"), 422),
        (ContextOverflow(10, 5, window=8, headroom=3), 422),
        (ConfigError("bad", key="k"), 422),
        (ModelError("scripted", "boom"), 400),
    ],
)
def test_every_kairox_error_maps_to_a_4xx(error: Exception, status: int) -> None:
    assert isinstance(error, Exception)
    assert status_for(error) == status  # type: ignore[arg-type]


async def test_a_kairox_error_from_the_facade_is_one_json_line(
    client: httpx.AsyncClient, facade: AppFacade, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def busy(memory_id: str, *, workspace: object = None) -> MemoryRecord:
        raise SessionBusy("main", "pid 42\nwith a second line")

    monkeypatch.setattr(facade.memory, "show", busy)
    response = await client.get("/api/memories/mem_x")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error.startswith("session busy: 'main'") and "\n" not in error


async def test_unexpected_errors_are_a_generic_500_without_a_trace(
    facade: AppFacade, workspace: object, security: SecurityConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(memory_id: str, *, workspace: object = None) -> MemoryRecord:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(facade.memory, "show", broken)
    ctx = WebContext(facade=facade, workspace=workspace, security=security)  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=create_app(ctx), raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {security.token}"}
    async with httpx.AsyncClient(
        transport=transport, base_url=f"http://127.0.0.1:{security.port}", headers=headers
    ) as c:
        response = await c.get("/api/memories/mem_x")
    assert response.status_code == 500
    assert response.json() == {"error": "internal error; see the server log"}
    assert "secret" not in response.text and "Traceback" not in response.text


async def test_unknown_routes_and_methods_answer_in_the_same_shape(
    client: httpx.AsyncClient,
) -> None:
    missing = await client.get("/api/nothing")
    assert missing.status_code == 404 and missing.json() == {"error": "Not Found"}
    wrong = await client.put("/api/info")
    assert wrong.status_code == 405 and wrong.json() == {"error": "Method Not Allowed"}


async def test_bad_json_is_a_422_line(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/api/sessions", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert "\n" not in response.json()["error"]


async def test_openapi_schema_is_typed(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/api/openapi.json")).json()
    paths = schema["paths"]
    assert "/api/memories/{memory_id}/approve" in paths
    ok = paths["/api/memories/{memory_id}"]["get"]["responses"]["200"]
    assert ok["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MemoryRecord"
    }
    stream = paths["/api/sessions/{name}/messages"]["post"]["responses"]["200"]
    assert "text/event-stream" in stream["content"]
    assert "ErrorOut" in schema["components"]["schemas"]
    # No free-form objects: every response body has a named schema or a typed list.
    for path, operations in paths.items():
        for method, op in operations.items():
            body = op["responses"].get("200", op["responses"].get("201", {}))
            content = body.get("content", {}).get("application/json")
            if content is not None:
                assert content["schema"] not in ({}, {"type": "object"}), (path, method)
