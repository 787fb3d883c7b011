"""The FastAPI application: routers, the security middleware, pages, static files, error edge.

Every ``KairoxError`` becomes ``{"error": "<one line>"}`` with a 4xx status; anything unexpected
becomes a 500 with a generic line. No stack trace ever reaches the client.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from kairox.core.errors import (
    ConfigError,
    ContextOverflow,
    InvalidInput,
    KairoxError,
    MemoryDecisionError,
    NotFound,
    SessionArchivedError,
    SessionBusy,
)
from kairox.web import routes_chat, routes_context, routes_events, routes_memory
from kairox.web.deps import WebContext, log
from kairox.web.limits import BodyLimitMiddleware
from kairox.web.models import ErrorOut
from kairox.web.security import SecurityMiddleware

STATIC = Path(__file__).parent / "static"
PAGES = {"/": "chat.html", "/memory": "memory.html", "/context": "context.html"}

_STATUS: tuple[tuple[type[KairoxError], int], ...] = (
    (NotFound, 404),
    (MemoryDecisionError, 409),
    (SessionBusy, 409),
    (SessionArchivedError, 409),
    (InvalidInput, 422),
    (ContextOverflow, 422),
    (ConfigError, 422),
)


def status_for(error: KairoxError) -> int:
    for kind, code in _STATUS:
        if isinstance(error, kind):
            return code
    return 400


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(ErrorOut(error=message).model_dump(), status_code=status)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:500]


async def _kairox_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, KairoxError)
    return _error(status_for(exc), _one_line(str(exc)))


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    where = ".".join(str(p) for p in first.get("loc", ()))
    return _error(422, _one_line(f"{where}: {first.get('msg', 'invalid value')}"))


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return _error(exc.status_code, _one_line(str(exc.detail)))


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.error("unexpected error in a web request", exc_info=exc)
    return _error(500, "internal error; see the server log")


def create_app(ctx: WebContext) -> FastAPI:
    """The web UI and its API for one facade, workspace and set of secrets."""
    app = FastAPI(
        title="Kairox",
        summary="Memory, retrieval and context assembly for LLM agents: the local web API.",
        version="1",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.kairox = ctx
    app.add_middleware(BodyLimitMiddleware)  # inside the security check: no token, no read
    app.add_middleware(SecurityMiddleware, config=ctx.security)
    app.add_exception_handler(KairoxError, _kairox_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
    for router in (routes_chat, routes_memory, routes_context, routes_events):
        app.include_router(router.router, responses={"4XX": {"model": ErrorOut}})

    for path, filename in PAGES.items():
        _add_page(app, path, STATIC / filename)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def _add_page(app: FastAPI, path: str, file: Path) -> None:
    async def page() -> FileResponse:
        return FileResponse(file, media_type="text/html")

    app.add_api_route(path, page, methods=["GET"], include_in_schema=False)


__all__ = ["create_app", "status_for"]
